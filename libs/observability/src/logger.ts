import { LoggerService } from '@nestjs/common';
import { isSpanContextValid, trace } from '@opentelemetry/api';
import pino, { LevelWithSilent, Logger } from 'pino';

import { currentRequestId } from './request-context';

/**
 * The fields that hold a secret, by every name a request, an answer or a gRPC message gives them: the
 * wire's snake_case and the camelCase grpc-js and the generated types hand over. `code` is not among
 * them: it is also a problem's error code, and an authorization code is only ever logged inside a
 * request (`codeVerifier` and the other fields of that request are).
 */
const SECRET_FIELDS = [
  'password',
  'secret',
  'token',
  'client_secret',
  'clientSecret',
  'refresh_token',
  'refreshToken',
  'access_token',
  'accessToken',
  'mfa_code',
  'mfaCode',
  'code_verifier',
  'codeVerifier',
  'csrf_token',
  'csrfToken',
  // An MFA enrolment's otpauth:// URI carries the TOTP secret; recovery codes are a set of passwords.
  'otpauth_uri',
  'otpauthUri',
  'codes',
  // Device credentials (the ceiling's exemption).
  'device_token',
  'deviceToken',
];

/** Paths whose values never reach a log line, whatever logs them: a secret field up to two levels down. */
export const REDACTED_PATHS = [
  ...SECRET_FIELDS.flatMap((field) => [field, `*.${field}`, `*.*.${field}`]),
  'headers.authorization',
  'headers.cookie',
  'headers["x-device-token"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-device-token"]',
];

/** The millisecond lineTime wrote last, and what it wrote. */
let lastTime = { at: Number.NaN, field: '' };

/**
 * pino's `isoTime` field (`,"time":"2026-11-27T06:43:09.038Z"`), formatted once a millisecond: a busy
 * gateway writes several access-log lines within one, and the formatting was 1.3 % of its time.
 */
export function lineTime(): string {
  const at = Date.now();
  if (at !== lastTime.at) lastTime = { at, field: `,"time":"${new Date(at).toISOString()}"` };
  return lastTime.field;
}

/** How every log line looks: JSON, `level`, `time`, `service`, the fields, `message`. */
export const lineFormat = (service: string, level: LevelWithSilent) => ({
  level,
  base: { service },
  messageKey: 'message',
  timestamp: lineTime,
  formatters: { level: (label: string) => ({ level: label }) },
});

/** JSON logs, one line an event, every line tagged with the service and the current request id. */
export function createLogger(service: string, level: LevelWithSilent, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      ...lineFormat(service, level),
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      mixin: () => {
        const requestId = currentRequestId();
        return { ...(requestId ? { request_id: requestId } : {}), ...traceIds() };
      },
    },
    destination,
  );
}

/** The current trace and span ids while tracing is on (see tracing.ts); nothing otherwise. */
function traceIds(): { trace_id?: string; span_id?: string } {
  const context = trace.getActiveSpan()?.spanContext();
  return context && isSpanContextValid(context) ? { trace_id: context.traceId, span_id: context.spanId } : {};
}

/** Lets Nest's own messages go through the same JSON logger. */
export class NestPinoLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, context?: string) {
    this.logger.info({ context }, String(message));
  }
  error(message: unknown, trace?: string, context?: string) {
    this.logger.error({ context, trace }, String(message));
  }
  warn(message: unknown, context?: string) {
    this.logger.warn({ context }, String(message));
  }
  debug(message: unknown, context?: string) {
    this.logger.debug({ context }, String(message));
  }
  verbose(message: unknown, context?: string) {
    this.logger.trace({ context }, String(message));
  }
  fatal(message: unknown, context?: string) {
    this.logger.fatal({ context }, String(message));
  }
}
