import { z } from 'zod';

import { apiSchemas } from '../openapi/api-schemas';

/**
 * The parameters `tokenParameters` (token-request.ts) reads from a JSON or form body, for the
 * document. That parser is hand-written (form bodies, HTTP Basic, RFC 6749's rules), so this is the one
 * place the fields are listed twice; `token-request.schema.spec.ts` proves the two lists are the same.
 */
export const tokenRequest = z
  .object({
    grant_type: z
      .enum(['password', 'client_credentials', 'refresh_token', 'authorization_code'])
      .default('password')
      .describe('Defaults to password.'),
    username: z.string().describe('password grant: the login e-mail (case-insensitive).'),
    password: z.string().describe('password grant: the account password.'),
    scope: z
      .string()
      .describe('Requested scopes, space-separated; empty = the role defaults. refresh_token grant: may only narrow.'),
    mfa_code: z
      .string()
      .max(64)
      .describe(
        'password grant: the 6-digit TOTP code, or an unused recovery code (each works once); required once ' +
          'two-step verification is enabled.',
      ),
    client_id: z
      .string()
      .describe(
        'client_credentials grant (or HTTP Basic user); password grant: optional, the public web client by default.',
      ),
    client_secret: z.string().describe('client_credentials grant, unless sent with HTTP Basic (RFC 6749 §2.3.1).'),
    refresh_token: z.string().describe('refresh_token grant: the refresh token to rotate.'),
    code: z.string().describe('authorization_code grant: the code the authorization endpoint returned.'),
    redirect_uri: z.string().describe('authorization_code grant: the redirect_uri of the authorization request.'),
    code_verifier: z
      .string()
      .describe('authorization_code grant: the PKCE verifier (RFC 7636) whose S256 challenge was sent.'),
  })
  .partial()
  .register(apiSchemas, {
    id: 'TokenRequest',
    description:
      'RFC 6749 token request. password: username + password (+ scope, mfa_code, client_id); ' +
      'client_credentials: client_id + client_secret in the body or with HTTP Basic (+ scope); ' +
      'refresh_token: refresh_token (+ scope; client_id, and its secret when confidential, for a registered ' +
      'client); authorization_code: code + redirect_uri + code_verifier, with client_id (public client) or ' +
      'client authentication (confidential). Unknown parameters are ignored (RFC 6749 §3.2).',
  });
