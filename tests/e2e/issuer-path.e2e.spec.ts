import { ApiClient, Bootstrap, expectProblem, freshIp, jwtPart, TestStack } from '@acct/testing';

/** A gateway behind a proxy's prefix: its issuer has a path. */
const ISSUER = 'https://accounts.issuer-path.test/tenant-a';
const WELL_KNOWN = '/.well-known/oauth-authorization-server';

/**
 * RFC 8414 §3.1: the metadata of an issuer with a path is at the well-known path with the issuer's path
 * after it, which is where a standard client (oauth4webapi, openid-client) looks for it.
 */
describe('an issuer with a path (RFC 8414 §3.1)', () => {
  let stack: TestStack;
  let api: ApiClient;
  let org: Bootstrap;

  beforeAll(async () => {
    stack = await TestStack.start({ apps: ['identity', 'auth', 'gateway'], env: { TOKEN_ISSUER: ISSUER } });
    api = new ApiClient(stack.url(''), { ip: freshIp });
    org = stack.cli<Bootstrap>(
      ...['bootstrap', '--org', 'issuer-path', '--email', 'admin@issuer-path.test'],
      ...['--password', 'issuer-path-admin-1'],
    );
  });

  afterAll(async () => {
    await stack?.close();
  });

  it('serves the metadata at the issuer path, cacheable and readable by browser apps, and at the bare well-known path', async () => {
    const atPath = await api.call<Record<string, unknown>>(`${WELL_KNOWN}/tenant-a`, {
      headers: { origin: 'https://app.issuer-path.test' },
    });
    expect(atPath.status).toBe(200);
    expect(atPath.body).toMatchObject({
      issuer: ISSUER,
      token_endpoint: `${ISSUER}/v2/auth/token`,
      jwks_uri: `${ISSUER}/v2/auth/jwks`,
    });
    expect(atPath.headers.get('cache-control')).toBe('public, max-age=3600');
    expect(atPath.headers.get('access-control-allow-origin')).toBe('*');
    const etag = atPath.headers.get('etag')!;
    expect((await api.call(`${WELL_KNOWN}/tenant-a`, { headers: { 'if-none-match': etag } })).status).toBe(304);

    const bare = await api.call(WELL_KNOWN);
    expect({ status: bare.status, body: bare.body, etag: bare.headers.get('etag') }).toEqual({
      status: 200,
      body: atPath.body,
      etag,
    });
  });

  it("is 404 at another path under the well-known one, and 405 for another method on the issuer's", async () => {
    expectProblem(await api.call(`${WELL_KNOWN}/tenant-b`), 404, 'not_found');
    expectProblem(await api.call(`${WELL_KNOWN}/tenant-a/more`), 404, 'not_found');
    expectProblem(await api.call(`${WELL_KNOWN}/tenant-a`, { json: {} }), 405, 'method_not_allowed');
  });

  it('issues tokens naming the issuer with its path, which the gateway accepts', async () => {
    const token = await api.clientToken(org);
    expect(jwtPart(token.access_token, 1).iss).toBe(ISSUER);
    const limits = await api.call('/v2/system/rate-limits', { token: token.access_token });
    expect(limits.status).toBe(200);
  });
});
