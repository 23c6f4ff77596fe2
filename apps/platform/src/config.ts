import {
  commonEnv,
  databaseUrl,
  grpcAddresses,
  loadConfig,
  millis,
  objectStorageEnv,
  port,
  preparedStatementsEnv,
  queryTimeoutEnv,
  revocationEnv,
  tokenEnv,
} from '@acct/config';

export const platformEnv = {
  ...commonEnv,
  ...grpcAddresses,
  ...tokenEnv,
  ...revocationEnv,
  ...objectStorageEnv,
  PLATFORM_DATABASE_URL: databaseUrl('platform'),
  ...preparedStatementsEnv,
  ...queryTimeoutEnv,
  PLATFORM_GRPC_PORT: port(50053),
  PLATFORM_OPS_PORT: port(9083),
  HEALTH_PROBE_INTERVAL_MS: millis(2000),
  HEALTH_PROBE_TIMEOUT_MS: millis(1000),
};

export type PlatformConfig = ReturnType<typeof loadPlatformConfig>;
export const loadPlatformConfig = (env: NodeJS.ProcessEnv = process.env) => loadConfig(platformEnv, env);
export const PLATFORM_CONFIG = Symbol('PLATFORM_CONFIG');
