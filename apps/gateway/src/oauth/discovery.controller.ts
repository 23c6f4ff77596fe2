import { createHash } from 'node:crypto';

import { ROLE_DEFAULT_SCOPES } from '@acct/access-token';
import { Controller, Get, Inject, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';

import { Public } from '../auth/access.decorators';
import { GATEWAY_CONFIG, GatewayConfig } from '../config';
import { ifNoneMatchMatches } from '../http/conditional';
import { DISCOVERY_PATH, issuerBase } from '../http/well-known';
import { ApiJsonResponse, header } from '../openapi/api.decorators';
import { apiSchemas } from '../openapi/api-schemas';
import { RateLimited } from '../rate-limits/rate-limited.decorator';

export { DISCOVERY_PATH };

/** RFC 8414 §2: what this server really supports, and nothing else. */
export const authorizationServerMetadata = z
  .object({
    issuer: z.string().describe('The `iss` of every access token and of authorization responses (RFC 9207).'),
    authorization_endpoint: z.string(),
    token_endpoint: z.string(),
    jwks_uri: z.string(),
    revocation_endpoint: z.string(),
    introspection_endpoint: z.string(),
    grant_types_supported: z.array(z.string()),
    response_types_supported: z.array(z.string()),
    response_modes_supported: z.array(z.string()),
    code_challenge_methods_supported: z.array(z.string()),
    token_endpoint_auth_methods_supported: z.array(z.string()),
    revocation_endpoint_auth_methods_supported: z.array(z.string()),
    introspection_endpoint_auth_methods_supported: z.array(z.string()),
    scopes_supported: z.array(z.string()),
    authorization_response_iss_parameter_supported: z.boolean(),
    service_documentation: z.string(),
  })
  .register(apiSchemas, {
    id: 'AuthorizationServerMetadata',
    description: 'RFC 8414 authorization server metadata.',
  });

export type AuthorizationServerMetadata = z.infer<typeof authorizationServerMetadata>;

/** Every scope a token of this service may carry: the role defaults (contract §4). */
const SCOPES = [...new Set(Object.values(ROLE_DEFAULT_SCOPES).flat())].sort();

export function metadataFor(issuer: string): AuthorizationServerMetadata {
  const base = issuerBase(issuer);
  return {
    issuer,
    authorization_endpoint: `${base}/v2/auth/authorize`,
    token_endpoint: `${base}/v2/auth/token`,
    jwks_uri: `${base}/v2/auth/jwks`,
    revocation_endpoint: `${base}/v2/auth/revoke`,
    introspection_endpoint: `${base}/v2/auth/introspect`,
    grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials', 'password'],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    scopes_supported: SCOPES,
    authorization_response_iss_parameter_supported: true,
    service_documentation: `${base}/docs`,
  };
}

/**
 * `GET /.well-known/oauth-authorization-server` (RFC 8414): no token, cacheable, with an ETag. For an
 * issuer with a path, the gateway answers at that path after the well-known one too (§3.1,
 * `start-gateway.ts`: a route of its own, since the path is configured).
 */
@ApiTags('tokens')
@Controller()
export class DiscoveryController {
  private readonly body: string;
  private readonly etag: string;

  constructor(@Inject(GATEWAY_CONFIG) config: GatewayConfig) {
    this.body = JSON.stringify(metadataFor(config.TOKEN_ISSUER));
    this.etag = `"${createHash('sha256').update(this.body).digest('base64url').slice(0, 27)}"`;
  }

  @Get(DISCOVERY_PATH)
  @Public()
  @RateLimited('default')
  @ApiOperation({
    operationId: 'getAuthorizationServerMetadata',
    summary: 'OAuth 2.0 authorization server metadata (RFC 8414)',
  })
  @ApiJsonResponse(200, 'The endpoints and methods this server supports.', authorizationServerMetadata, {
    'Cache-Control': header('`public, max-age=3600`'),
    ETag: header('Changes only with the configuration.'),
  })
  @ApiResponse({ status: 304, description: 'Not modified (`If-None-Match` matched the ETag).' })
  metadata(@Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    void reply.header('Cache-Control', 'public, max-age=3600').header('ETag', this.etag);
    if (ifNoneMatchMatches(request.headers['if-none-match'], this.etag)) return reply.status(304).send();
    return reply.header('Content-Type', 'application/json; charset=utf-8').send(this.body);
  }
}
