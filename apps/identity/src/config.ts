import {
  commonEnv,
  databaseUrl,
  grpcAddresses,
  loadConfig,
  port,
  preparedStatementsEnv,
  queryTimeoutEnv,
  revocationEnv,
  tokenEnv,
} from '@acct/config';
import { z } from 'zod';

/** A positive whole number from the environment. */
const count = (fallback: number, min: number, max: number) =>
  z.coerce.number().int().min(min).max(max).default(fallback);

export const identityEnv = {
  ...commonEnv,
  ...grpcAddresses,
  ...tokenEnv,
  ...revocationEnv,
  IDENTITY_DATABASE_URL: databaseUrl('identity'),
  ...preparedStatementsEnv,
  ...queryTimeoutEnv,
  IDENTITY_GRPC_PORT: port(50051),
  IDENTITY_OPS_PORT: port(9081),
  /** argon2id cost; the defaults are the OWASP Password Storage Cheat Sheet minimum (m=19 MiB, t=2, p=1). */
  ARGON2_MEMORY_KIB: count(19_456, 8, 4_194_304),
  ARGON2_ITERATIONS: count(2, 1, 64),
  ARGON2_PARALLELISM: count(1, 1, 255),
};

export type IdentityConfig = ReturnType<typeof loadIdentityConfig>;
export const loadIdentityConfig = (env: NodeJS.ProcessEnv = process.env) => loadConfig(identityEnv, env);
export const IDENTITY_CONFIG = Symbol('IDENTITY_CONFIG');
