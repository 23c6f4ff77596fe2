import { z } from 'zod';

import { apiSchemas } from '../openapi/api-schemas';

const clientFields = {
  client_id: z.string().describe('The client (or the HTTP Basic user). A public client sends only this.'),
  client_secret: z.string().describe('A confidential client’s secret, unless sent with HTTP Basic.'),
};

/** `POST /v2/auth/revoke` (RFC 7009 §2.1), JSON or form-encoded. */
export const revocationRequest = z
  .object({
    token: z.string().describe('The access or refresh token to revoke.'),
    token_type_hint: z.enum(['access_token', 'refresh_token']).optional().describe('A hint only.'),
    ...clientFields,
  })
  .partial({ token_type_hint: true, client_id: true, client_secret: true })
  .register(apiSchemas, {
    id: 'RevocationRequest',
    description:
      'RFC 7009 revocation request. A refresh token takes its family and the access tokens issued from it; an ' +
      'access token is revoked by its jti; effective at every gateway and service within 1 s.',
  });

/** `POST /v2/auth/introspect` (RFC 7662 §2.1). */
export const introspectionRequest = z
  .object({
    token: z.string().describe('The access or refresh token to look at.'),
    token_type_hint: z.enum(['access_token', 'refresh_token']).optional().describe('A hint only.'),
    ...clientFields,
  })
  .partial({ token_type_hint: true, client_id: true, client_secret: true })
  .register(apiSchemas, {
    id: 'IntrospectionRequest',
    description: 'RFC 7662 introspection request, from a confidential client (HTTP Basic or client_secret).',
  });

/** RFC 7662 §2.2: `active` alone for anything not currently valid. */
export const introspection = z
  .object({
    active: z.boolean(),
    scope: z.string().optional(),
    client_id: z.string().optional(),
    sub: z.string().optional(),
    exp: z.int().optional().describe('Seconds since the epoch.'),
    iat: z.int().optional().describe('Seconds since the epoch.'),
    iss: z.string().optional(),
    aud: z.string().optional(),
    jti: z.string().optional().describe('The token’s id (a refresh token’s own, not its session’s).'),
    token_type: z.enum(['Bearer', 'refresh_token']).optional(),
    org_id: z.string().optional(),
  })
  .strict()
  .register(apiSchemas, {
    id: 'Introspection',
    description:
      'RFC 7662 introspection response: `{"active": false}` for anything not currently valid (expired, revoked, ' +
      'malformed, another org’s); the other members only when active.',
  });

export type Introspection = z.infer<typeof introspection>;
