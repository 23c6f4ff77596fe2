import { ROLES } from '@acct/access-token';
import { ERROR_STATUS, ErrorCode, ProblemDocument } from '@acct/problem';
import { z } from 'zod';

import type { HealthReport } from '../health/health-reporter';
import type { QuotaResource } from '../quotas/quota.controller';
import type { TierResource } from '../rate-limits/rate-limits.controller';
import type { TokenSet } from '../tokens/token.controller';
import type { UserResource } from '../users/user.resource';
import { apiSchemas } from './api-schemas';

/**
 * What the public API answers, as zod schemas the OpenAPI document is generated from. Each one is
 * checked against the TypeScript type the controller returns (see `SchemasMatchTheirTypes` below),
 * so a field added to a response type without its schema does not compile, and the e2e test
 * validates real responses against them (unknown members refused).
 */

export const userResource = z
  .object({
    id: z.string().describe('Server-assigned identifier.'),
    email: z.email().describe('Login e-mail, lower-cased; globally unique.'),
    display_name: z.string().min(1).max(64).describe('1–64 Unicode code points.'),
    status: z.enum(['pending', 'active']),
    roles: z.array(z.enum(ROLES)).min(1),
    created_at: z.iso.datetime().describe('ISO 8601 UTC timestamp.'),
  })
  .strict()
  .register(apiSchemas, { id: 'User', description: 'A user account (interface §2.1).' });

export const tokenSet = z
  .object({
    access_token: z.string().describe('A JWT (RFC 9068, `typ: at+jwt`, ES256), valid 2 hours.'),
    refresh_token: z
      .string()
      .optional()
      .describe('Opaque, single use with rotation, valid 30 days. Not issued for client_credentials.'),
    token_type: z.literal('Bearer'),
    expires_in: z.int().positive().describe('Lifetime of the access token in seconds (7200).'),
    scope: z.string().describe('Granted scopes, space-separated.'),
  })
  .strict()
  .register(apiSchemas, {
    id: 'TokenSet',
    description: 'The token set of a successful token request (interface §2.2).',
  });

export const healthReport = z
  .object({
    status: z.enum(['healthy', 'degraded', 'down']),
    version: z.string().regex(/^\d+(\.\d+)+$/),
    region: z.string(),
    checks: z.array(
      z
        .object({
          component: z.string().describe('database, cache, object_storage, message_bus, identity, auth, platform.'),
          status: z.enum(['up', 'down']),
          latency_ms: z.number().nonnegative(),
        })
        .strict(),
    ),
    uptime_seconds: z.int().nonnegative(),
  })
  .strict()
  .register(apiSchemas, {
    id: 'HealthReport',
    description: 'The service and its dependencies (interface §2.3, contract §5).',
  });

export const rateLimitTiers = z
  .object({
    tiers: z.array(
      z
        .object({
          group: z.string().describe('Endpoint group, e.g. auth, users.read, users.write, system.read.'),
          limit: z.string().regex(/^\d+\/min$/),
          burst: z.int().positive(),
          scope: z.enum(['per-ip', 'per-token']),
        })
        .strict()
        .register(apiSchemas, { id: 'RateLimitTier' }),
    ),
    notice: z.string().describe('Exceeding a limit is answered with 429 and Retry-After.'),
  })
  .strict()
  .register(apiSchemas, {
    id: 'RateLimitTiers',
    description: "The caller's org's tier per endpoint group (interface §2.4).",
  });

export const QUOTA_DIMENSIONS = ['compute', 'storage', 'network', 'api'] as const;

export const quotaReport = z
  .object({
    org_id: z.string(),
    quotas: z.array(
      z
        .object({
          dimension: z.enum(QUOTA_DIMENSIONS),
          name: z.string(),
          used: z.number().nonnegative(),
          limit: z.number().nonnegative(),
          unit: z.string().describe('core, count, GB, req/day.'),
        })
        .strict()
        .register(apiSchemas, { id: 'Quota' }),
    ),
  })
  .strict()
  .register(apiSchemas, {
    id: 'QuotaReport',
    description: "The caller's org's quota limits and usage (interface §2.5).",
  });

export const oneTimeToken = z
  .object({
    token: z
      .string()
      .describe('One-time, 24-hour token of scope password:set: the bearer credential of POST /v2/users/me/password.'),
    expires_at: z.iso.datetime(),
  })
  .strict()
  .register(apiSchemas, { id: 'OneTimeToken' });

export const emptyObject = z.object({}).strict().register(apiSchemas, { id: 'Empty' });

export const jsonWebKeySet = z
  .object({
    keys: z.array(
      z
        .object({
          kty: z.string(),
          kid: z.string(),
          use: z.string().optional(),
          alg: z.string().optional(),
          crv: z.string().optional(),
          x: z.string().optional(),
          y: z.string().optional(),
        })
        .strict(),
    ),
  })
  .strict()
  .register(apiSchemas, { id: 'JsonWebKeySet', description: 'The public keys that verify access tokens (RFC 7517).' });

const ERROR_CODES = Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]];

/** RFC 9457 problem document exactly as `@acct/problem`'s `toProblemDocument` builds it (contract §1). */
export const problem = z
  .object({
    type: z.string().describe('urn:account-platform:problem:<code>'),
    title: z.string(),
    status: z.int().min(400).max(599),
    detail: z.string(),
    code: z.enum(ERROR_CODES).describe('Stable machine code: what clients switch on.'),
    request_id: z.string().describe('Also in the X-Request-Id header and in every log line of the request.'),
    errors: z
      .array(z.object({ field: z.string(), message: z.string() }).strict())
      .optional()
      .describe('Input errors: one per failing field, dotted path (validation_failed).'),
    error: z.string().optional().describe('RFC 6749 §5.2 error (token endpoint only).'),
    error_description: z.string().optional().describe('RFC 6749 §5.2 error description (token endpoint only).'),
  })
  .register(apiSchemas, { id: 'Problem', description: 'Every non-2xx answer (RFC 9457, application/problem+json).' });

type Equals<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** The schema's output is assignable to the type and has exactly its members. */
type Matches<Schema extends z.ZodType, Type> = [z.output<Schema>] extends [Type]
  ? Equals<keyof z.output<Schema>, keyof Type>
  : false;
type Assert<Check extends true> = Check;

/** Compile-time proof that the documented schemas and the controllers' return types agree. */
export type SchemasMatchTheirTypes = [
  Assert<Matches<typeof userResource, UserResource>>,
  Assert<Matches<typeof tokenSet, TokenSet>>,
  Assert<Matches<typeof healthReport, HealthReport>>,
  Assert<Matches<typeof rateLimitTiers, { tiers: TierResource[]; notice: string }>>,
  Assert<Matches<typeof quotaReport, { org_id: string; quotas: QuotaResource[] }>>,
  Assert<[z.output<typeof problem>] extends [ProblemDocument] ? true : false>,
];
