import { commonEnv, databaseUrl, grpcAddresses, loadConfig, natsUrl, port, tokenEnv } from '@acct/config';

export const authEnv = {
  ...commonEnv,
  ...grpcAddresses,
  ...tokenEnv,
  ...natsUrl,
  AUTH_DATABASE_URL: databaseUrl('auth'),
  AUTH_GRPC_PORT: port(50052),
  AUTH_OPS_PORT: port(9082),
};

export type AuthConfig = ReturnType<typeof loadAuthConfig>;
export const loadAuthConfig = (env: NodeJS.ProcessEnv = process.env) => loadConfig(authEnv, env);
export const AUTH_CONFIG = Symbol('AUTH_CONFIG');
