import type { NodeSDK } from '@opentelemetry/sdk-node';

import { valueWithin } from './time-limit';

/** Ops endpoints are scraped and probed all the time; traces of them would only be noise. */
const UNTRACED_PATHS = new Set(['/livez', '/readyz', '/metrics']);

/**
 * Query parameters whose value a server span must not keep (`url.query`): the one-time password:set
 * token of an activation or reset link (`GET /activate?token=…`) is a live credential for 24 hours, and
 * the credentials a client may put in a query although the gateway reads them only from headers and
 * bodies (RFC 6750 §2.3's `access_token`, a token request's fields): refused, they were still traced.
 */
const REDACTED_QUERY_PARAMS = [
  'token',
  'access_token',
  'refresh_token',
  'id_token',
  'client_secret',
  'password',
  'code',
  'code_verifier',
  'mfa_code',
  'mfa_ticket',
  'csrf_token',
  'device_token',
];

let sdk: NodeSDK | undefined;

/**
 * Tracing is off unless an OTLP endpoint or a traces exporter is configured (the standard
 * OpenTelemetry variables); `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none` keep it off.
 */
export function tracingEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED === 'true') return false;
  const exporter = env.OTEL_TRACES_EXPORTER?.trim();
  if (exporter) return exporter !== 'none';
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/**
 * Starts OpenTelemetry tracing (HTTP, gRPC, Prisma, pg, Redis spans, W3C trace context across
 * processes) when configured; otherwise loads nothing. Call it before the instrumented modules are
 * loaded: each main starts tracing first and imports the service afterwards.
 */
export async function startTracing(service: string, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  if (!tracingEnabled(env) || sdk) return;
  // Only traces: the SDK would otherwise also export metrics and logs over OTLP by default.
  env.OTEL_METRICS_EXPORTER ??= 'none';
  env.OTEL_LOGS_EXPORTER ??= 'none';
  const [
    { NodeSDK },
    { HttpInstrumentation },
    { GrpcInstrumentation },
    { PgInstrumentation },
    { IORedisInstrumentation },
    { PrismaInstrumentation },
  ] = await Promise.all([
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/instrumentation-http'),
    import('@opentelemetry/instrumentation-grpc'),
    import('@opentelemetry/instrumentation-pg'),
    import('@opentelemetry/instrumentation-ioredis'),
    import('@prisma/instrumentation'),
  ]);
  sdk = new NodeSDK({
    serviceName: env.OTEL_SERVICE_NAME ?? service,
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (request) => UNTRACED_PATHS.has((request.url ?? '').split('?')[0] ?? ''),
        redactedQueryParamsServer: REDACTED_QUERY_PARAMS,
      }),
      // The health service is polled every few hundred milliseconds by the platform's probes.
      new GrpcInstrumentation({ ignoreGrpcMethods: ['Check', 'Watch'] }),
      new PgInstrumentation(),
      new IORedisInstrumentation(),
      new PrismaInstrumentation(),
    ],
  });
  sdk.start();
}

/** Longest a shutdown waits for the last spans to reach the collector (one that is down retries). */
const FLUSH_TIMEOUT_MS = 2000;

/** Flushes the spans not yet exported; part of a graceful shutdown. */
export async function stopTracing(): Promise<void> {
  if (!sdk) return;
  const flushed = sdk.shutdown().catch(() => undefined);
  sdk = undefined;
  await valueWithin(flushed, FLUSH_TIMEOUT_MS, undefined);
}
