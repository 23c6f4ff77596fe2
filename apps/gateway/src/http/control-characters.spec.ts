import Fastify, { FastifyInstance } from 'fastify';

import { refuseControlCharacters } from './control-characters';

describe('refuseControlCharacters', () => {
  let app: FastifyInstance;
  const reached: string[] = [];

  beforeAll(async () => {
    app = Fastify();
    refuseControlCharacters(app);
    for (const url of ['/v2/users/:id', '/v2/auth/token', '/v2/auth/authorize']) {
      app.post(url, (request, reply) => {
        reached.push(request.url);
        return reply.send({ ok: true });
      });
    }
    for (const url of ['/v2/users', '/v2/auth/authorize']) {
      app.get(url, (request, reply) => {
        reached.push(request.url);
        return reply.send({ ok: true });
      });
    }
    await app.ready();
  });

  afterAll(() => app.close());
  beforeEach(() => (reached.length = 0));

  const fieldsOf = (body: string) =>
    (JSON.parse(body) as { errors?: Array<{ field: string }> }).errors?.map((error) => error.field);

  it('answers 400 validation_failed naming every field with a control character, before the handler runs', async () => {
    const answer = await app.inject({
      method: 'POST',
      url: '/v2/users/a%00b?dimension=api%07',
      payload: { display_name: 'Ada\u0000', profile: { tags: ['ok', 'bad\u009f'] }, fine: 'text' },
    });
    expect(answer.statusCode).toBe(400);
    expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(answer.body)).toMatchObject({ code: 'validation_failed' });
    expect(fieldsOf(answer.body)?.sort()).toEqual(
      ['path.id', 'query.dimension', 'display_name', 'profile.tags.1'].sort(),
    );
    expect(reached).toEqual([]);
  });

  it('lets a request without control characters through to its handler, Unicode text included', async () => {
    const answer = await app.inject({
      method: 'POST',
      url: '/v2/users/abc',
      payload: { display_name: 'Zoë 李', note: 'plain' },
    });
    expect(answer.statusCode).toBe(200);
    expect(reached).toEqual(['/v2/users/abc']);
  });

  it('refuses a control character in a key as well as in a value, and a whole string body as (body)', async () => {
    const keyed = await app.inject({ method: 'POST', url: '/v2/users/abc', payload: { 'na\u0001me': 'x' } });
    expect(keyed.statusCode).toBe(400);
    expect(fieldsOf(keyed.body)).toEqual(['na\\u0001me']);
    const text = await app.inject({
      method: 'POST',
      url: '/v2/users/abc',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify('line\u0000'),
    });
    expect(fieldsOf(text.body)).toEqual(['(body)']);
  });

  it("leaves the token endpoint's parameters to auth, which audits the attempt", async () => {
    const answer = await app.inject({
      method: 'POST',
      url: '/v2/auth/token',
      payload: { grant_type: 'password', username: 'ada\u0000@example.test', password: 'x' },
    });
    expect(answer.statusCode).toBe(200);
    expect(reached).toEqual(['/v2/auth/token']);
  });

  it("leaves the login form's typed fields to auth but refuses its other fields here", async () => {
    const typed = await app.inject({
      method: 'POST',
      url: '/v2/auth/authorize',
      payload: { username: 'ada\u0000', password: 'p\u0007', mfa_code: '12\u00003', client_id: 'web' },
    });
    expect(typed.statusCode).toBe(200);
    const other = await app.inject({
      method: 'POST',
      url: '/v2/auth/authorize',
      payload: { username: 'ada', client_id: 'web\u0000' },
    });
    expect(other.statusCode).toBe(400);
    expect(fieldsOf(other.body)).toEqual(['client_id']);
  });

  it("leaves the authorization request's query to its controller (error page or redirect), no other query", async () => {
    const authorize = await app.inject({ method: 'GET', url: '/v2/auth/authorize?client_id=web&state=a%07b' });
    expect(authorize.statusCode).toBe(200);
    expect(reached).toEqual(['/v2/auth/authorize?client_id=web&state=a%07b']);
    const form = await app.inject({ method: 'POST', url: '/v2/auth/authorize?state=a%07b', payload: {} });
    expect(form.statusCode).toBe(400);
    expect(fieldsOf(form.body)).toEqual(['query.state']);
    const users = await app.inject({ method: 'GET', url: '/v2/users?state=a%07b' });
    expect(users.statusCode).toBe(400);
  });

  it('keeps an unknown path 404 whatever it holds', async () => {
    const answer = await app.inject({ method: 'POST', url: '/v2/nowhere%00', payload: { a: '\u0000' } });
    expect(answer.statusCode).toBe(404);
  });
});
