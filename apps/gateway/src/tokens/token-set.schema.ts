import { z } from 'zod';

import { apiSchemas } from '../openapi/api-schemas';

/** Interface §2.2: the answer of a successful token request. */
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

export type TokenSet = z.output<typeof tokenSet>;

/** `GET /v2/auth/jwks`. */
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
