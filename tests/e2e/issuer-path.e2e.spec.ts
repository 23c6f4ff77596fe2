import { createHash, randomBytes } from 'node:crypto';

import { ApiClient, Bootstrap, expectProblem, freshIp, jwtPart, TestStack } from '@acct/testing';

/** A gateway behind a proxy's prefix: its issuer has a path. */
const ISSUER = 'https://accounts.issuer-path.test/tenant-a';
const WELL_KNOWN = '/.well-known/oauth-authorization-server';
const APP = 'https://app.issuer-path.test/callback';
const ADMIN_PASSWORD = 'issuer-path-admin-1';

/**
 * RFC 8414 §3.1: the metadata of an issuer with a path is at the well-known path with the issuer's path
 * after it, which is where a standard client (oauth4webapi, openid-client) looks for it.
 */
describe('an issuer with a path (RFC 8414 §3.1)', () => {
  let stack: TestStack;
  let api: ApiClient;
  let org: Bootstrap;

  beforeAll(async () => {
    stack = await TestStack.start({
      apps: ['identity', 'auth', 'gateway'],
      env: { TOKEN_ISSUER: ISSUER, TRUSTED_PROXIES: '127.0.0.1' },
    });
    api = new ApiClient(stack.url(''), { ip: freshIp });
    org = stack.cli<Bootstrap>(
      ...['bootstrap', '--org', 'issuer-path', '--email', 'admin@issuer-path.test'],
      ...['--password', ADMIN_PASSWORD],
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

  it("answers a user's creation with a Location under the issuer path, where the proxy passes it on", async () => {
    const { access_token: token } = await api.clientToken(org);
    const email = `located-${randomBytes(4).toString('hex')}@issuer-path.test`;
    const created = await api.call<{ id: string }>('/v2/users', {
      token,
      json: { email, display_name: 'Located', send_activation: false },
    });
    expect(created.status).toBe(201);
    // RFC 9110 §10.2.2: the client resolves it against the URI it posted to, the issuer's.
    const location = new URL(created.headers.get('location') ?? '', `${ISSUER}/v2/users`);
    expect(location.href).toBe(`${ISSUER}/v2/users/${created.body.id}`);
  });

  it('issues tokens naming the issuer with its path, which the gateway accepts', async () => {
    const token = await api.clientToken(org);
    expect(jwtPart(token.access_token, 1).iss).toBe(ISSUER);
    const limits = await api.call('/v2/system/rate-limits', { token: token.access_token });
    expect(limits.status).toBe(200);
  });

  /**
   * Discovery names the human documentation under the issuer (`service_documentation`): behind the
   * proxy, every file that page loads (its style, scripts, the OpenAPI document the UI reads) must be
   * under the prefix too, or the page stays blank.
   */
  it('serves the documentation discovery names, with everything it loads, under the issuer path', async () => {
    /** The proxy: only URLs under the issuer reach the gateway, without the prefix. */
    const viaProxy = (url: URL) =>
      url.origin === new URL(ISSUER).origin && url.pathname.startsWith('/tenant-a/')
        ? fetch(stack.url(url.pathname.replace(/^\/tenant-a/, '')), { headers: { 'x-forwarded-for': freshIp() } })
        : Promise.resolve(new Response('not routed', { status: 404 }));
    const metadata = (await api.call<{ service_documentation: string }>(`${WELL_KNOWN}/tenant-a`)).body;
    const docs = new URL(metadata.service_documentation);
    expect(docs.href).toBe(`${ISSUER}/docs`);
    const page = await viaProxy(docs);
    expect(page.status).toBe(200);
    const html = await page.text();
    const loaded = [...html.matchAll(/(?:href|src)="([^"]+)"/g)].map((match) => new URL(match[1], docs));
    expect(loaded.length).toBeGreaterThanOrEqual(4);
    for (const url of loaded)
      expect({ url: url.href, status: (await viaProxy(url)).status }).toEqual({ url: url.href, status: 200 });
    // The Swagger UI's own script names the document it reads, which the browser resolves against the page.
    const init = loaded.find((url) => url.pathname.endsWith('/swagger-ui-init.js'))!;
    const spec = /url: '([^']+)'/.exec(await (await viaProxy(init)).text())![1];
    const documentUrl = new URL(spec, docs);
    const document = await viaProxy(documentUrl);
    expect({ url: documentUrl.href, status: document.status }).toEqual({
      url: `${ISSUER}/v2/openapi.json`,
      status: 200,
    });
    // "Try it out" sends an operation to the document's server (OpenAPI 3.1: `/` when it names none),
    // resolved against the document's URL: it must be under the issuer too, or the proxy never sees it.
    const { servers, paths } = (await document.json()) as { servers?: { url: string }[]; paths: object };
    expect(paths).toHaveProperty(['/v2/auth/jwks']);
    const server = new URL(servers?.[0]?.url ?? '/', documentUrl).href.replace(/\/$/, '');
    const tried = new URL(`${server}/v2/auth/jwks`);
    expect({ url: tried.href, status: (await viaProxy(tried)).status }).toEqual({
      url: `${ISSUER}/v2/auth/jwks`,
      status: 200,
    });
  });

  /**
   * The browser sees the login page at the issuer's URL (`…/tenant-a/v2/auth/authorize`); the proxy
   * strips the prefix. The form must post back there, and the CSRF cookie must be sent there.
   */
  it('has the login page post to the authorization endpoint under the issuer path, where its CSRF cookie is sent', async () => {
    const spa = stack.cli<{ client_id: string }>(
      ...['create-client', '--org-id', org.org_id, '--name', 'Browser app', '--type', 'public'],
      ...['--grant-types', 'authorization_code', '--redirect-uris', APP, '--scopes', 'users:read'],
    ).client_id;
    const challenge = createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url');
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: spa,
      redirect_uri: APP,
      scope: 'users:read',
      state: 'state-1',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const ip = freshIp();
    const page = await fetch(stack.url(`/v2/auth/authorize?${query.toString()}`), {
      redirect: 'manual',
      headers: { 'x-forwarded-for': ip },
    });
    expect(page.status).toBe(200);
    const html = await page.text();
    // Where the browser, at the issuer's URL, sends the form.
    const action = /<form method="post" action="([^"]*)">/.exec(html)?.[1];
    const pageUrl = new URL(`${ISSUER}/v2/auth/authorize?${query.toString()}`);
    const posted = new URL(action ?? '', pageUrl);
    expect(`${posted.origin}${posted.pathname}`).toBe(`${ISSUER}/v2/auth/authorize`);
    // The cookie's path (RFC 6265 §5.1.4) must cover that path, or the form is refused as CSRF.
    const cookie = page.headers.get('set-cookie') ?? '';
    const cookiePath = /;\s*Path=([^;]*)/i.exec(cookie)?.[1] ?? '';
    expect(posted.pathname === cookiePath || posted.pathname.startsWith(`${cookiePath.replace(/\/$/, '')}/`)).toBe(
      true,
    );
    expect(cookiePath.startsWith('/tenant-a/')).toBe(true);

    // The proxy strips the prefix: the form reaches the gateway's own path, and the sign-in goes through.
    const fields = Object.fromEntries(
      [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1], m[2]]),
    ) as Record<string, string>;
    const answer = await fetch(stack.url(posted.pathname.replace(/^\/tenant-a/, '')), {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'x-forwarded-for': ip,
        'content-type': 'application/x-www-form-urlencoded',
        cookie: cookie.split(';')[0],
      },
      body: new URLSearchParams({ ...fields, username: 'admin@issuer-path.test', password: ADMIN_PASSWORD }).toString(),
    });
    expect(answer.status).toBe(303);
    const location = new URL(answer.headers.get('location')!);
    expect(location.searchParams.get('iss')).toBe(ISSUER);
    expect(location.searchParams.get('code')).toEqual(expect.any(String));
  });
});
