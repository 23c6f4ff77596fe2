import http from 'node:http';
import net from 'node:net';
import { gzipSync } from 'node:zlib';

import { ApiClient, expectProblem, freshIp, TestStack } from '@acct/testing';

/** Contract §1: every non-2xx answer is problem+json with a stable code and the request id. */
describe('gateway errors are problem+json', () => {
  let stack: TestStack;
  let api: ApiClient;

  beforeAll(async () => {
    stack = await TestStack.start({ apps: ['platform', 'gateway'], env: { TRUSTED_PROXIES: '127.0.0.1' } });
    api = new ApiClient(stack.url(''));
  });

  afterAll(async () => {
    await stack?.close();
  });

  it('answers an unknown path with 404 not_found', async () => {
    expect(expectProblem(await api.call('/v2/nowhere'), 404, 'not_found').type).toMatch(/^urn:/);
    expectProblem(await api.call('/'), 404, 'not_found');
  });

  it('answers a known path with the wrong method with 405 and Allow', async () => {
    const response = await api.call('/v2/system/health', { method: 'DELETE' });
    expectProblem(response, 405, 'method_not_allowed');
    expect(response.headers.get('allow')).toBe('GET, HEAD');
  });

  it('answers a known path however the router reads it (percent-encoded, absolute form): 405 for another method', async () => {
    // RFC 3986 §6.2.2.2: `/v2/%6Fpenapi.json` is `/v2/openapi.json`, which the router serves to GET.
    expect((await api.call('/v2/%6Fpenapi.json')).status).toBe(200);
    const response = await api.call('/v2/%6Fpenapi.json', { method: 'PUT' });
    expectProblem(response, 405, 'method_not_allowed');
    expect(response.headers.get('allow')).toBe('GET, HEAD');
    // A request target in absolute form (RFC 9112 §3.2.2, which a server must accept) names that path too.
    const { port } = new URL(stack.url(''));
    const absolute = await new Promise<{ status?: number; allow?: string }>((resolve, reject) =>
      http
        .request(
          { host: '127.0.0.1', port, method: 'PUT', path: `http://127.0.0.1:${port}/v2/openapi.json` },
          (answer) => {
            answer.resume();
            resolve({ status: answer.statusCode, allow: answer.headers.allow });
          },
        )
        .on('error', reject)
        .end(),
    );
    expect(absolute).toEqual({ status: 405, allow: 'GET, HEAD' });
  });

  it('answers broken JSON with 400 malformed_body', async () => {
    const response = await api.call('/v2/users', {
      headers: { 'content-type': 'application/json' },
      raw: '{"email": ',
    });
    expectProblem(response, 400, 'malformed_body');
  });

  it('answers a body over 64 KiB with 413 payload_too_large', async () => {
    const response = await api.call('/v2/users', {
      json: { email: 'a@b.co', display_name: 'x'.repeat(70 * 1024) },
    });
    expectProblem(response, 413, 'payload_too_large');
  });

  it('answers a non-JSON body with 415 unsupported_media_type', async () => {
    for (const type of ['text/plain', 'application/xml']) {
      const response = await api.call('/v2/users', { headers: { 'content-type': type }, raw: 'email=a@b.co' });
      expectProblem(response, 415, 'unsupported_media_type');
    }
  });

  it('gives the token endpoint’s body refusals the OAuth error members too: invalid_request (RFC 6749 §5.2)', async () => {
    // Contract §4: the token endpoint's errors carry `error` and `error_description` beside the problem members.
    const refusals = [
      {
        status: 400,
        code: 'malformed_body',
        options: { headers: { 'content-type': 'application/json' }, raw: '{"grant_type": ' },
      },
      { status: 400, code: 'malformed_body', options: { json: ['grant_type', 'password'] } },
      {
        status: 413,
        code: 'payload_too_large',
        options: { json: { grant_type: 'password', username: 'x'.repeat(70 * 1024) } },
      },
      {
        status: 415,
        code: 'unsupported_media_type',
        options: { headers: { 'content-type': 'text/plain' }, raw: 'grant_type=password' },
      },
    ];
    for (const { status, code, options } of refusals) {
      const problem = expectProblem(await api.call('/v2/auth/token', { ...options, ip: freshIp() }), status, code);
      expect({ code, error: problem.error, error_description: problem.error_description }).toEqual({
        code,
        error: 'invalid_request',
        error_description: problem.detail,
      });
      // The token endpoint reads JSON and forms: a refused media type names both.
      if (status === 415)
        expect(problem.detail).toBe('Send the body as application/json or application/x-www-form-urlencoded.');
    }
  });

  it('refuses a JSON body naming a member twice as a form is refused (RFC 7493 §2.3, RFC 6749 §3.2)', async () => {
    // Which of the two a parser keeps is up to it: a proxy in front may have read the other one.
    const twice = [
      { path: '/v2/auth/token', raw: '{"grant_type":"client_credentials","client_id":"a","client_id":"b"}' },
      { path: '/v2/auth/revoke', raw: '{"token":"abc","token":"def","client_id":"web"}' },
      { path: '/v2/users', raw: '{"email":"a@b.co","display_name":"Ada","roles":["viewer"],"roles":["admin"]}' },
      {
        path: '/v2/users',
        raw: '{"email":"a@b.co","display_name":"Ada","profile":{"locale":"en","\\u006cocale":"fr"}}',
      },
    ];
    for (const { path, raw } of twice) {
      const response = await api.call(path, { headers: { 'content-type': 'application/json' }, raw, ip: freshIp() });
      expect({ path, raw, status: response.status }).toEqual({ path, raw, status: 400 });
      const problem = expectProblem(response, 400, 'malformed_body');
      if (path.startsWith('/v2/auth/')) expect(problem.error).toBe('invalid_request');
    }
    // The same name in different objects, or as a value, is no repetition: past the body, at the guard.
    const distinct = await api.call('/v2/users', {
      headers: { 'content-type': 'application/json' },
      raw: '{"email":"email","display_name":"Ada","profile":{"email":"x"},"roles":[{"email":1},{"email":2}]}',
    });
    expectProblem(distinct, 401, 'unauthenticated');
  });

  it('names what each OAuth endpoint reads when it refuses a media type: the sign-in form takes a form only', async () => {
    const form = 'Send the form as application/x-www-form-urlencoded.';
    const jsonOrForm = 'Send the body as application/json or application/x-www-form-urlencoded.';
    const text = { headers: { 'content-type': 'text/plain' }, raw: 'token=abc' };
    const refusals = [
      { path: '/v2/auth/authorize', options: text, detail: form },
      {
        path: '/v2/auth/authorize',
        options: { headers: { 'content-type': 'application/xml' }, raw: '<a/>' },
        detail: form,
      },
      { path: '/v2/auth/authorize', options: { json: { username: 'a@b.co' } }, detail: form },
      { path: '/v2/auth/revoke', options: text, detail: jsonOrForm },
      { path: '/v2/auth/introspect', options: text, detail: jsonOrForm },
    ];
    for (const { path, options, detail } of refusals) {
      const problem = expectProblem(await api.call(path, { ...options, ip: freshIp() }), 415, 'unsupported_media_type');
      expect({ path, detail: problem.detail, error_description: problem.error_description }).toEqual({
        path,
        detail,
        error_description: detail,
      });
    }
  });

  it('gives revocation’s and introspection’s control-character refusals the OAuth error members (RFC 7009 §2.2.1, RFC 7662 §2.3)', async () => {
    const refusals = [
      { path: '/v2/auth/revoke', options: { json: { token: 'abc\u0000', client_id: 'web' } }, field: 'token' },
      {
        path: '/v2/auth/introspect',
        options: { headers: { 'content-type': 'application/x-www-form-urlencoded' }, raw: 'token=abc%01' },
        field: 'token',
      },
      { path: '/v2/auth/revoke?hint=%1b', options: { json: { token: 'abc', client_id: 'web' } }, field: 'query.hint' },
    ];
    for (const { path, options, field } of refusals) {
      const problem = expectProblem(await api.call(path, { ...options, ip: freshIp() }), 400, 'validation_failed');
      expect({ path, fields: problem.errors?.map((error) => error.field), error: problem.error }).toEqual({
        path,
        fields: [field],
        error: 'invalid_request',
      });
      expect(problem.error_description).toBe(problem.detail);
    }
  });

  it('takes a JSON merge patch (application/merge-patch+json, RFC 7396) as the JSON body it is', async () => {
    for (const type of ['application/json', 'application/merge-patch+json']) {
      const response = await api.call(`/v2/users/${crypto.randomUUID()}`, {
        method: 'PATCH',
        headers: { 'content-type': type },
        raw: '{"display_name":"Ada"}',
      });
      // Past the body, at the guard: no token.
      expectProblem(response, 401, 'unauthenticated');
    }
    const broken = await api.call(`/v2/users/${crypto.randomUUID()}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      raw: '{"display_name": ',
    });
    expectProblem(broken, 400, 'malformed_body');
  });

  it('refuses a patch document of another format (JSON Patch) as 415, naming the formats it takes (RFC 5789 §2.2)', async () => {
    // A JSON Patch (RFC 6902) is an array of operations, not the object a merge patch is: it was read
    // as a JSON body that is not an object (400 malformed_body), which told the client its document was
    // broken rather than that the format is not one this resource takes.
    for (const type of ['application/json-patch+json', 'application/vnd.example+json']) {
      const response = await api.call(`/v2/users/${crypto.randomUUID()}`, {
        method: 'PATCH',
        headers: { 'content-type': type },
        raw: '[{"op":"replace","path":"/display_name","value":"Ada"}]',
      });
      expectProblem(response, 415, 'unsupported_media_type');
      expect(response.headers.get('accept-patch')).toBe('application/merge-patch+json, application/json');
    }
  });

  it('refuses a body in a content coding it does not decode as 415, naming the one it takes (RFC 9110 §8.4.1, §15.5.16)', async () => {
    // A gzip-compressed JSON body was read as its compressed bytes (`400 malformed_body`), and a body
    // labelled `br` whose bytes happened to be JSON was used as if it had none (a proxy in front that
    // decodes it read another request).
    for (const [coding, body] of [
      ['gzip', gzipSync(JSON.stringify({ email: 'a@b.co' }))],
      ['br', Buffer.from(JSON.stringify({ email: 'a@b.co' }))],
    ] as const) {
      const response = await api.call('/v2/users', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-encoding': coding },
        raw: body,
        ip: freshIp(),
      });
      expectProblem(response, 415, 'unsupported_media_type');
      expect(response.headers.get('accept-encoding')).toBe('identity');
    }
    // The token endpoint's refusal carries the OAuth members (contract §4); `identity` is no coding at all.
    const token = await api.call('/v2/auth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-encoding': 'gzip' },
      raw: gzipSync('grant_type=client_credentials&client_id=a&client_secret=b'),
      ip: freshIp(),
    });
    expect(expectProblem(token, 415, 'unsupported_media_type')).toMatchObject({ error: 'invalid_request' });
    const identity = await api.call('/v2/users', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'identity' },
      raw: '{"email": ',
      ip: freshIp(),
    });
    expectProblem(identity, 400, 'malformed_body');
  });

  it('does not ask for a body over 64 KiB it will refuse (Expect: 100-continue, RFC 9110 §10.1.1)', async () => {
    // Node answered `100 Continue` before the 413: the client then sent the whole body into a
    // connection being closed (curl asks so for large uploads), and could lose the 413 to a reset.
    const { port } = new URL(stack.url(''));
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(port), '127.0.0.1');
      let received = '';
      socket.on('data', (chunk) => (received += chunk.toString('latin1')));
      socket.on('close', () => resolve(received));
      socket.on('error', reject);
      socket.write(
        `POST /v2/users HTTP/1.1\r\nHost: gateway\r\nX-Forwarded-For: ${freshIp()}\r\nContent-Type: application/json\r\n` +
          `Expect: 100-continue\r\nContent-Length: ${64 * 1024 + 1}\r\n\r\n`,
      );
    });
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 413 Payload Too Large');
    expect(answer).toContain('"code":"payload_too_large"');
    // Within the limit the client is still asked for it, and the route reads it.
    const within = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(port), '127.0.0.1');
      let received = '';
      socket.on('data', (chunk) => {
        received += chunk.toString('latin1');
        if (received === 'HTTP/1.1 100 Continue\r\n\r\n') socket.write('{"email": ');
      });
      socket.on('close', () => resolve(received));
      socket.on('error', reject);
      socket.write(
        `POST /v2/users HTTP/1.1\r\nHost: gateway\r\nX-Forwarded-For: ${freshIp()}\r\nContent-Type: application/json\r\n` +
          'Expect: 100-continue\r\nContent-Length: 10\r\nConnection: close\r\n\r\n',
      );
    });
    expect(within).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 400 /);
    expect(within).toContain('"code":"malformed_body"');
  });

  it('keeps the client request id on errors too', async () => {
    const response = await api.call('/v2/nowhere', { headers: { 'X-Request-Id': 'trace-42' } });
    const problem = expectProblem(response, 404, 'not_found');
    expect(problem.request_id).toBe('trace-42');
  });

  it('asks for a bearer token on protected routes (RFC 6750)', async () => {
    // Contract §1: no, malformed, expired or badly signed token alike are 401 with
    // `WWW-Authenticate: Bearer error="invalid_token"`, so a client that renews its token on that
    // challenge does so when its token went missing too (as the activation endpoint already answers).
    for (const path of ['/v2/users/me', '/v2/system/quota']) {
      const response = await api.call(path);
      expectProblem(response, 401, 'unauthenticated');
      expect(response.headers.get('www-authenticate')).toBe('Bearer realm="account-platform", error="invalid_token"');
    }
    const garbage = await api.call('/v2/users/me', { token: 'not.a.jwt' });
    expectProblem(garbage, 401, 'unauthenticated');
    expect(garbage.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it('answers 503 service_unavailable with Retry-After, quickly, when a backend is down', async () => {
    // No auth service runs in this stack: the token endpoint's backend is unreachable.
    const started = Date.now();
    const response = await api.call('/v2/auth/token', {
      json: { grant_type: 'password', username: 'a@b.co', password: 'whatever1' },
    });
    expect(Date.now() - started).toBeLessThan(3000);
    expectProblem(response, 503, 'service_unavailable');
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });
});
