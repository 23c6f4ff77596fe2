import { createHash, randomBytes } from 'node:crypto';

import { request, TestStack } from '@acct/testing';
import fc from 'fast-check';

interface Bootstrap {
  org_id: string;
  client_id: string;
  client_secret: string;
}

const SEED = Number(process.env.FUZZ_SEED ?? 20_261_123);
const EMAIL = 'admin@addresses.test';
const PASSWORD = 'admin-pass-1';
/** The login page's answer over the per-IP `auth` limit (zh-CN or English), as opposed to the lockout's. */
const PER_IP_LIMIT_PAGE = /Too many requests from your network|来自您所在网络的请求过多/;

const octet = fc.integer({ min: 1, max: 254 });
const hextet = fc.integer({ min: 0, max: 0xffff });
const hex = (value: number) => value.toString(16);

/** Ways one IPv4 address reaches the gateway in X-Forwarded-For: plain, IPv4-mapped IPv6, with a port. */
const ipv4Spellings = fc.tuple(octet, octet, octet, octet).map(([a, b, c, d]) => {
  const dotted = `${a}.${b}.${c}.${d}`;
  return [
    dotted,
    `::ffff:${dotted}`,
    `${dotted}:${1024 + a}`,
    `[::FFFF:${hex((a << 8) | b)}:${hex((c << 8) | d)}]:443`,
  ];
});

/** Addresses of one IPv6 /64, written differently: zero-padded, upper case, bracketed with a port. */
const ipv6NetworkSpellings = fc.tuple(hextet, hextet, hextet, hextet, hextet).map(([a, b, c, d, host]) => {
  const prefix = `2001:db8:${hex(a)}:${hex(b)}`;
  const padded = [0x2001, 0xdb8, a, b].map((part) => hex(part).padStart(4, '0').toUpperCase()).join(':');
  return [
    `${prefix}::${hex(host)}`,
    `${padded}:0000:0000:0000:${hex(c).padStart(4, '0')}`,
    `[${prefix}:${hex(d)}::1]:8443`,
    `${prefix}:ffff:ffff:ffff:${hex(host)}`,
  ];
});

/**
 * Issue 11 item 8: one client, one key. However a trusted proxy writes a client's address (IPv4-mapped
 * IPv6, zero padding, case, a `:port` suffix) and whichever address of one IPv6 /64 it uses, the
 * per-IP rate limits and the (username, IP) lockout count it once; a value that is not an address
 * counts as the proxy that sent it.
 */
describe('one canonical client address', () => {
  let stack: TestStack;
  let org: Bootstrap;

  const tokenRequest = (forwardedFor: string, body: Record<string, string>) =>
    request<{ code?: string; access_token?: string }>(stack.url('/v2/auth/token'), {
      body,
      headers: { 'x-forwarded-for': forwardedFor },
    });
  const clientCredentials = (forwardedFor: string) =>
    tokenRequest(forwardedFor, {
      grant_type: 'client_credentials',
      client_id: org.client_id,
      client_secret: org.client_secret,
    });

  beforeAll(async () => {
    stack = await TestStack.start({
      apps: ['identity', 'auth', 'platform', 'gateway'],
      env: { TRUSTED_PROXIES: '127.0.0.1' },
    });
    org = stack.cli<Bootstrap>('bootstrap', '--org', 'addresses', '--email', EMAIL, '--password', PASSWORD);
  });

  afterAll(async () => {
    await stack?.close();
  });

  // The auth tier admits 3 requests per key from a full bucket: the fourth spelling of the same client
  // is refused only if all four count in one bucket.
  it.each([
    ['an IPv4 address (plain, IPv4-mapped, with a port)', ipv4Spellings],
    ['one IPv6 /64 (any host, zero-padded, upper case, with a port)', ipv6NetworkSpellings],
  ])('counts every spelling of %s in one per-IP bucket', async (_name, spellings) => {
    const seen: string[] = [];
    await fc.assert(
      fc.asyncProperty(spellings, async (forms) => {
        const statuses: number[] = [];
        for (const form of forms) statuses.push((await clientCredentials(form)).status);
        seen.push(forms.join(' | '));
        expect(statuses).toEqual([200, 200, 200, 429]);
      }),
      { seed: SEED, numRuns: 8, endOnFailure: true },
    );
    console.log(`FUZZ_SEED=${SEED}: ${seen.length} clients, e.g. ${seen[0]}`);
  });

  it('counts a forwarded value that is not an address as the proxy that sent it', async () => {
    const garbage = ['unknown', 'garbage', '1.2.3', '3232235777', '0x7f.0.0.1', '010.0.0.1', '[::1', 'a.b.c.d:80'];
    const statuses: number[] = [];
    for (const value of garbage.slice(0, 3)) statuses.push((await clientCredentials(value)).status);
    // The proxy's own bucket (127.0.0.1) is spent now, whichever garbage it forwards next.
    for (const value of garbage.slice(3)) statuses.push((await clientCredentials(value)).status);
    statuses.push((await clientCredentials('127.0.0.1')).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429, 429, 429, 429, 429]);
  });

  it('locks (username, IP) across every spelling of the client and every address of its /64', async () => {
    const forms = [
      '2001:db8:77:1::1',
      '2001:0DB8:0077:0001:0000:0000:0000:0002',
      '[2001:db8:77:1::3]:443',
      '2001:db8:77:1:ffff::4',
      '2001:db8:77:1:abcd:0:0:5',
      '[2001:DB8:77:1::6]',
    ];
    // The auth tier refills one request every 6 s: wait as Retry-After says, the lockout is what is checked.
    const attempt = async (forwardedFor: string, password: string) => {
      for (;;) {
        const answer = await tokenRequest(forwardedFor, { grant_type: 'password', username: EMAIL, password });
        if (answer.body.code !== 'rate_limited') return answer;
        await new Promise((resolve) => setTimeout(resolve, Number(answer.headers.get('retry-after')) * 1000));
      }
    };
    for (const form of forms.slice(0, 5)) expect((await attempt(form, 'wrong-pass-1')).body.code).toBe('invalid_grant');
    const locked = await attempt(forms[5], PASSWORD);
    expect(locked.status).toBe(429);
    expect(locked.body.code).toBe('login_locked');
    // Another /64 is another client.
    expect((await attempt('2001:db8:77:2::1', PASSWORD)).status).toBe(200);
  }, 120_000);

  // Contract §6: the login page's attempts go through the same lockout as the token endpoint's, so
  // its client is the same canonical address: a forwarded value that is not an address is the proxy.
  it('locks (username, IP) at the login page too when the forwarded values are not addresses', async () => {
    const redirectUri = 'https://app.addresses.test/callback';
    const spa = stack.cli<{ client_id: string }>(
      ...['create-client', '--org-id', org.org_id, '--name', 'Browser app', '--type', 'public'],
      ...['--grant-types', 'authorization_code', '--redirect-uris', redirectUri, '--scopes', 'users:read'],
    );
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: spa.client_id,
      redirect_uri: redirectUri,
      scope: 'users:read',
      state: 's',
      code_challenge: createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url'),
      code_challenge_method: 'S256',
    });
    /** Waits out the per-IP `auth` tier (its page says so), not the lockout ("too many attempts"). */
    const unthrottled = async (send: () => Promise<Response>): Promise<Response> => {
      for (;;) {
        const response = await send();
        if (response.status !== 429 || !PER_IP_LIMIT_PAGE.test(await response.clone().text())) return response;
        await new Promise((resolve) => setTimeout(resolve, Number(response.headers.get('retry-after')) * 1000));
      }
    };
    const page = await unthrottled(() =>
      fetch(stack.url(`/v2/auth/authorize?${query.toString()}`), { headers: { 'x-forwarded-for': 'unknown' } }),
    );
    expect(page.status).toBe(200);
    const fields = Object.fromEntries(
      [...(await page.text()).matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((match) => [
        match[1],
        match[2].replace(/&amp;/g, '&'),
      ]),
    );
    const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0];
    const signIn = (forwardedFor: string, password: string) =>
      unthrottled(() =>
        fetch(stack.url('/v2/auth/authorize'), {
          method: 'POST',
          redirect: 'manual',
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            'x-forwarded-for': forwardedFor,
            cookie,
          },
          body: new URLSearchParams({ ...fields, username: EMAIL, password }).toString(),
        }),
      );
    const garbage = ['unknown', 'garbage', '1.2.3', '0x7f.0.0.1', 'a.b.c.d:80', '010.0.0.1'];
    for (const value of garbage.slice(0, 5)) expect((await signIn(value, 'wrong-pass-1')).status).toBe(400);
    const locked = await signIn(garbage[5], PASSWORD);
    expect(locked.status).toBe(429);
    expect(locked.headers.get('location')).toBeNull();
  }, 120_000);
});
