import { call, expectProblem, gateway, newOrg } from './support/client';

/** Contract §1: every non-2xx answer is problem+json with a stable code, the request id, and no internals. */
describe('problem+json on every error', () => {
  let token: string;

  beforeAll(async () => {
    token = (await newOrg('errors')).clientToken;
  });

  it('answers an unknown path with 404 not_found, with or without a token, outside /v2 too', async () => {
    for (const path of ['/v2/nowhere', '/v2/users/me/unknown', '/', '/v1/users']) {
      expectProblem(await call(path), 404, 'not_found');
    }
    expectProblem(await call('/v2/nowhere', { token }), 404, 'not_found');
  });

  it('answers a known path with the wrong method with 405 method_not_allowed and Allow', async () => {
    const cases: Array<[string, string, string]> = [
      ['DELETE', '/v2/users', 'GET, HEAD, POST'],
      ['GET', '/v2/auth/token', 'POST'],
      ['PUT', '/v2/system/quota', 'GET, HEAD'],
      ['POST', '/v2/system/rate-limits', 'GET, HEAD'],
      ['PATCH', '/v2/system/health', 'GET, HEAD'],
    ];
    for (const [method, path, allow] of cases) {
      const answer = await call(path, { method, token });
      expectProblem(answer, 405, 'method_not_allowed');
      expect({ path, allow: answer.headers.get('allow') }).toEqual({ path, allow });
    }
  });

  it('answers a change of /v2/users/me, which is only read, with 405 and Allow: GET, HEAD, not 404 No such user', async () => {
    // GET /v2/users/me answers: the resource exists, and its other methods are not allowed (RFC 9110
    // §15.5.6), not "no such user" (§15.5.5) because the router handed them to /v2/users/{id}.
    for (const method of ['PATCH', 'DELETE', 'POST', 'PUT']) {
      const answer = await call('/v2/users/me', { method, token, ...(method === 'PATCH' ? { json: {} } : {}) });
      expect({ method, status: answer.status, allow: answer.headers.get('allow') }).toEqual({
        method,
        status: 405,
        allow: 'GET, HEAD',
      });
      expectProblem(answer, 405, 'method_not_allowed');
    }
  });

  it('answers a body that is not JSON with 415 unsupported_media_type', async () => {
    for (const type of ['text/plain', 'application/xml', 'application/x-www-form-urlencoded']) {
      const answer = await call('/v2/users', { token, raw: 'email=a@b.test', headers: { 'content-type': type } });
      expectProblem(answer, 415, 'unsupported_media_type');
    }
  });

  it('answers a body over 64 KiB with 413 payload_too_large, on the token endpoint too', async () => {
    const big = JSON.stringify({ email: 'big@acceptance.test', display_name: 'x'.repeat(70 * 1024) });
    expectProblem(
      await call('/v2/users', { token, raw: big, headers: { 'content-type': 'application/json' } }),
      413,
      'payload_too_large',
    );
    expectProblem(
      await call('/v2/auth/token', {
        form: { grant_type: 'password', username: 'x', password: 'y'.repeat(70 * 1024) },
      }),
      413,
      'payload_too_large',
    );
  });

  it('answers broken JSON with 400 malformed_body', async () => {
    const answer = await call('/v2/users', {
      token,
      raw: '{"email": ',
      headers: { 'content-type': 'application/json' },
    });
    expectProblem(answer, 400, 'malformed_body');
  });

  it('keeps the client’s own request id, and makes one up for an unsafe one', async () => {
    const own = await call('/v2/nowhere', { headers: { 'x-request-id': 'acceptance-trace-42' } });
    expect(expectProblem(own, 404, 'not_found').request_id).toBe('acceptance-trace-42');
    const unsafe = await fetch(gateway('/v2/nowhere'), { headers: { 'x-request-id': `${'x'.repeat(300)}<script>` } });
    const id = unsafe.headers.get('x-request-id');
    expect(id).toMatch(/\S/);
    expect(id).not.toContain('<script>');
  });

  it('answers a malformed or expired-looking bearer token with 401 and WWW-Authenticate error="invalid_token"', async () => {
    for (const authorization of ['Bearer not.a.jwt', 'Bearer ', 'Basic YTpi', 'Bearer eyJhbGciOiJFUzI1NiJ9.e30.AAAA']) {
      const answer = await call('/v2/users/me', { headers: { authorization } });
      expectProblem(answer, 401, 'unauthenticated');
      expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer .*error="invalid_token"/);
    }
  });
});
