import {
  commonEnv,
  ConfigError,
  databaseUrl,
  DEV_GATEWAY_CLIENT_SECRET,
  gatewayIdentityEnv,
  grpcAddresses,
  loadConfig,
  millis,
  perDeployment,
  port,
  preparedStatementsEnv,
  queryTimeoutEnv,
  revocationEnv,
  tokenEnv,
} from '@acct/config';
import { z } from 'zod';

/** Whole seconds, given as a string in the environment. */
const seconds = (fallback: number, min = 1) => z.coerce.number().int().min(min).default(fallback);

/**
 * Development key for encrypting signing keys at rest. Anyone can read it here: production must set
 * its own AUTH_KEY_ENCRYPTION_KEY (start-up refuses this one when NODE_ENV=production).
 */
export const DEV_KEY_ENCRYPTION_KEY = 'ZGV2LW9ubHkta2V5LWVuY3J5cHRpb24ta2V5LTMyYiE=';

/** 32 bytes, base64: the AES-256-GCM key for private signing keys stored in the database. */
const keyEncryptionKey = perDeployment(
  z
    .string()
    .default(DEV_KEY_ENCRYPTION_KEY)
    .refine((value) => Buffer.from(value, 'base64').length === 32, { message: 'must be 32 bytes, base64-encoded' }),
);

export const authEnv = {
  ...commonEnv,
  ...grpcAddresses,
  ...tokenEnv,
  ...revocationEnv,
  ...gatewayIdentityEnv,
  AUTH_DATABASE_URL: databaseUrl('auth'),
  ...preparedStatementsEnv,
  ...queryTimeoutEnv,
  AUTH_GRPC_PORT: port(50052),
  AUTH_OPS_PORT: port(9082),
  /** Lifetime of access tokens (interface §2.2: 2 hours). */
  ACCESS_TOKEN_TTL_SECONDS: seconds(7200),
  /** Lifetime of each refresh token (interface §5: 30 days). */
  REFRESH_TOKEN_TTL_SECONDS: seconds(2_592_000),
  /** How long a used refresh token keeps working after its first use (interface §5: 5 s). */
  REFRESH_GRACE_SECONDS: seconds(5, 0),
  /**
   * How long a registered client read by a token request is kept in memory; a rotation or deletion
   * drops it everywhere at once by a NATS notice, this bounds it when a notice is lost.
   */
  CLIENT_CACHE_TTL_MS: millis(1000),
  /** The built-in public client a password grant without `client_id` is issued to. */
  DEFAULT_PUBLIC_CLIENT_ID: z.string().min(1).default('account-platform-web'),
  /** How often each instance rereads the signing keys, so all agree soon after a rotation elsewhere. */
  SIGNING_KEY_RELOAD_MS: millis(30_000).refine((value) => value < 60_000, {
    message: 'must stay below the 60 s a retired key outlives its tokens',
  }),
  AUTH_KEY_ENCRYPTION_KEY: keyEncryptionKey,
  /**
   * While AUTH_KEY_ENCRYPTION_KEY is changed (docs/runbook.md): the key it replaces, which still reads
   * what was encrypted under it until `reseal-secrets` has moved everything to the new one. Empty: none.
   * Only encryption at rest reads it; what is signed with keys derived from the key (device
   * credentials, sign-in seals) is accepted under the current one alone, since the old one may have leaked.
   */
  AUTH_KEY_ENCRYPTION_KEY_PREVIOUS: z
    .string()
    .default('')
    .refine((value) => value === '' || Buffer.from(value, 'base64').length === 32, {
      message: 'must be empty or 32 bytes, base64-encoded',
    }),
  /**
   * The issuer authenticator apps show for TOTP enrolments (the `otpauth://` URI's issuer). No colon:
   * the URI's label is `issuer:account`, split at its first colon (literal or %3A, Key URI format), so
   * "Acme: Prod" was shown as issuer "Acme" with the account " Prod:alice@…".
   */
  MFA_TOTP_ISSUER: z
    .string()
    .trim()
    .min(1)
    .max(64)
    .refine((issuer) => !issuer.includes(':'), { message: 'must not contain a colon' })
    .default('Account Platform'),
  /** Lifetime of the token auth mints for its own calls to identity. */
  SERVICE_TOKEN_TTL_SECONDS: seconds(60, 15),
};

export type AuthConfig = ReturnType<typeof loadAuthConfig>;

export function loadAuthConfig(env: NodeJS.ProcessEnv = process.env) {
  const config = loadConfig(authEnv, env);
  if (config.NODE_ENV !== 'production') return config;
  const development = [
    config.AUTH_KEY_ENCRYPTION_KEY === DEV_KEY_ENCRYPTION_KEY && 'AUTH_KEY_ENCRYPTION_KEY',
    config.GATEWAY_CLIENT_SECRET === DEV_GATEWAY_CLIENT_SECRET && 'GATEWAY_CLIENT_SECRET',
  ].filter((name): name is string => name !== false);
  if (development.length > 0) {
    throw new ConfigError(
      development.map((name) => `${name}: must be set in production (the default is for development)`),
    );
  }
  return config;
}

export const AUTH_CONFIG = Symbol('AUTH_CONFIG');
