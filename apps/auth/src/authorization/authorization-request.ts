import { createHash } from 'node:crypto';

import { authV1 } from '@acct/contracts';

import { S256_CHALLENGE } from '../authorization-codes/pkce';
import { OAuthClient } from '../clients/client.repository';
import { AUTHORIZATION_CODE } from '../clients/client.service';
import { redirectUriRegistered } from '../clients/redirect-uri';

export type AuthorizationParameters = authV1.AuthorizationParameters;

/** How an authorization request is refused (RFC 6749 §4.1.2.1). */
export interface AuthorizationError {
  error: string;
  errorDescription: string;
  /** Shown on a page, never sent to the redirect URI: the client or the URI cannot be trusted. */
  errorPage: boolean;
}

const pageError = (errorDescription: string): AuthorizationError => ({
  error: 'invalid_request',
  errorDescription,
  errorPage: true,
});
const redirectError = (error: string, errorDescription: string): AuthorizationError => ({
  error,
  errorDescription,
  errorPage: false,
});

/**
 * Contract §6 rules for `GET /v2/auth/authorize`, in the order RFC 6749 §4.1.2.1 asks: first whether
 * the client and redirect URI can be trusted (if not, an error page), then everything else (an error
 * sent to the redirect URI). Undefined when the request is acceptable.
 */
export function authorizationRequestError(
  parameters: AuthorizationParameters,
  client: OAuthClient | undefined,
): AuthorizationError | undefined {
  if (!parameters.clientId) return pageError('The client_id parameter is missing.');
  if (!client) return pageError('The client is unknown.');
  if (!parameters.redirectUri) return pageError('The redirect_uri parameter is missing.');
  if (!redirectUriRegistered(client.redirectUris, parameters.redirectUri)) {
    return pageError('The redirect_uri is not registered for this client.');
  }
  if (parameters.responseType !== 'code') {
    return parameters.responseType
      ? redirectError('unsupported_response_type', 'Only response_type=code is supported.')
      : redirectError('invalid_request', 'The response_type parameter is missing.');
  }
  if (!client.grantTypes.includes(AUTHORIZATION_CODE)) {
    return redirectError('unauthorized_client', 'The client may not use the authorization_code grant.');
  }
  if (!parameters.codeChallenge) {
    return redirectError('invalid_request', 'PKCE is required: send code_challenge with code_challenge_method=S256.');
  }
  if (parameters.codeChallengeMethod !== 'S256') {
    return redirectError('invalid_request', 'Only code_challenge_method=S256 is supported.');
  }
  if (!S256_CHALLENGE.test(parameters.codeChallenge)) {
    return redirectError('invalid_request', 'The code_challenge must be 43 base64url characters (S256).');
  }
  return undefined;
}

/** A fingerprint of what a sign-in is for, so that a ticket of one request cannot serve another. */
export const requestFingerprint = (parameters: AuthorizationParameters): string =>
  createHash('sha256')
    .update(JSON.stringify([parameters.clientId, parameters.redirectUri, parameters.scope, parameters.codeChallenge]))
    .digest('base64url');

export const emptyParameters = (): AuthorizationParameters => ({
  responseType: '',
  clientId: '',
  redirectUri: '',
  scope: '',
  codeChallenge: '',
  codeChallengeMethod: '',
});
