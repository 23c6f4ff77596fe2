import { commonEnv, grpcAddresses, loadConfig, port, serviceVersion, tokenEnv } from '@acct/config';
import { z } from 'zod';

export const gatewayEnv = {
  ...commonEnv,
  ...grpcAddresses,
  ...tokenEnv,
  GATEWAY_PORT: port(8080),
  GATEWAY_OPS_PORT: port(9080),
  /** Comma-separated addresses/CIDRs whose X-Forwarded-For is believed. Empty: the socket address. */
  TRUSTED_PROXIES: z.string().default(''),
};

export type GatewayConfig = ReturnType<typeof loadGatewayConfig>;
export const loadGatewayConfig = (env: NodeJS.ProcessEnv = process.env) => loadConfig(gatewayEnv, env);
export const GATEWAY_CONFIG = Symbol('GATEWAY_CONFIG');

/** The service version reported by health: the package version. */
export const SERVICE_VERSION = serviceVersion();
