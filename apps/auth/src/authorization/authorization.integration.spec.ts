import { createHash, randomBytes } from 'node:crypto';

import { AccessTokenVerifier, Caller } from '@acct/access-token';
import { authV1 } from '@acct/contracts';
import { Revocations } from '@acct/revocation';
import { decodeJwt } from 'jose';
import { generateSync } from 'otplib';

import { ClientService } from '../clients/client.service';
import { VerifiedUser } from '../identity/identity.client';
import { AccessTokenIssuer } from '../keys/access-token.issuer';
import { JwksGrpcController } from '../keys/jwks.grpc-controller';
import { MfaService } from '../mfa/mfa.service';
import { RecoveryCodesService } from '../mfa/recovery-codes.service';
import { hashRefreshToken } from '../refresh/refresh-token';
import { RefreshTokenService } from '../refresh/refresh-token.service';
import { useAuthOnTestDatabase } from '../test-support/auth-on-test-database';
import { outcomeOf, passwordLogin } from '../test-support/login-requests';
import { refusal } from '../test-support/refusal';
import { TokenRequest } from '../tokens/grants/grant';
import { TokenService } from '../tokens/token.service';
import { AuthorizationService } from './authorization.service';

const ORG = '5a1e4c1a-5b8e-4c33-9a53-1f2b3c4d5e6f';
const USER: VerifiedUser = {
  id: '6b0b6a3e-1c2d-4e5f-8a9b-0c1d2e3f4a5b',
  orgId: ORG,
  email: 'ada@example.test',
  status: 'active',
  roles: ['member'],
};
const MFA_USER: VerifiedUser = { ...USER, id: '7c0b6a3e-1c2d-4e5f-8a9b-0c1d2e3f4a5b', email: 'mfa@example.test' };
const PASSWORD = 'right-password';

/** What happens while identity checks a password (argon2 takes a while): nothing, unless a test says. */
let duringPasswordCheck: (() => Promise<void>) | undefined;

const identity = {
  verifyPassword: async (email: string, password: string) => {
    const user = [USER, MFA_USER].find((one) => one.email === email);
    await duringPasswordCheck?.();
    return user && password === PASSWORD ? user : undefined;
  },
  emailOf: () => Promise.resolve(MFA_USER.email),
};

const REDIRECT = 'https://app.example/callback';
const LOOPBACK = 'http://127.0.0.1/callback';

/** A PKCE pair as a client makes it (RFC 7636 §4.1–4.2). */
function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

describe('authorization code + PKCE (real Postgres, real login policies, injected clock)', () => {
  const auth = useAuthOnTestDatabase({ identityClient: identity });
  let authorization: AuthorizationService;
  let tokens: TokenService;
  let clients: ClientService;
  let verifier: AccessTokenVerifier;
  let spa: string;
  let confidential: { clientId: string; clientSecret: string };
  let ipCounter = 0;
  /** Each test signs in from its own IP, so lockouts of one do not reach another. */
  const freshIp = () => `198.51.100.${++ipCounter}`;

  const parameters = (fields: Partial<authV1.AuthorizationParameters> = {}): authV1.AuthorizationParameters => ({
    responseType: 'code',
    clientId: spa,
    redirectUri: REDIRECT,
    scope: '',
    codeChallenge: pkce().challenge,
    codeChallengeMethod: 'S256',
    ...fields,
  });

  /** The browser's cookie nonce. */
  const NONCE = randomBytes(32).toString('base64url');
  const check = (fields: authV1.AuthorizationParameters, csrfNonce = NONCE) =>
    authorization.check({ parameters: fields, csrfNonce });

  /** Loads the login page (for its CSRF token) and submits it. */
  const signIn = async (request: Partial<authV1.AuthorizeRequest> & { parameters: authV1.AuthorizationParameters }) => {
    const { csrfToken } = await check(request.parameters);
    return authorization.authorize({
      username: USER.email,
      password: PASSWORD,
      mfaCode: '',
      mfaTicket: '',
      clientIp: '198.51.100.200',
      deviceId: '',
      userAgent: 'jest',
      deviceToken: '',
      csrfNonce: NONCE,
      csrfToken,
      ...request,
    });
  };

  const exchange = (fields: Partial<TokenRequest>) =>
    tokens.issue(passwordLogin({ grantType: 'authorization_code', password: '', clientId: spa, ...fields }));

  /** A code for USER through `clientId`, and the verifier that redeems it. */
  async function codeFor(clientId = spa, redirectUri = REDIRECT, scope = '') {
    const { verifier: codeVerifier, challenge } = pkce();
    const answer = await signIn({
      parameters: parameters({ clientId, redirectUri, scope, codeChallenge: challenge }),
      clientIp: freshIp(),
    });
    expect(answer).toMatchObject({ error: '', mfaTicket: '' });
    return { code: answer.code, codeVerifier, redirectUri, clientId };
  }

  beforeAll(async () => {
    authorization = auth.harness.get(AuthorizationService);
    tokens = auth.tokens;
    clients = auth.harness.get(ClientService);
    const jwks = auth.harness.get(JwksGrpcController);
    verifier = new AccessTokenVerifier({
      issuer: auth.harness.config.TOKEN_ISSUER,
      audience: auth.harness.config.TOKEN_AUDIENCE,
      fetchKeys: () => jwks.getJwks(),
    });
    ({ clientId: spa } = await clients.create({
      orgId: ORG,
      name: 'Single-page app',
      type: 'public',
      grantTypes: ['authorization_code', 'refresh_token'],
      redirectUris: [REDIRECT, LOOPBACK],
      scopes: ['users:read', 'system:read', 'users:write'],
    }));
    confidential = await clients.create({
      orgId: ORG,
      name: 'Server app',
      grantTypes: ['authorization_code'],
      redirectUris: [REDIRECT],
      scopes: ['users:read'],
    });
  });

  describe('checking an authorization request', () => {
    it('accepts a registered client and redirect URI with an S256 challenge, and names the client', async () => {
      expect(await check(parameters())).toEqual({
        error: '',
        errorDescription: '',
        errorPage: false,
        clientName: 'Single-page app',
        csrfToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      });
    });

    it('answers an unknown client or an unregistered redirect URI with an error page, never a redirect', async () => {
      for (const fields of [{ clientId: 'nobody' }, { clientId: '' }, { redirectUri: '' }]) {
        expect(await check(parameters(fields))).toMatchObject({
          error: 'invalid_request',
          errorPage: true,
        });
      }
    });

    it.each([
      ['another port on a non-loopback host', 'https://app.example:8443/callback'],
      ['another path', 'https://app.example/callback/other'],
      ['an added query', 'https://app.example/callback?x=1'],
      ['a fragment', 'https://app.example/callback#frag'],
      ['userinfo', 'https://evil@app.example/callback'],
      ['an upper-case host', 'https://APP.example/callback'],
      ['http instead of https', 'http://app.example/callback'],
      ['a trailing slash', 'https://app.example/callback/'],
      ['a look-alike host', 'https://app.example.evil.test/callback'],
      ['a loopback URI with another path', 'http://127.0.0.1:4000/other'],
      ['another loopback host', 'http://localhost:4000/callback'],
    ])('treats %s as unregistered (error page)', async (_what, redirectUri) => {
      expect(await check(parameters({ redirectUri }))).toMatchObject({
        error: 'invalid_request',
        errorDescription: 'The redirect_uri is not registered for this client.',
        errorPage: true,
      });
    });

    it('accepts any port on a registered loopback redirect URI (RFC 8252 §7.3)', async () => {
      for (const redirectUri of ['http://127.0.0.1/callback', 'http://127.0.0.1:53124/callback']) {
        expect((await check(parameters({ redirectUri }))).error).toBe('');
      }
    });

    it.each([
      ['plain challenge', { codeChallengeMethod: 'plain' }, 'invalid_request'],
      ['no challenge method (plain by default)', { codeChallengeMethod: '' }, 'invalid_request'],
      ['missing challenge', { codeChallenge: '', codeChallengeMethod: '' }, 'invalid_request'],
      ['malformed challenge', { codeChallenge: 'short' }, 'invalid_request'],
      ['response_type=token', { responseType: 'token' }, 'unsupported_response_type'],
      ['missing response_type', { responseType: '' }, 'invalid_request'],
      ['a scope the client lacks', { scope: 'instances:write' }, 'invalid_scope'],
    ])('sends %s back to the redirect URI as %s', async (_what, fields, error) => {
      expect(await check(parameters(fields))).toMatchObject({ error, errorPage: false });
    });

    it('answers a client not registered for authorization_code (it has no redirect URI) with an error page', async () => {
      const { clientId } = await clients.create({ orgId: ORG, name: 'robot', scopes: ['users:read'] });
      expect(await check(parameters({ clientId }))).toMatchObject({
        error: 'invalid_request',
        errorPage: true,
      });
      const mixed = await clients.create({
        orgId: ORG,
        name: 'password only',
        type: 'public',
        grantTypes: ['password'],
        scopes: ['users:read'],
      });
      expect(await check(parameters({ clientId: mixed.clientId }))).toMatchObject({ errorPage: true });
    });
  });

  describe('signing in and exchanging the code', () => {
    it('issues a 256-bit code, stored only as its hash, that a public client exchanges once with its verifier', async () => {
      const { code, codeVerifier } = await codeFor();
      expect(Buffer.from(code, 'base64url')).toHaveLength(32);
      const rows = await auth.database.query<{ code_hash: string; scope: string; expires_at: Date; created_at: Date }>(
        'SELECT code_hash, scope, expires_at, created_at FROM authorization_codes',
      );
      expect(rows.some((row) => row.code_hash === createHash('sha256').update(code).digest('hex'))).toBe(true);
      expect(JSON.stringify(rows)).not.toContain(code);
      const set = await exchange({ code, codeVerifier, redirectUri: REDIRECT });
      expect(set).toMatchObject({ tokenType: 'Bearer', expiresIn: 7200, scope: 'system:read users:read' });
      expect(set.refreshToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
      await expect(verifier.verify(set.accessToken)).resolves.toMatchObject({
        subject: USER.id,
        orgId: ORG,
        clientId: spa,
        kind: 'user',
        roles: ['member'],
      });
    });

    it('grants only the scopes both the client and the account have', async () => {
      const { code, codeVerifier } = await codeFor(spa, REDIRECT, 'users:read users:write');
      expect((await exchange({ code, codeVerifier, redirectUri: REDIRECT })).scope).toBe('users:read');
    });

    it('lets a confidential client exchange only with its secret', async () => {
      const { code, codeVerifier } = await codeFor(confidential.clientId);
      const request = { code, codeVerifier, redirectUri: REDIRECT, clientId: confidential.clientId };
      expect((await refusal(exchange(request))).code).toBe('invalid_client');
      const set = await exchange({ ...request, clientSecret: confidential.clientSecret });
      expect(decodeJwt(set.accessToken).client_id).toBe(confidential.clientId);
      expect(set.refreshToken).toBe('');
    });

    it('refuses a wrong verifier, another redirect URI and another client, and the code is used up', async () => {
      for (const wrong of [
        { codeVerifier: pkce().verifier },
        { codeVerifier: 'too-short' },
        { redirectUri: 'https://app.example/other' },
        { clientId: confidential.clientId, clientSecret: confidential.clientSecret },
      ]) {
        const { code, codeVerifier } = await codeFor();
        const error = await refusal(exchange({ code, codeVerifier, redirectUri: REDIRECT, ...wrong }));
        expect(error).toMatchObject({ code: 'invalid_grant', options: { extensions: { error: 'invalid_grant' } } });
        expect((await refusal(exchange({ code, codeVerifier, redirectUri: REDIRECT }))).code).toBe('invalid_grant');
      }
    });

    it('refuses a code after its 60 seconds', async () => {
      const { code, codeVerifier } = await codeFor();
      auth.harness.clock.advance(60_000);
      expect((await refusal(exchange({ code, codeVerifier, redirectUri: REDIRECT }))).code).toBe('invalid_grant');
    });

    it('takes a code from a loopback URI on the port it was issued for only', async () => {
      const { code, codeVerifier } = await codeFor(spa, 'http://127.0.0.1:41234/callback');
      const other = await refusal(exchange({ code, codeVerifier, redirectUri: 'http://127.0.0.1:41235/callback' }));
      expect(other.code).toBe('invalid_grant');
    });

    it('refuses a code used again and revokes the refresh family its first use started', async () => {
      const { code, codeVerifier } = await codeFor();
      const set = await exchange({ code, codeVerifier, redirectUri: REDIRECT });
      const rotated = await tokens.issue(
        passwordLogin({ grantType: 'refresh_token', password: '', clientId: spa, refreshToken: set.refreshToken }),
      );
      const replay = await refusal(exchange({ code, codeVerifier, redirectUri: REDIRECT }));
      expect(replay).toMatchObject({ code: 'invalid_grant', detail: expect.stringContaining('authorization code') });
      for (const refreshToken of [set.refreshToken, rotated.refreshToken]) {
        const refused = await refusal(
          tokens.issue(passwordLogin({ grantType: 'refresh_token', password: '', clientId: spa, refreshToken })),
        );
        expect(refused.code).toBe('invalid_grant');
      }
    });

    it('binds the refresh tokens of a public client to it', async () => {
      const { code, codeVerifier } = await codeFor();
      const set = await exchange({ code, codeVerifier, redirectUri: REDIRECT });
      const refresh = (fields: Partial<TokenRequest>) =>
        tokens.issue(
          passwordLogin({ grantType: 'refresh_token', password: '', refreshToken: set.refreshToken, ...fields }),
        );
      expect((await refusal(refresh({ clientId: '' }))).code).toBe('invalid_grant');
      expect((await refusal(refresh({ clientId: spa, clientSecret: 'a secret' }))).code).toBe('invalid_client');
      const next = await refresh({ clientId: spa });
      expect(next.refreshToken).not.toBe(set.refreshToken);
      expect(decodeJwt(next.accessToken).client_id).toBe(spa);
    });

    it("records the exchange's IP, device id and user agent on the session it starts, as the password grant does", async () => {
      const { code, codeVerifier } = await codeFor();
      const set = await exchange({
        code,
        codeVerifier,
        redirectUri: REDIRECT,
        clientIp: '203.0.113.77',
        deviceId: 'browser-7',
        userAgent: 'Browser/7.0',
      });
      const familyId = decodeJwt(set.accessToken).sid;
      const [session] = await auth.database.query<{ ip: string; device_id: string; user_agent: string }>(
        'SELECT ip, device_id, user_agent FROM refresh_tokens WHERE family_id = $1 AND parent_id IS NULL',
        [familyId],
      );
      expect(session).toEqual({ ip: '203.0.113.77', device_id: 'browser-7', user_agent: 'Browser/7.0' });
    });

    it('refuses an authorization_code grant from a client not registered for it: unauthorized_client', async () => {
      const robot = await clients.create({ orgId: ORG, name: 'robot', scopes: ['users:read'] });
      const error = await refusal(
        exchange({
          clientId: robot.clientId,
          clientSecret: robot.clientSecret,
          code: 'x',
          codeVerifier: 'y',
          redirectUri: REDIRECT,
        }),
      );
      expect(error).toMatchObject({ code: 'unauthorized_client', status: 400 });
      expect(error.options.extensions).toMatchObject({ error: 'unauthorized_client' });
    });

    it('does not issue a code for a wrong password, and says the same as the token endpoint', async () => {
      const answer = refusal(signIn({ parameters: parameters(), password: 'wrong', clientIp: freshIp() }));
      const token = refusal(
        tokens.issue(passwordLogin({ username: USER.email, password: 'wrong', clientIp: freshIp() })),
      );
      expect((await answer).toPayload()).toEqual((await token).toPayload());
    });

    it('shares the lockout with the token endpoint: failures on either count for the (username, IP) pair', async () => {
      const ip = freshIp();
      for (let attempt = 0; attempt < 3; attempt++) {
        await refusal(signIn({ parameters: parameters(), password: 'wrong', clientIp: ip }));
      }
      for (let attempt = 0; attempt < 2; attempt++) {
        await refusal(tokens.issue(passwordLogin({ username: USER.email, password: 'wrong', clientIp: ip })));
      }
      expect((await refusal(signIn({ parameters: parameters(), clientIp: ip }))).code).toBe('login_locked');
      expect(await outcomeOf(tokens.issue(passwordLogin({ username: USER.email, clientIp: ip })))).toBe('login_locked');
    });

    it("refuses a form without its CSRF token, with another browser's token, or for another request", async () => {
      const request = parameters();
      const { csrfToken } = await check(request);
      const otherBrowser = await check(request, randomBytes(32).toString('base64url'));
      const otherRequest = await check(parameters());
      for (const [csrfNonce, token] of [
        [NONCE, ''],
        [NONCE, otherBrowser.csrfToken],
        [NONCE, otherRequest.csrfToken],
        ['', csrfToken],
        ['not-a-nonce', csrfToken],
      ]) {
        const error = await refusal(signIn({ parameters: request, csrfNonce, csrfToken: token, clientIp: freshIp() }));
        expect(error).toMatchObject({ code: 'forbidden', status: 403 });
      }
      expect((await signIn({ parameters: request, csrfToken, clientIp: freshIp() })).code).not.toBe('');
    });

    it('records every sign-in in the login audit as "authorize"', async () => {
      const ip = freshIp();
      await refusal(signIn({ parameters: parameters(), password: 'wrong', clientIp: ip }));
      await signIn({ parameters: parameters(), clientIp: ip });
      const rows = await auth.database.query<{
        grant_type: string;
        outcome: string;
        username: string;
        client_id: string;
      }>('SELECT grant_type, outcome, username, client_id FROM login_audit WHERE client_ip = $1 ORDER BY at', [ip]);
      expect(rows).toEqual([
        { grant_type: 'authorize', outcome: 'failure', username: USER.email, client_id: spa },
        { grant_type: 'authorize', outcome: 'success', username: USER.email, client_id: spa },
      ]);
    });
    it('refuses a control character in what the person typed as the token endpoint does: invalid_request, audited escaped, not counted', async () => {
      const ip = freshIp();
      for (const typed of [
        { username: `${USER.email}\u0000` },
        { password: `${PASSWORD}\u0007` },
        { mfaCode: '123\n456' },
        { username: `\u0085${USER.email}` },
        { password: `\u001b${PASSWORD}` },
        { password: `${PASSWORD}\u007f` },
      ]) {
        const error = await refusal(signIn({ parameters: parameters(), clientIp: ip, ...typed }));
        expect(error).toMatchObject({ code: 'invalid_request', status: 400 });
      }
      // Six refusals from one IP, yet the (username, IP) pair is not locked (five failures would).
      expect((await signIn({ parameters: parameters(), clientIp: ip })).code).not.toBe('');
      const rows = await auth.database.query<{ outcome: string; reason: string; username: string }>(
        'SELECT outcome, reason, username FROM login_audit WHERE client_ip = $1 ORDER BY at',
        [ip],
      );
      expect(rows.map((row) => row.username)).toContain(`${USER.email}\\u0000`);
      expect(rows.map((row) => [row.outcome, row.reason])).toEqual([
        ...Array.from({ length: 6 }, () => ['failure', 'invalid_request']),
        ['success', 'issued'],
      ]);
    });
  });

  describe("after the user's sessions are ended (password set or reset, disabled, deleted)", () => {
    it('refuses a code issued before, so that no session outlives the change', async () => {
      const { code, codeVerifier } = await codeFor();
      auth.harness.clock.advance(1000);
      await auth.harness.get(RefreshTokenService).revokeUser(ORG, USER.id, auth.harness.clock.now());
      auth.harness.clock.advance(1000);
      const error = await refusal(exchange({ code, codeVerifier, redirectUri: REDIRECT }));
      expect(error).toMatchObject({ code: 'invalid_grant', options: { extensions: { error: 'invalid_grant' } } });
      // A code of a sign-in after the change is good.
      const later = await codeFor();
      const set = await exchange({ code: later.code, codeVerifier: later.codeVerifier, redirectUri: REDIRECT });
      await expect(verifier.verify(set.accessToken)).resolves.toMatchObject({ subject: USER.id });
    });
  });

  describe("after the user's sessions are ended, before auth hears of it", () => {
    it('ends the session of a code signed in before the end and exchanged after it, with or without a refresh token', async () => {
      const revocations = auth.harness.get(Revocations);
      const revoked = (accessToken: string) => {
        const claims = decodeJwt(accessToken) as {
          jti: string;
          sid?: string;
          sub: string;
          org_id: string;
          iat: number;
        };
        return revocations.isRevoked({ ...claims, orgId: claims.org_id });
      };
      const spaCode = await codeFor();
      const serverCode = await codeFor(confidential.clientId);
      // The user is disabled (or its password set) now; identity's event reaches auth only later.
      auth.harness.clock.advance(1000);
      const endedAt = auth.harness.clock.now();
      auth.harness.clock.advance(1000);
      const withRefresh = await exchange({
        code: spaCode.code,
        codeVerifier: spaCode.codeVerifier,
        redirectUri: REDIRECT,
      });
      const withoutRefresh = await exchange({
        code: serverCode.code,
        codeVerifier: serverCode.codeVerifier,
        redirectUri: REDIRECT,
        clientId: confidential.clientId,
        clientSecret: confidential.clientSecret,
      });
      await auth.harness.get(RefreshTokenService).revokeUser(ORG, USER.id, endedAt);

      const [refresh] = await auth.database.query<{ revoked_at: Date | null }>(
        'SELECT revoked_at FROM refresh_tokens WHERE token_hash = $1',
        [hashRefreshToken(withRefresh.refreshToken)],
      );
      expect({
        refreshRevoked: refresh?.revoked_at !== null,
        accessRevoked: revoked(withRefresh.accessToken),
        serverAccessRevoked: revoked(withoutRefresh.accessToken),
      }).toEqual({ refreshRevoked: true, accessRevoked: true, serverAccessRevoked: true });
    });
  });

  describe("while the user's sessions are being ended", () => {
    it('refuses an exchange during which they were ended, and leaves no session of it', async () => {
      const { code, codeVerifier } = await codeFor();
      auth.harness.clock.advance(1000);
      const issuer = auth.harness.get(AccessTokenIssuer);
      const issue = issuer.issue.bind(issuer);
      // The code is claimed and its tokens are on their way when the user's sessions end (an admin
      // disables it, its password is reset): that revocation finds no family of this exchange yet.
      const meanwhile = jest.spyOn(issuer, 'issue').mockImplementationOnce(async (...args) => {
        await auth.harness.get(RefreshTokenService).revokeUser(ORG, USER.id, auth.harness.clock.now());
        auth.harness.clock.advance(1000);
        return issue(...args);
      });
      try {
        expect(await outcomeOf(exchange({ code, codeVerifier, redirectUri: REDIRECT }))).toBe('invalid_grant');
      } finally {
        meanwhile.mockRestore();
      }
      const live = await auth.database.query(
        'SELECT id FROM refresh_tokens WHERE user_id = $1 AND revoked_at IS NULL',
        [USER.id],
      );
      expect(live).toEqual([]);
    });
  });

  describe('an account with MFA', () => {
    let secret: string;
    const totp = () => generateSync({ secret, epoch: Math.floor(auth.harness.clock.now() / 1000) });

    beforeAll(async () => {
      const mfa = auth.harness.get(MfaService);
      const caller = { subject: MFA_USER.id, kind: 'user', orgId: ORG, roles: ['member'] } as unknown as Caller;
      ({ secret } = await mfa.enroll({ ...caller, scopes: new Set(['users:read']) }, 'token', PASSWORD));
      await mfa.confirm({ ...caller, scopes: new Set(['users:read']) }, totp());
      auth.harness.clock.advance(90_000);
    });

    it('answers a correct password with a ticket, and the ticket with a code gets the authorization code', async () => {
      const { verifier: codeVerifier, challenge } = pkce();
      const request = parameters({ codeChallenge: challenge });
      const ip = freshIp();
      const first = await signIn({ parameters: request, username: MFA_USER.email, clientIp: ip });
      expect(first).toMatchObject({ code: '', error: '' });
      expect(first.mfaTicket).not.toBe('');
      expect(first.mfaTicket).not.toContain(PASSWORD);
      const wrongCode = await refusal(
        signIn({
          parameters: request,
          username: '',
          password: '',
          mfaTicket: first.mfaTicket,
          mfaCode: '000000',
          clientIp: ip,
        }),
      );
      expect(wrongCode.code).toBe('invalid_grant');
      const second = await signIn({
        parameters: request,
        username: '',
        password: '',
        mfaTicket: first.mfaTicket,
        mfaCode: totp(),
        clientIp: ip,
      });
      expect(second.code).not.toBe('');
      const set = await exchange({ code: second.code, codeVerifier, redirectUri: REDIRECT });
      expect(decodeJwt(set.accessToken).sub).toBe(MFA_USER.id);
    });

    it("accepts a recovery code as the second step's code, once", async () => {
      const caller = { subject: MFA_USER.id, kind: 'user', orgId: ORG, roles: ['member'] } as unknown as Caller;
      const { codes } = await auth.harness
        .get(RecoveryCodesService)
        .create({ ...caller, scopes: new Set(['users:read']) }, 'token', PASSWORD);
      const secondStep = async (ip: string) => {
        const request = parameters();
        const { mfaTicket } = await signIn({ parameters: request, username: MFA_USER.email, clientIp: ip });
        return signIn({ parameters: request, username: '', password: '', mfaTicket, mfaCode: codes[0], clientIp: ip });
      };
      expect((await secondStep(freshIp())).code).not.toBe('');
      expect((await refusal(secondStep(freshIp()))).code).toBe('invalid_grant');
    });

    it('keeps the code of a sign-in refused for its scope: the same recovery code signs in after it', async () => {
      const caller = { subject: MFA_USER.id, kind: 'user', orgId: ORG, roles: ['member'] } as unknown as Caller;
      const { codes } = await auth.harness
        .get(RecoveryCodesService)
        .create({ ...caller, scopes: new Set(['users:read']) }, 'token', PASSWORD);
      const ip = freshIp();
      const secondStep = async (scope: string) => {
        const request = parameters({ scope });
        const { mfaTicket } = await signIn({ parameters: request, username: MFA_USER.email, clientIp: ip });
        return signIn({ parameters: request, username: '', password: '', mfaTicket, mfaCode: codes[0], clientIp: ip });
      };
      // The app asks only for users:write, which a member does not hold.
      expect(await secondStep('users:write')).toMatchObject({ error: 'invalid_scope', code: '' });
      expect((await secondStep('users:read')).code).not.toBe('');
    });

    it("refuses a ticket issued before the user's sessions were ended (disabled, deleted, password changed)", async () => {
      auth.harness.clock.advance(90_000);
      const ip = freshIp();
      const request = parameters();
      const { mfaTicket } = await signIn({ parameters: request, username: MFA_USER.email, clientIp: ip });
      expect(mfaTicket).not.toBe('');
      // While the user types its code, an admin disables it (or its password is reset): its sessions end.
      auth.harness.clock.advance(1000);
      await auth.harness.get(RefreshTokenService).revokeUser(ORG, MFA_USER.id, auth.harness.clock.now());
      auth.harness.clock.advance(1000);
      const error = await refusal(
        signIn({ parameters: request, username: '', password: '', mfaTicket, mfaCode: totp(), clientIp: ip }),
      );
      expect(error.code).toBe('forbidden');
      // A sign-in begun after the change goes through.
      auth.harness.clock.advance(30_000);
      const { mfaTicket: fresh } = await signIn({ parameters: request, username: MFA_USER.email, clientIp: ip });
      const signedIn = await signIn({
        parameters: request,
        username: '',
        password: '',
        mfaTicket: fresh,
        mfaCode: totp(),
        clientIp: ip,
      });
      expect(signedIn.code).not.toBe('');
    });

    it("refuses the code step of a sign-in whose password step was being checked when the user's sessions ended", async () => {
      auth.harness.clock.advance(90_000);
      const ip = freshIp();
      const request = parameters();
      // The password is set (or the user disabled) while identity checks the old one: the sign-in began
      // before the change, so the change ends it, as it ends a password login checked then.
      duringPasswordCheck = async () => {
        auth.harness.clock.advance(100);
        await auth.harness.get(RefreshTokenService).revokeUser(ORG, MFA_USER.id, auth.harness.clock.now());
        auth.harness.clock.advance(100);
      };
      const { mfaTicket } = await signIn({ parameters: request, username: MFA_USER.email, clientIp: ip }).finally(
        () => (duringPasswordCheck = undefined),
      );
      expect(mfaTicket).not.toBe('');
      auth.harness.clock.advance(1000);
      const error = await refusal(
        signIn({ parameters: request, username: '', password: '', mfaTicket, mfaCode: totp(), clientIp: ip }),
      );
      expect(error.code).toBe('forbidden');
    });

    it("keeps a ticket renewed by a missing code to the first one's five minutes: the code step cannot be stretched", async () => {
      auth.harness.clock.advance(90_000);
      const ip = freshIp();
      const request = parameters();
      const { mfaTicket: first } = await signIn({ parameters: request, username: MFA_USER.email, clientIp: ip });
      auth.harness.clock.advance(4 * 60_000);
      // No code: mfa_required again, with a ticket to go on from.
      const { mfaTicket: renewed } = await signIn({
        parameters: request,
        username: '',
        password: '',
        mfaTicket: first,
        mfaCode: '',
        clientIp: ip,
      });
      expect(renewed).not.toBe('');
      // Past five minutes from the password step, the renewed ticket is over too.
      auth.harness.clock.advance(61_000);
      const error = await refusal(
        signIn({ parameters: request, username: '', password: '', mfaTicket: renewed, mfaCode: totp(), clientIp: ip }),
      );
      expect(error.code).toBe('forbidden');
    });

    it('refuses a ticket for another authorization request, an expired or a forged one', async () => {
      auth.harness.clock.advance(90_000);
      const ip = freshIp();
      const request = parameters();
      const { mfaTicket } = await signIn({ parameters: request, username: MFA_USER.email, clientIp: ip });
      // One character of the MAC changed (never to itself: a fixed replacement would sometimes be a no-op).
      const changed = mfaTicket.at(-2) === 'A' ? 'B' : 'A';
      const tamper = `${mfaTicket.slice(0, -2)}${changed}${mfaTicket.at(-1)}`;
      for (const [ticket, other] of [
        [mfaTicket, parameters()],
        [tamper, request],
      ] as const) {
        const error = await refusal(
          signIn({ parameters: other, username: '', password: '', mfaTicket: ticket, mfaCode: totp(), clientIp: ip }),
        );
        expect(error.code).toBe('forbidden');
      }
      auth.harness.clock.advance(5 * 60_000);
      const late = await refusal(
        signIn({ parameters: request, username: '', password: '', mfaTicket, mfaCode: totp(), clientIp: ip }),
      );
      expect(late.code).toBe('forbidden');
    });
  });
});
