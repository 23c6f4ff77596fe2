/**
 * The rate limiter's Redis connection (rate-limits.module.ts), which the health report probes as well
 * (health/health-reporter.ts). A file of its own, so importing the token loads no module.
 */
export const GATEWAY_REDIS = Symbol('GATEWAY_REDIS');
