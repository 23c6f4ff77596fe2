import { commonEnv, databaseUrl, grpcAddresses, loadConfig, natsUrl, port, tokenEnv } from '@acct/config';

export const identityEnv = {
  ...commonEnv,
  ...grpcAddresses,
  ...tokenEnv,
  ...natsUrl,
  IDENTITY_DATABASE_URL: databaseUrl('identity'),
  IDENTITY_GRPC_PORT: port(50051),
  IDENTITY_OPS_PORT: port(9081),
};

export type IdentityConfig = ReturnType<typeof loadIdentityConfig>;
export const loadIdentityConfig = (env: NodeJS.ProcessEnv = process.env) => loadConfig(identityEnv, env);
export const IDENTITY_CONFIG = Symbol('IDENTITY_CONFIG');
