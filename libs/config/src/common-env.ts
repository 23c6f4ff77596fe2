import { z } from 'zod';

const perDeploymentSchemas = new WeakSet<z.ZodType>();

/**
 * Marks a variable whose default serves a developer machine only (a 127.0.0.1 address, the local object
 * store's keys, the development issuer…): with `NODE_ENV=production` loadConfig requires it to be set.
 */
export function perDeployment<T extends z.ZodType>(schema: T): T {
  perDeploymentSchemas.add(schema);
  return schema;
}

/** Whether the variable must be set in production (see perDeployment). */
export const isPerDeployment = (schema: z.ZodType): boolean => perDeploymentSchemas.has(schema);

/** A TCP port, given as a string in the environment. */
export const port = (fallback: number) => z.coerce.number().int().min(1).max(65535).default(fallback);

/** The longest a Node timer waits: a longer delay is set to 1 ms (with only a TimeoutOverflowWarning). */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * A positive duration in milliseconds, at most MAX_TIMER_MS: each is a timer's delay or a timeout, and
 * one past it fired at once (a statement timeout failed every query, a shutdown grace dropped the work
 * in flight).
 */
export const millis = (fallback: number) =>
  z.coerce
    .number()
    .int()
    .positive()
    .max(MAX_TIMER_MS, { message: `must be at most ${MAX_TIMER_MS} (about 24.8 days), the longest a timer waits` })
    .default(fallback);

/** A URL with one of the given schemes. */
export const urlWithScheme = (schemes: string[], fallback: string) =>
  z
    .string()
    .default(fallback)
    .refine(
      (value) => {
        try {
          return schemes.includes(new URL(value).protocol.replace(/:$/, ''));
        } catch {
          return false;
        }
      },
      { message: `must be a URL with scheme ${schemes.join(' or ')}` },
    );

/** `true`/`false`/`1`/`0` from the environment. */
export const flag = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0'])
    .default(fallback ? 'true' : 'false')
    .transform((value) => value === 'true' || value === '1');

/** `host:port` of a gRPC server, or a comma-separated list of IPv4 `ip:port` (balanced round-robin). */
export const grpcAddress = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .refine(
      (value) =>
        /^(dns:\/\/\/)?[\w.-]+:\d{1,5}$/.test(value) ||
        value.split(',').every((part) => /^\d{1,3}(\.\d{1,3}){3}:\d{1,5}$/.test(part.trim())),
      { message: 'must be host:port, dns:///host:port, or ip:port,ip:port,…' },
    );

/** The trace exporters OpenTelemetry's Node SDK sets up from OTEL_TRACES_EXPORTER. */
const TRACE_EXPORTERS: ReadonlySet<string> = new Set(['otlp', 'zipkin', 'console', 'none']);

const otlpProtocol = z.enum(['grpc', 'http/json', 'http/protobuf']).optional();

/**
 * The OpenTelemetry variables that choose where traces go (libs/observability, tracing.ts). The SDK
 * only logs a warning for a value it does not know and then traces nothing (an exporter) or falls back
 * to another protocol: a typo must stop the process and name the variable, like any setting.
 */
const tracingEnv = {
  OTEL_TRACES_EXPORTER: z
    .string()
    .optional()
    .refine(
      (value) =>
        value === undefined ||
        value
          .split(',')
          .map((name) => name.trim())
          .every((name) => TRACE_EXPORTERS.has(name)),
      { message: `must be a comma-separated list of ${[...TRACE_EXPORTERS].join(', ')}` },
    ),
  OTEL_EXPORTER_OTLP_PROTOCOL: otlpProtocol,
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: otlpProtocol,
};

/** Settings every process reads. */
export const commonEnv = {
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  REGION: perDeployment(z.string().min(1).default('local-1')),
  BIND_HOST: perDeployment(z.string().min(1).default('127.0.0.1')),
  PROTO_DIR: z.string().optional(),
  GRPC_DEADLINE_MS: millis(2000),
  ...tracingEnv,
};

export const grpcAddresses = {
  IDENTITY_GRPC_ADDR: perDeployment(grpcAddress('127.0.0.1:50051')),
  AUTH_GRPC_ADDR: perDeployment(grpcAddress('127.0.0.1:50052')),
  PLATFORM_GRPC_ADDR: perDeployment(grpcAddress('127.0.0.1:50053')),
};

export const redisUrl = {
  REDIS_URL: perDeployment(urlWithScheme(['redis', 'rediss'], 'redis://127.0.0.1:6379')),
  /** Prefix of every key this installation writes, so several can share one Redis. */
  REDIS_KEY_PREFIX: z.string().default(''),
};
export const natsUrl = { NATS_URL: perDeployment(urlWithScheme(['nats', 'tls'], 'nats://127.0.0.1:4222')) };

export const objectStorageEnv = {
  S3_ENDPOINT: perDeployment(urlWithScheme(['http', 'https'], 'http://127.0.0.1:9000')),
  S3_REGION: perDeployment(z.string().min(1).default('us-east-1')),
  S3_BUCKET: perDeployment(z.string().min(3).default('account-platform')),
  /** The defaults are the local object store's (tools/dev-servers/object-storage.mjs). */
  S3_ACCESS_KEY_ID: perDeployment(z.string().min(1).default('S3RVER')),
  S3_SECRET_ACCESS_KEY: perDeployment(z.string().min(1).default('S3RVER')),
  S3_FORCE_PATH_STYLE: flag(true),
};

/** A PostgreSQL URL whose default points at the local server and the service's own database. */
export const databaseUrl = (database: string) =>
  perDeployment(urlWithScheme(['postgres', 'postgresql'], `postgresql://postgres@127.0.0.1:5432/${database}`));

/**
 * Named prepared statements on the service's database connections (`pgAdapter`, libs/database). Off
 * only behind a connection pooler that hands one session's statements to another (PgBouncer in
 * transaction mode before 1.21, or without `max_prepared_statements`).
 */
export const preparedStatementsEnv = { DATABASE_PREPARED_STATEMENTS: flag(true) };

/**
 * How long a statement may wait for the database's answer: then it fails (503) and its connection is
 * closed, so a connection the server stopped answering on (a failover, a partition) is replaced.
 */
export const queryTimeoutEnv = { DATABASE_QUERY_TIMEOUT_MS: millis(10_000) };

/** Access tokens: who issues them and for whom; every verifier checks both. */
export const tokenEnv = {
  /**
   * A URL without query or fragment (RFC 8414 §2): the gateway's discovery document builds every
   * endpoint on it, and clients compare it with the `iss` they get.
   */
  TOKEN_ISSUER: perDeployment(
    urlWithScheme(['http', 'https'], 'http://127.0.0.1:8080').refine((value) => !/[?#]/.test(value), {
      message: 'must have no query or fragment',
    }),
  ),
  TOKEN_AUDIENCE: z.string().min(1).default('account-platform'),
};

/**
 * Token revocations (libs/revocation), which every process that verifies tokens holds in memory:
 * stored in Redis, announced on NATS, caught up from Redis every REVOCATION_RESYNC_MS.
 */
export const revocationEnv = {
  ...redisUrl,
  ...natsUrl,
  REVOCATION_RESYNC_MS: millis(1000),
};

/**
 * Development value of the secret the gateway authenticates to auth with. Anyone can read it here:
 * production must set its own GATEWAY_CLIENT_SECRET (required there, like every per-deployment value).
 */
export const DEV_GATEWAY_CLIENT_SECRET = 'dev-only-gateway-client-secret-not-for-production';

/**
 * The gateway's service identity, shared by the gateway and auth: the gateway trades the secret for a
 * short-lived access token with the scope `internal:gateway` (client_credentials of the built-in
 * client `gateway`), and auth takes client attributes (IP, device, user agent) only from calls carrying it.
 */
export const gatewayIdentityEnv = {
  GATEWAY_CLIENT_SECRET: perDeployment(z.string().min(32).default(DEV_GATEWAY_CLIENT_SECRET)),
};
