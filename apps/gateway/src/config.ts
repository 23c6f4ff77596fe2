import {
  commonEnv,
  ConfigError,
  DEV_GATEWAY_CLIENT_SECRET,
  flag,
  gatewayIdentityEnv,
  grpcAddresses,
  loadConfig,
  millis,
  port,
  revocationEnv,
  serviceVersion,
  tokenEnv,
} from '@acct/config';
import { z } from 'zod';

import { trustedProxies } from './http/trusted-proxies';

export const gatewayEnv = {
  ...commonEnv,
  ...grpcAddresses,
  ...tokenEnv,
  // REDIS_URL, REDIS_KEY_PREFIX (rate limits, API usage, revocations), NATS_URL (revocation notices).
  ...revocationEnv,
  // GATEWAY_CLIENT_SECRET: the gateway's own identity towards auth (backends/gateway-identity.ts).
  ...gatewayIdentityEnv,
  GATEWAY_PORT: port(8080),
  GATEWAY_OPS_PORT: port(9080),
  /** Comma-separated addresses/CIDRs whose X-Forwarded-For is believed. Empty: the socket address. */
  TRUSTED_PROXIES: z
    .string()
    .default('')
    .superRefine((value, context) => {
      // Checked here, so a typo is named at start-up like every other variable, not thrown by the HTTP server.
      try {
        trustedProxies(value);
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        context.addIssue({
          code: 'custom',
          message: `must be IP addresses or CIDR ranges, comma-separated (${reason})`,
        });
      }
    }),
  /** A rate-limit decision waits this long for Redis before the in-process fallback decides. */
  RATE_LIMIT_REDIS_TIMEOUT_MS: millis(100),
  /** How long the gateway keeps an org's tiers before asking the platform again. */
  RATE_LIMIT_TIERS_TTL_MS: millis(10_000),
  /** How long a request waits for the refresh of an org's expired tiers before the last known ones decide. */
  RATE_LIMIT_TIERS_REFRESH_WAIT_MS: millis(500),
  /**
   * The health report is measured again in the background this often; requests are answered from the
   * latest one (keep it below the platform's HEALTH_PROBE_INTERVAL_MS).
   */
  HEALTH_REPORT_REFRESH_MS: millis(1000),
  /**
   * A request's headers and body must have arrived within this long, else it is answered 408 and its
   * connection closed: a client that stops mid-body does not hold a connection for ever.
   */
  REQUEST_TIMEOUT_MS: millis(30_000),
  /** One log line per answered request (docs/configuration.md, Gateway). */
  ACCESS_LOG: flag(true),
};

export type GatewayConfig = ReturnType<typeof loadGatewayConfig>;
export function loadGatewayConfig(env: NodeJS.ProcessEnv = process.env) {
  const config = loadConfig(gatewayEnv, env);
  if (config.NODE_ENV === 'production' && config.GATEWAY_CLIENT_SECRET === DEV_GATEWAY_CLIENT_SECRET) {
    throw new ConfigError(['GATEWAY_CLIENT_SECRET: must be set in production (the default is for development)']);
  }
  return config;
}
export const GATEWAY_CONFIG = Symbol('GATEWAY_CONFIG');

/** The service version reported by health: the package version. */
export const SERVICE_VERSION = serviceVersion();
