import './problem.schema';

import { API_QUOTA_EXEMPT_GROUPS } from '@acct/limits';
import { ERROR_STATUS, ErrorCode, PROBLEM_CONTENT_TYPE, TITLES } from '@acct/problem';
import { INestApplication } from '@nestjs/common';
import {
  DocumentBuilder,
  HeaderObject,
  OpenAPIObject,
  OperationObject,
  ReferenceObject,
  ResponseObject,
  SchemaObject,
  SwaggerModule,
} from '@nestjs/swagger';

import { SERVICE_VERSION } from '../config';
import { refusesControlCharacters } from '../http/control-characters';
import { routeDeclarations } from '../http/route-declarations';
import { issuerPath } from '../http/well-known';
import { PROBLEM_CODES } from './api.decorators';
import { componentSchemas, schemaRef } from './api-schemas';

export const OPENAPI_VERSION = '3.1.0';
export const ACCESS_TOKEN = 'accessToken';
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'] as const;

/** Headers on every answer of the gateway (contract §1, §2), in `components.headers`. */
const COMMON_HEADERS: Record<string, HeaderObject> = {
  'X-Request-Id': {
    description: "The request's id: the client's own when it sent a sane one, else generated. Also in the logs.",
    required: true,
    schema: { type: 'string', minLength: 1 },
  },
  'X-RateLimit-Limit': {
    description: "Capacity of the request's endpoint-group bucket (floor of rate per second × burst).",
    required: true,
    schema: { type: 'integer', minimum: 0 },
  },
  'X-RateLimit-Remaining': {
    description: 'Whole requests left in the bucket after this one.',
    required: true,
    schema: { type: 'integer', minimum: 0 },
  },
  'X-RateLimit-Reset': {
    description: 'Unix time (seconds) at which the bucket is full again.',
    required: true,
    schema: { type: 'integer', minimum: 0 },
  },
  'RateLimit-Policy': {
    description: 'draft-ietf-httpapi-ratelimit-headers: `"<group>";q=<capacity>;w=<seconds to refill>`.',
    required: true,
    schema: { type: 'string', pattern: '^"[a-z.]+";q=\\d+;w=\\d+$' },
  },
  RateLimit: {
    description: 'draft-ietf-httpapi-ratelimit-headers: `"<group>";r=<remaining>;t=<seconds until a token>`.',
    required: true,
    schema: { type: 'string', pattern: '^"[a-z.]+";r=\\d+;t=\\d+$' },
  },
};
const RETRY_AFTER: HeaderObject = {
  description: 'Seconds to wait before retrying (integer ≥ 1).',
  required: true,
  schema: { type: 'integer', minimum: 1 },
};
const WWW_AUTHENTICATE: HeaderObject = {
  description: 'RFC 6750 challenge, e.g. `Bearer realm="account-platform", error="invalid_token"`.',
  required: true,
  schema: { type: 'string', pattern: '^Bearer ' },
};
/**
 * RFC 6749 §5.2: a refused client is challenged with the scheme clients authenticate with (every
 * `401 invalid_client` of the token, revocation and introspection endpoints; tokens/token-request.ts).
 */
const CLIENT_CHALLENGE: HeaderObject = {
  description: 'RFC 6749 §5.2 / RFC 7617 challenge: `Basic realm="account-platform"`.',
  required: true,
  schema: { type: 'string', pattern: '^Basic ' },
};
const headerRef = (name: string): ReferenceObject => ({ $ref: `#/components/headers/${name}` });
/** The methods whose request body Fastify parses (GET's and HEAD's it never reads). */
const PARSED_BODY_METHODS: ReadonlySet<string> = new Set(['post', 'put', 'patch', 'delete', 'options']);
const BODY_REFUSALS: readonly ErrorCode[] = ['malformed_body', 'payload_too_large', 'unsupported_media_type'];

/**
 * The OpenAPI 3.1 document of the public API (`/v2/**`), generated from the gateway's controllers:
 * their routes and `@nestjs/swagger` decorators, the zod schemas behind `ApiJsonBody` /
 * `ApiJsonResponse` / `ApiProblems`, and the access decorators (`@Public`, `@RequireScope`), which
 * decide security and the 401/403 answers. Every operation also gets the rate-limit headers and 429.
 * Its server is the issuer's path: Swagger UI's "Try it out" sends a request there, resolved against
 * the document's URL; without one it went to the host's root, outside a proxy's prefix.
 */
export function buildOpenApiDocument(app: INestApplication, issuer: string): OpenAPIObject {
  const config = new DocumentBuilder()
    .setOpenAPIVersion(OPENAPI_VERSION)
    .setTitle('Account & platform service')
    .setDescription(
      'User accounts, OAuth-style tokens, health, rate-limit tiers and quotas. Every non-2xx answer is ' +
        'RFC 9457 problem+json (`Problem`) with a stable `code`; every answer carries `X-Request-Id` and ' +
        'the rate-limit headers. Human docs: `/docs`.',
    )
    .setVersion(SERVICE_VERSION)
    .addServer(issuerPath(issuer) || '/', "This gateway, under its issuer's path (a proxy's prefix) when it has one.")
    .addSecurity(ACCESS_TOKEN, {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
      description:
        'An access token from `POST /v2/auth/token` (RFC 9068 JWT, ES256, 2 hours). The operation lists ' +
        'the scope it needs; without the token the answer is 401 `unauthenticated`, without the scope 403 ' +
        '`insufficient_scope`.',
    })
    .addSecurity('oneTimeToken', {
      type: 'http',
      scheme: 'bearer',
      description: 'The one-time `password:set` token from the activation e-mail or the reset operation.',
    })
    .addTag('tokens', 'Token issuance and the keys that verify tokens')
    .addTag('users', 'User accounts, activation and password reset')
    .addTag('audit', "The org's login audit and admin-action audit (admins)")
    .addTag('system', 'Health, rate-limit tiers and quotas')
    .build();
  const document = SwaggerModule.createDocument(app, config, {
    operationIdFactory: (controller, method) => `${controller.replace(/Controller$/, '')}_${method}`,
  });
  const access = accessByOperation(app);
  for (const [path, item] of Object.entries(document.paths)) {
    if (!path.startsWith('/v2/') && !path.startsWith('/.well-known/')) {
      delete document.paths[path]; // pages such as /activate are not part of the API
      continue;
    }
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const routeAccess = access.get(`${method} ${path}`);
      if (!routeAccess) throw new Error(`no controller route for ${method.toUpperCase()} ${path}`);
      completeOperation(operation, routeAccess, method, path);
    }
  }
  document.components = {
    ...document.components,
    schemas: { ...document.components?.schemas, ...componentSchemas() },
    headers: { ...COMMON_HEADERS, 'Retry-After': RETRY_AFTER, 'WWW-Authenticate': WWW_AUTHENTICATE },
  };
  return toOpenApi31(document) as OpenAPIObject;
}

interface Access {
  isPublic: boolean;
  scope?: string;
  rateLimitGroup?: string;
}

/** `@Public()` / `@RequireScope()` of every route, by `<method> <OpenAPI path>`. */
function accessByOperation(app: INestApplication): Map<string, Access> {
  return new Map(
    routeDeclarations(app).map((route) => [
      `${route.method.toLowerCase()} ${route.path.replace(/:(\w+)/g, '{$1}')}`,
      { isPublic: route.isPublic, scope: route.scope, rateLimitGroup: route.rateLimitGroup },
    ]),
  );
}

function completeOperation(operation: OperationObject, access: Access, method: string, path: string) {
  const extensions = operation as unknown as Record<string, unknown>;
  const codes = new Set<ErrorCode>(extensions[PROBLEM_CODES] as ErrorCode[] | undefined);
  delete extensions[PROBLEM_CODES];
  // A control character in a path parameter, the query or the body is refused before any route runs
  // (http/control-characters.ts), except where the backend judges it (the token endpoint's parameters)
  // or the route does (the authorization request: its error page or a redirect to the client).
  if (refusesControlCharacters(method, path)) codes.add('validation_failed');
  // A body sent with any of these methods is parsed before the route runs, whether it reads one or not
  // (start-gateway.ts): not JSON (nor UTF-8), over 64 KiB, or of a media type no parser reads.
  if (PARSED_BODY_METHODS.has(method)) {
    for (const code of BODY_REFUSALS) codes.add(code);
  }
  if (!access.isPublic) {
    operation.security = [{ [ACCESS_TOKEN]: access.scope ? [access.scope] : [] }];
    codes.add('unauthenticated');
    if (access.scope) codes.add('insufficient_scope');
    // A token naming a key the gateway has not read yet (auth's newest) is verified once auth gives
    // its key set: 503 while auth does not answer, on every route that takes a token.
    codes.add('service_unavailable');
  } else {
    operation.security ??= [];
  }
  codes.add('rate_limited');
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
  // A request with an access token counts against its org's daily API requests quota: 429 once it is used up.
  if (!access.isPublic && !API_QUOTA_EXEMPT_GROUPS.has(access.rateLimitGroup ?? '')) {
    byStatus.get(429)?.push('quota_exceeded');
  }
  for (const [status, statusCodes] of byStatus) {
    const problems = problemResponse(status, statusCodes);
    const declared = operation.responses[status] as ResponseObject | undefined;
    if (declared?.content?.[PROBLEM_CONTENT_TYPE] || (declared && !declared.content)) {
      throw new Error(`${operation.operationId}: ${status} is documented twice`);
    }
    // A page's own answer of this status (the login page's 400, HTML) and the problems beside it.
    operation.responses[status] = declared
      ? {
          ...declared,
          description: `${declared.description} Or a problem: ${problems.description}`,
          headers: { ...problems.headers, ...declared.headers },
          content: { ...declared.content, ...problems.content },
        }
      : problems;
  }
  for (const response of Object.values(operation.responses) as ResponseObject[]) {
    response.headers = {
      ...Object.fromEntries(Object.keys(COMMON_HEADERS).map((name) => [name, headerRef(name)])),
      ...response.headers,
    };
  }
  operation.responses = Object.fromEntries(Object.entries(operation.responses).sort(([a], [b]) => a.localeCompare(b)));
}

function problemResponse(status: number, codes: ErrorCode[]): ResponseObject {
  const headers: Record<string, ReferenceObject | HeaderObject> = {};
  if (status === 429 || status === 503) headers['Retry-After'] = headerRef('Retry-After');
  else if (codes.includes('idempotency_key_in_use')) {
    headers['Retry-After'] = {
      ...RETRY_AFTER,
      description: 'With `idempotency_key_in_use` only: seconds until the first request may have finished.',
      required: false,
    };
  }
  if (codes.every((code) => code === 'unauthenticated' || code === 'insufficient_scope')) {
    headers['WWW-Authenticate'] = headerRef('WWW-Authenticate');
  }
  if (codes.every((code) => code === 'invalid_client')) headers['WWW-Authenticate'] = CLIENT_CHALLENGE;
  return {
    description: codes.map((code) => `\`${code}\`: ${TITLES[code]}`).join('; '),
    headers,
    content: {
      [PROBLEM_CONTENT_TYPE]: {
        schema: {
          allOf: [schemaRef('Problem')],
          properties: { status: { const: status }, code: { enum: codes } },
        } as SchemaObject,
      },
    },
  };
}

/**
 * @nestjs/swagger writes some OpenAPI 3.0 idioms even when told 3.1; rewrites them as JSON Schema
 * 2020-12: `nullable: true` becomes a `"null"` type, boolean exclusive bounds become numbers.
 */
export function toOpenApi31(value: unknown, isMap = false): unknown {
  if (Array.isArray(value)) return value.map((item) => toOpenApi31(item));
  if (typeof value !== 'object' || value === null) return value;
  if (isMap) {
    return Object.fromEntries(Object.entries(value).map(([key, child]) => [key, toOpenApi31(child)]));
  }
  const { nullable, exclusiveMinimum, exclusiveMaximum, ...rest } = value as Record<string, unknown>;
  const result: Record<string, unknown> = Object.fromEntries(
    Object.entries(rest).map(([key, child]) => [key, toOpenApi31(child, MAPS.has(key))]),
  );
  if (nullable === true) {
    if (typeof result.type === 'string') result.type = [result.type, 'null'];
    else if (Array.isArray(result.type)) result.type = [...new Set([...(result.type as string[]), 'null'])];
    else return { anyOf: [result, { type: 'null' }] };
  }
  if (typeof exclusiveMinimum === 'number') result.exclusiveMinimum = exclusiveMinimum;
  else if (exclusiveMinimum === true && typeof result.minimum === 'number') {
    result.exclusiveMinimum = result.minimum;
    delete result.minimum;
  }
  if (typeof exclusiveMaximum === 'number') result.exclusiveMaximum = exclusiveMaximum;
  else if (exclusiveMaximum === true && typeof result.maximum === 'number') {
    result.exclusiveMaximum = result.maximum;
    delete result.maximum;
  }
  return result;
}

/** Members whose value maps names to objects: a property named `nullable` is not the keyword. */
const MAPS = new Set([
  'paths',
  'properties',
  'patternProperties',
  '$defs',
  'schemas',
  'headers',
  'responses',
  'content',
  'securitySchemes',
  'examples',
  'dependentSchemas',
]);
