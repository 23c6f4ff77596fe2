import { DomainError, toProblemDocument } from '@acct/problem';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { OpenAPIObject } from '@nestjs/swagger';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { Registry } from 'prom-client';

import { loadGatewayConfig } from '../config';
import { GatewayModule } from '../gateway.module';
import { RouteTable } from '../http/route-table';
import { buildOpenApiDocument, toOpenApi31 } from './openapi-document';

type Json = Record<string, unknown>;

/** Every object in the document with its JSON pointer. */
function* walk(value: unknown, pointer = ''): Generator<[string, Json]> {
  if (typeof value !== 'object' || value === null) return;
  if (!Array.isArray(value)) yield [pointer, value as Json];
  for (const [key, child] of Object.entries(value)) {
    yield* walk(child, `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`);
  }
}

const resolve = (document: unknown, ref: string): unknown =>
  ref
    .slice(2)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>((node, key) => (node as Json | undefined)?.[key], document);

/** The schemas the document holds: components, bodies, parameters, headers and responses. */
function* schemasOf(document: OpenAPIObject): Generator<[string, Json]> {
  for (const [pointer, node] of walk(document)) {
    if (
      /\/components\/schemas\/[^/]+$/.test(pointer) ||
      (/\/schema$/.test(pointer) && !pointer.includes('/schemas/'))
    ) {
      yield [pointer, node];
    }
  }
}

const OPERATION_METHODS = ['get', 'put', 'post', 'delete', 'patch'];

/** JSON Schema 2020-12's formats and OpenAPI 3.1's own. */
const KNOWN_FORMATS = new Set([
  ...['date-time', 'date', 'time', 'duration', 'email', 'idn-email', 'hostname', 'idn-hostname'],
  ...['ipv4', 'ipv6', 'uri', 'uri-reference', 'iri', 'iri-reference', 'uuid', 'uri-template'],
  ...['json-pointer', 'relative-json-pointer', 'regex'],
  ...['int32', 'int64', 'float', 'double', 'password'],
]);

/** A gateway behind a proxy's prefix (README "Sign in from a browser app"). */
const ISSUER = 'https://example.com/accounts';

describe('the OpenAPI document', () => {
  let app: NestFastifyApplication;
  let document: OpenAPIObject;
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));

  beforeAll(async () => {
    // The real gateway module, so every controller it has is in the document; nothing is started.
    app = await NestFactory.create<NestFastifyApplication>(
      GatewayModule.forRoot(loadGatewayConfig({}), new RouteTable(), new Registry()),
      new FastifyAdapter(),
      { logger: false },
    );
    document = JSON.parse(JSON.stringify(buildOpenApiDocument(app, ISSUER))) as OpenAPIObject;
    ajv.addSchema(document, 'openapi.json');
  });

  afterAll(async () => {
    await app?.close();
  });

  const operations = () =>
    Object.entries(document.paths).flatMap(([path, item]) =>
      OPERATION_METHODS.filter((method) => (item as Json)[method]).map((method) => ({
        path,
        method,
        operation: (item as Json)[method] as Json & { responses: Record<string, Json> },
      })),
    );

  it('is OpenAPI 3.1 with an info object and only the /v2 API and the RFC 8414 metadata', () => {
    expect(document.openapi).toMatch(/^3\.1\.\d+$/);
    expect(document.info).toMatchObject({
      title: expect.any(String),
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
    });
    expect(Object.keys(document.paths).length).toBeGreaterThan(0);
    for (const path of Object.keys(document.paths)) {
      expect(path).toMatch(/^\/v2\/|^\/\.well-known\/oauth-authorization-server$/);
    }
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining([
        '/v2/auth/token',
        '/v2/auth/jwks',
        '/v2/auth/authorize',
        '/.well-known/oauth-authorization-server',
        '/v2/users',
        '/v2/users/me',
        '/v2/users/{id}',
        '/v2/users/me/password',
        '/v2/users/{id}/reset-password',
        '/v2/system/health',
        '/v2/system/rate-limits',
        '/v2/system/quota',
      ]),
    );
  });

  /**
   * Swagger UI's "Try it out" (and any client generated from the document) sends an operation to the
   * server named here, resolved against the document's URL; without one, to the host's root, which
   * behind a proxy's prefix is not the gateway.
   */
  it("names the issuer's path as its server, or the root for an issuer without one", () => {
    expect(document.servers).toEqual([{ url: '/accounts', description: expect.any(String) }]);
    const atRoot = buildOpenApiDocument(app, 'https://example.com');
    expect(atRoot.servers).toEqual([{ url: '/', description: expect.any(String) }]);
  });

  it('gives every operation a unique id, responses with descriptions and a 2xx', () => {
    const ids = operations().map(({ operation }) => operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const { operation, path, method } of operations()) {
      expect({ path, method, id: typeof operation.operationId }).toEqual({ path, method, id: 'string' });
      const statuses = Object.keys(operation.responses);
      expect(statuses.some((status) => status.startsWith('2'))).toBe(true);
      for (const [status, response] of Object.entries(operation.responses)) {
        expect(status).toMatch(/^[1-5]\d\d$/);
        expect(typeof response.description).toBe('string');
      }
    }
  });

  it("documents the authorization endpoint's 400 as its error page only: the route answers a control character itself", () => {
    const authorize = operations().find(({ path, method }) => path === '/v2/auth/authorize' && method === 'get');
    const badRequest = authorize?.operation.responses['400'] as { content: Record<string, unknown> };
    expect(Object.keys(badRequest.content)).toEqual(['text/html']);
    const signIn = operations().find(({ path, method }) => path === '/v2/auth/authorize' && method === 'post');
    expect(JSON.stringify(signIn?.operation.responses['400'])).toContain('validation_failed');
  });

  it('names a path parameter for every template segment', () => {
    for (const { path, operation } of operations()) {
      const templated = [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]).sort();
      const parameters = ((operation.parameters ?? []) as Json[])
        .filter((parameter) => parameter.in === 'path')
        .map((parameter) => parameter.name)
        .sort();
      expect({ path, parameters }).toEqual({ path, parameters: templated });
    }
  });

  it('resolves every $ref inside the document', () => {
    for (const [pointer, node] of walk(document)) {
      if (typeof node.$ref === 'string') {
        expect({ pointer, ref: node.$ref, found: resolve(document, node.$ref) !== undefined }).toEqual({
          pointer,
          ref: node.$ref,
          found: true,
        });
      }
    }
  });

  it('holds only valid JSON Schema 2020-12 schemas, without OpenAPI 3.0 idioms', () => {
    let count = 0;
    for (const [pointer, schema] of schemasOf(document)) {
      count += 1;
      const valid = ajv.validateSchema(schema);
      expect({ pointer, errors: valid ? null : ajv.errors }).toEqual({ pointer, errors: null });
    }
    expect(count).toBeGreaterThan(20);
    for (const [pointer, node] of walk(document)) {
      expect({ pointer, nullable: node.nullable }).toEqual({ pointer, nullable: undefined });
      expect({ pointer, bound: typeof node.exclusiveMinimum }).not.toEqual({ pointer, bound: 'boolean' });
      // Clients' validators ignore formats they do not know (zod renders some of its own checks so).
      if (typeof node.format === 'string' && typeof node.type === 'string') {
        expect({ pointer, format: node.format, known: KNOWN_FORMATS.has(node.format) }).toEqual({
          pointer,
          format: node.format,
          known: true,
        });
      }
    }
  });

  it('documents security with schemes that exist, scopes on protected routes, none on public ones', () => {
    const schemes = Object.keys(document.components?.securitySchemes ?? {});
    const security = Object.fromEntries(
      operations().map(({ operation }) => [operation.operationId, operation.security]),
    );
    for (const requirement of Object.values(security).flat() as Json[]) {
      for (const name of Object.keys(requirement)) expect(schemes).toContain(name);
    }
    expect(security).toMatchObject({
      createUser: [{ accessToken: ['users:write'] }],
      getUser: [{ accessToken: ['users:read'] }],
      getQuota: [{ accessToken: ['system:read'] }],
      issueToken: [],
      getHealth: [],
      setPassword: [{ oneTimeToken: [] }],
    });
    expect(document.components?.securitySchemes?.accessToken).toMatchObject({
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
    });
  });

  it('documents the Retry-After of a 409 idempotency_key_in_use (the first request still running)', () => {
    const createUser = operations().find(({ path, method }) => path === '/v2/users' && method === 'post');
    expect(createUser?.operation.responses['409']?.headers).toHaveProperty('Retry-After');
  });

  it('documents 429 with Retry-After and the rate-limit headers on every answer', () => {
    for (const { operation } of operations()) {
      expect(operation.responses['429']?.headers).toHaveProperty('Retry-After');
      for (const response of Object.values(operation.responses)) {
        expect(Object.keys(response.headers as Json)).toEqual(
          expect.arrayContaining(['X-Request-Id', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']),
        );
      }
    }
  });

  it("documents 429 quota_exceeded (the org's daily API requests) where a token counts, not on the token endpoint nor the org's own limits", () => {
    const codesOf429 = (path: string, method: string) =>
      (
        (
          ((document.paths[path] as Json)[method] as Json & { responses: Record<string, Json> }).responses['429']
            .content as Json
        )['application/problem+json'] as { schema: { properties: { code: { enum: string[] } } } }
      ).schema.properties.code.enum;
    expect(codesOf429('/v2/users', 'post')).toEqual(['rate_limited', 'quota_exceeded']);
    expect(codesOf429('/v2/users/{id}', 'get')).toContain('quota_exceeded');
    expect(codesOf429('/v2/auth/token', 'post')).not.toContain('quota_exceeded');
    expect(codesOf429('/v2/system/quota', 'get')).toEqual(['rate_limited']);
    expect(codesOf429('/v2/system/rate-limits', 'get')).toEqual(['rate_limited']);
  });

  it('documents both bodies of the token endpoint and the problem answers it gives', () => {
    const token = (document.paths['/v2/auth/token'] as Json).post as Json & { responses: Record<string, Json> };
    expect(Object.keys((token.requestBody as Json).content as Json).sort()).toEqual([
      'application/json',
      'application/x-www-form-urlencoded',
    ]);
    expect(token.responses['401'].content).toHaveProperty(['application/problem+json']);
    const validate = ajv.compile({
      $ref: 'openapi.json#/paths/~1v2~1auth~1token/post/responses/400/content/application~1problem+json/schema',
    });
    const invalidGrant = new DomainError('invalid_grant', 'The credentials are invalid.', {
      extensions: { error: 'invalid_grant', error_description: 'The credentials are invalid.' },
    });
    expect(validate(toProblemDocument(invalidGrant, 'req-1'))).toBe(true);
    expect(validate(toProblemDocument(new DomainError('email_taken', 'taken', { status: 400 }), 'req-1'))).toBe(false);
  });

  it('documents 503 on every operation that takes an access token: one naming a key not yet read needs auth', () => {
    const without503 = operations()
      .filter(({ operation }) => (operation.security as unknown[] | undefined)?.length)
      .filter(({ operation }) => !operation.responses['503'])
      .map(({ method, path }) => `${method.toUpperCase()} ${path}`);
    expect(without503).toEqual([]);
  });

  it("documents the defaults interface §4.1 gives a user creation's optional fields", () => {
    const body = (document.components?.schemas as Record<string, Json>).CreateUserRequest as Json & {
      properties: Record<string, Json & { properties?: Record<string, Json> }>;
    };
    expect(body.properties.roles.default).toEqual(['member']);
    expect(body.properties.send_activation.default).toBe(true);
    expect(body.properties.profile.properties?.locale.default).toBe('zh-CN');
    expect(body.properties.profile.properties?.timezone.default).toBe('Asia/Shanghai');
  });

  it('describes problem documents exactly as libs/problem builds them', () => {
    const validate = ajv.compile({ $ref: 'openapi.json#/components/schemas/Problem' });
    const withErrors = new DomainError('validation_failed', 'The request has invalid fields.', {
      errors: [{ field: 'profile.timezone', message: 'must be an IANA time zone' }],
    });
    expect(validate(toProblemDocument(withErrors, 'req-1'))).toBe(true);
    expect(validate({ ...toProblemDocument(withErrors, 'req-1'), code: 'no_such_code' })).toBe(false);
  });
});

describe('toOpenApi31', () => {
  it('rewrites OpenAPI 3.0 nullable and boolean bounds as JSON Schema 2020-12', () => {
    expect(
      toOpenApi31({
        type: 'object',
        properties: {
          nullable: { type: 'string', nullable: true },
          count: { type: 'integer', minimum: 0, exclusiveMinimum: true },
          user: { $ref: '#/components/schemas/User', nullable: true },
        },
      }),
    ).toEqual({
      type: 'object',
      properties: {
        nullable: { type: ['string', 'null'] },
        count: { type: 'integer', exclusiveMinimum: 0 },
        user: { anyOf: [{ $ref: '#/components/schemas/User' }, { type: 'null' }] },
      },
    });
  });
});
