import { TestStack } from '@acct/testing';

interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  request_id: string;
  errors?: Array<{ field: string; message: string }>;
}

/** Contract §1: every non-2xx answer is problem+json with a stable code and the request id. */
describe('gateway errors are problem+json', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await TestStack.start({ apps: ['platform', 'gateway'] });
  });

  afterAll(async () => {
    await stack?.close();
  });

  async function expectProblem(response: Response, status: number, code: string): Promise<Problem> {
    expect(response.status).toBe(status);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const problem = (await response.json()) as Problem;
    expect(problem).toMatchObject({ status, code, type: expect.stringMatching(/^urn:/) });
    expect(typeof problem.title).toBe('string');
    expect(typeof problem.detail).toBe('string');
    expect(problem.request_id).toBe(response.headers.get('x-request-id'));
    expect(JSON.stringify(problem)).not.toMatch(/at \w+ \(|\.ts:\d+|SELECT |127\.0\.0\.1/);
    return problem;
  }

  it('answers an unknown path with 404 not_found', async () => {
    await expectProblem(await fetch(stack.url('/v2/nowhere')), 404, 'not_found');
    await expectProblem(await fetch(stack.url('/')), 404, 'not_found');
  });

  it('answers a known path with the wrong method with 405 and Allow', async () => {
    const response = await fetch(stack.url('/v2/system/health'), { method: 'DELETE' });
    await expectProblem(response, 405, 'method_not_allowed');
    expect(response.headers.get('allow')).toBe('GET');
  });

  it('answers broken JSON with 400 malformed_body', async () => {
    const response = await fetch(stack.url('/v2/users'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"email": ',
    });
    await expectProblem(response, 400, 'malformed_body');
  });

  it('answers a body over 64 KiB with 413 payload_too_large', async () => {
    const response = await fetch(stack.url('/v2/users'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'a@b.co', display_name: 'x'.repeat(70 * 1024) }),
    });
    await expectProblem(response, 413, 'payload_too_large');
  });

  it('answers a non-JSON body with 415 unsupported_media_type', async () => {
    for (const type of ['text/plain', 'application/xml']) {
      const response = await fetch(stack.url('/v2/users'), {
        method: 'POST',
        headers: { 'content-type': type },
        body: 'email=a@b.co',
      });
      await expectProblem(response, 415, 'unsupported_media_type');
    }
  });

  it('keeps the client request id on errors too', async () => {
    const response = await fetch(stack.url('/v2/nowhere'), { headers: { 'X-Request-Id': 'trace-42' } });
    const problem = await expectProblem(response, 404, 'not_found');
    expect(problem.request_id).toBe('trace-42');
  });

  it('asks for a bearer token on protected routes (RFC 6750)', async () => {
    const response = await fetch(stack.url('/v2/users/me'));
    await expectProblem(response, 401, 'unauthenticated');
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer realm=/);
    const garbage = await fetch(stack.url('/v2/users/me'), { headers: { authorization: 'Bearer not.a.jwt' } });
    await expectProblem(garbage, 401, 'unauthenticated');
    expect(garbage.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it('answers 503 service_unavailable with Retry-After, quickly, when a backend is down', async () => {
    // No auth service runs in this stack: the token endpoint's backend is unreachable.
    const started = Date.now();
    const response = await fetch(stack.url('/v2/auth/token'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'password', username: 'a@b.co', password: 'whatever1' }),
    });
    expect(Date.now() - started).toBeLessThan(3000);
    await expectProblem(response, 503, 'service_unavailable');
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });
});
