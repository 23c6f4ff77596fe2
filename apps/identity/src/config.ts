import {
  commonEnv,
  ConfigError,
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

/**
 * The least argon2id work production accepts, memory × iterations in KiB: the weakest of OWASP's
 * equivalent configurations (7 MiB × 5; 19 MiB × 2, the default, is 38,912). Tests run with less.
 */
export const ARGON2_MIN_PRODUCTION_WORK = 7_168 * 5;

export type IdentityConfig = ReturnType<typeof loadIdentityConfig>;
export const loadIdentityConfig = (env: NodeJS.ProcessEnv = process.env) => {
  const config = loadConfig(identityEnv, env);
  // argon2 needs 8 KiB per lane (RFC 9106 §3.1): refused here by name, not by the first hash at start-up.
  if (config.ARGON2_MEMORY_KIB < 8 * config.ARGON2_PARALLELISM) {
    throw new ConfigError([
      `ARGON2_MEMORY_KIB: must be at least 8 × ARGON2_PARALLELISM (${8 * config.ARGON2_PARALLELISM})`,
    ]);
  }
  // A test's cheap setting copied into a deployment would store every password nearly unprotected.
  if (
    config.NODE_ENV === 'production' &&
    config.ARGON2_MEMORY_KIB * config.ARGON2_ITERATIONS < ARGON2_MIN_PRODUCTION_WORK
  ) {
    throw new ConfigError([
      `ARGON2_MEMORY_KIB × ARGON2_ITERATIONS: must be at least ${ARGON2_MIN_PRODUCTION_WORK} in production ` +
        '(OWASP: 19456 × 2, 12288 × 3, 9216 × 4 or 7168 × 5)',
    ]);
  }
  return config;
};
export const IDENTITY_CONFIG = Symbol('IDENTITY_CONFIG');
