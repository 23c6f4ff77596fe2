#!/usr/bin/env node
// Runs one step of an OAuth client built on `openid-client` (v6, ESM only, so it runs in its own
// process rather than inside Jest). Every step discovers the server through RFC 8414 metadata first,
// as a real client does. The step comes as one JSON argument; the answer is one JSON line on stdout.
//   {"op":"start","issuer","gateway","clientId","redirectUri","scope"}
//     → {"authorizationUrl","verifier","state","metadata"}
//   {"op":"exchange", …, "callbackUrl","verifier","state"} → the token response
//   {"op":"refresh", …, "refreshToken"} → the token response
//   {"op":"revoke", …, "token","hint"} → {}
//   {"op":"introspect", …, "token"} → the introspection response
// `clientSecret` (when given) authenticates with client_secret_basic, else the client is public.
// The issuer's origin is rewritten to `gateway` (the stack listens on a spare port), and each request
// names its own client address in X-Forwarded-For so the per-IP `auth` tier never gets in the way.
import { randomInt } from 'node:crypto';

import * as client from 'openid-client';

const step = JSON.parse(process.argv[2] ?? '{}');

const fetchThroughGateway = (url, options = {}) => {
  const target = String(url).replace(step.issuer.replace(/\/+$/, ''), step.gateway.replace(/\/+$/, ''));
  const headers = new Headers(options.headers);
  headers.set('x-forwarded-for', `203.0.113.${randomInt(1, 255)}`);
  return fetch(target, { ...options, headers });
};

const config = await client.discovery(
  new URL(step.issuer),
  step.clientId,
  undefined,
  step.clientSecret ? client.ClientSecretBasic(step.clientSecret) : client.None(),
  { algorithm: 'oauth2', [client.customFetch]: fetchThroughGateway },
);
config[client.customFetch] = fetchThroughGateway;

const answer = {};
switch (step.op) {
  case 'start': {
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const authorizationUrl = client.buildAuthorizationUrl(config, {
      redirect_uri: step.redirectUri,
      scope: step.scope,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
    });
    Object.assign(answer, {
      authorizationUrl: authorizationUrl.href,
      verifier,
      state,
      metadata: config.serverMetadata(),
    });
    break;
  }
  case 'exchange':
    Object.assign(
      answer,
      await client.authorizationCodeGrant(config, new URL(step.callbackUrl), {
        pkceCodeVerifier: step.verifier,
        expectedState: step.state,
      }),
    );
    break;
  case 'refresh':
    Object.assign(answer, await client.refreshTokenGrant(config, step.refreshToken));
    break;
  case 'revoke':
    await client.tokenRevocation(config, step.token, step.hint ? { token_type_hint: step.hint } : undefined);
    break;
  case 'introspect':
    Object.assign(answer, await client.tokenIntrospection(config, step.token));
    break;
  default:
    throw new Error(`unknown op ${step.op}`);
}
process.stdout.write(`${JSON.stringify(answer)}\n`);
