import { randomUUID } from 'node:crypto';

import {
  call,
  CaughtEvent,
  EventTap,
  expectProblem,
  issue,
  mailTo,
  newOrg,
  raiseLimit,
  stack,
  tokenRequest,
  uniqueEmail,
  User,
  waitForMail,
} from './support/client';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const DAY_MS = 24 * 3600 * 1000;

/** A docs/events.md envelope, version 1, published with its id as Nats-Msg-Id. */
function expectEnvelope(event: CaughtEvent, type: string): Record<string, unknown> {
  expect(event.subject).toBe(type);
  // `request_id` (the X-Request-Id of the request behind the event) and `actor_id` (the user whose
  // request it was: a user or client id, docs/events.md) are optional.
  const optional = ['request_id', 'actor_id'];
  const keys = Object.keys(event.envelope).filter((key) => !optional.includes(key));
  expect(keys.sort()).toEqual(['data', 'id', 'occurred_at', 'type', 'version']);
  if ('request_id' in event.envelope) expect(event.envelope.request_id).toEqual(expect.any(String));
  if ('actor_id' in event.envelope) expect(event.envelope.actor_id).toEqual(expect.any(String));
  expect(event.envelope).toEqual(
    expect.objectContaining({
      id: expect.stringMatching(UUID),
      type,
      version: 1,
      occurred_at: expect.stringMatching(ISO),
    }),
  );
  expect(event.msgId).toBe(event.envelope.id);
  return event.envelope.data;
}

const linkIn = (text: string) => /(https?:\/\/\S+\/activate\?token=[^\s"<>]+)/.exec(text)?.[1];
const tokenOf = (link: string) => new URL(link).searchParams.get('token')!;

/**
 * Interface §3 (pending → active through the activation link), contract §3 (reset-password,
 * /v2/users/me/password, the events): the real e-mail from the suite's SMTP server, the real events on NATS.
 */
describe('activation, password reset and their events', () => {
  let org: Awaited<ReturnType<typeof newOrg>>;
  let events: EventTap;

  const create = (json: Record<string, unknown>) => call<User>('/v2/users', { token: org.clientToken, json });
  const setPassword = (token: string, password: unknown) =>
    call<User>('/v2/users/me/password', { token, json: { password } });
  const login = (username: string, password: string) => tokenRequest({ grant_type: 'password', username, password });

  beforeAll(async () => {
    org = await newOrg('activation');
    raiseLimit(org.org_id, 'users.write');
    events = await EventTap.open();
  });

  afterAll(async () => {
    await events?.close();
  });

  it('sends the activation e-mail and publishes identity.user.created; the link’s page and token make the user active', async () => {
    const email = uniqueEmail('ada');
    const created = await create({
      email,
      display_name: 'Ada',
      profile: { locale: 'en-GB', timezone: 'Europe/London' },
    });
    expect(created.status).toBe(201);
    expect(created.body.status).toBe('pending');

    const event = await events.waitFor('identity.user.created', (data) => data.user_id === created.body.id);
    const data = expectEnvelope(event, 'identity.user.created');
    expect(data).toEqual({
      user_id: created.body.id,
      org_id: org.org_id,
      email,
      display_name: 'Ada',
      locale: 'en-GB',
      send_activation: true,
      activation_token: expect.any(String),
      activation_expires_at: expect.stringMatching(ISO),
    });
    const expiresIn = new Date(data.activation_expires_at as string).getTime() - Date.now();
    expect(expiresIn).toBeGreaterThan(DAY_MS - 10 * 60_000);
    expect(expiresIn).toBeLessThanOrEqual(DAY_MS);

    const mail = await waitForMail(email);
    expect(mail.subject).toBe('Activate your account');
    expect(mail.messageId).toBe(`<${event.envelope.id}@account-platform>`);
    const link = linkIn(mail.text);
    expect(link).toBeDefined();
    expect(link!.startsWith(`${stack.gatewayUrl}/activate?token=`)).toBe(true);
    expect(mail.html).toContain(`${stack.gatewayUrl}/activate?token=`);
    expect(tokenOf(link!)).toBe(data.activation_token);

    const page = await fetch(link!);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await page.text()).toContain('<form');

    expectProblem(await login(email, 'ada-password-1'), 400, 'invalid_grant');
    const short = expectProblem(await setPassword(tokenOf(link!), 'short'), 400, 'validation_failed');
    expect(short.errors?.map((error) => error.field)).toEqual(['password']);

    const activated = await setPassword(tokenOf(link!), 'ada-password-1');
    expect(activated.status).toBe(200);
    expect(Object.keys(activated.body).sort()).toEqual([
      'created_at',
      'display_name',
      'email',
      'id',
      'roles',
      'status',
    ]);
    expect(activated.body).toEqual(expect.objectContaining({ id: created.body.id, status: 'active' }));
    const activatedEvent = await events.waitFor('identity.user.activated', (d) => d.user_id === created.body.id);
    expect(expectEnvelope(activatedEvent, 'identity.user.activated')).toEqual({
      user_id: created.body.id,
      org_id: org.org_id,
    });

    const read = await call<User>(`/v2/users/${created.body.id}`, { token: org.clientToken });
    expect(read.body.status).toBe('active');
    const set = await login(email, 'ada-password-1');
    expect(set.status).toBe(200);
    expect(set.body.token_type).toBe('Bearer');

    // One-time: the same link again is refused, and the user is activated once.
    expectProblem(await setPassword(tokenOf(link!), 'another-password-1'), 401, 'unauthenticated');
    expect(events.all('identity.user.activated', (d) => d.user_id === created.body.id)).toHaveLength(1);
    expect(await mailTo(email)).toHaveLength(1);
  });

  it('writes in the default locale zh-CN when no profile is given', async () => {
    const email = uniqueEmail('lei');
    const created = await create({ email, display_name: '李雷' });
    const event = await events.waitFor('identity.user.created', (data) => data.user_id === created.body.id);
    expect(event.envelope.data.locale).toBe('zh-CN');
    expect((await waitForMail(email)).subject).toBe('激活您的账户');
  });

  it('sends nothing with send_activation: false; reset-password send_email: false hands out the one-time token', async () => {
    const email = uniqueEmail('quiet');
    const created = await create({ email, display_name: 'Quiet', send_activation: false });
    const event = await events.waitFor('identity.user.created', (data) => data.user_id === created.body.id);
    const data = expectEnvelope(event, 'identity.user.created');
    expect(data.send_activation).toBe(false);
    expect(data).not.toHaveProperty('activation_token');
    expect(data).not.toHaveProperty('activation_expires_at');

    const reset = await call<{ token: string; expires_at: string }>(`/v2/users/${created.body.id}/reset-password`, {
      token: org.clientToken,
      json: { send_email: false },
    });
    expect(reset.status).toBe(200);
    expect(reset.headers.get('cache-control')).toBe('no-store');
    expect(Object.keys(reset.body).sort()).toEqual(['expires_at', 'token']);
    expect(reset.body.expires_at).toMatch(ISO);
    expect(new Date(reset.body.expires_at).getTime() - Date.now()).toBeGreaterThan(DAY_MS - 10 * 60_000);
    expect((await setPassword(reset.body.token, 'quiet-password-1')).body.status).toBe('active');
    expect((await login(email, 'quiet-password-1')).status).toBe(200);

    // A later mail has arrived, this user's never did; no reset event for send_email: false.
    const marker = uniqueEmail('marker');
    await create({ email: marker, display_name: 'Marker' });
    await waitForMail(marker);
    expect(await mailTo(email)).toHaveLength(0);
    expect(events.all('identity.user.password_reset_requested', (d) => d.user_id === created.body.id)).toHaveLength(0);
  });

  it('mails a reset link with reset-password (202) and publishes identity.user.password_reset_requested; the token sets a new password', async () => {
    const email = uniqueEmail('reset');
    const created = await create({ email, display_name: 'Reset', send_activation: false, profile: { locale: 'en' } });
    const reset = await call(`/v2/users/${created.body.id}/reset-password`, { token: org.clientToken, json: {} });
    expect(reset.status).toBe(202);
    const event = await events.waitFor('identity.user.password_reset_requested', (d) => d.user_id === created.body.id);
    expect(expectEnvelope(event, 'identity.user.password_reset_requested')).toEqual({
      user_id: created.body.id,
      org_id: org.org_id,
      email,
      display_name: 'Reset',
      locale: 'en',
      token: expect.any(String),
      expires_at: expect.stringMatching(ISO),
      // Still pending (created without its activation e-mail): the link is its activation.
      activation: true,
    });
    const mail = await waitForMail(email);
    expect(mail.messageId).toBe(`<${event.envelope.id}@account-platform>`);
    const link = linkIn(mail.text)!;
    expect(tokenOf(link)).toBe(event.envelope.data.token);
    expect((await setPassword(tokenOf(link), 'reset-password-12')).status).toBe(200);
    expect((await login(email, 'reset-password-12')).status).toBe(200);

    // Without a body at all, send_email defaults to true.
    const again = await call(`/v2/users/${created.body.id}/reset-password`, { token: org.clientToken, method: 'POST' });
    expect(again.status).toBe(202);
    await waitForMail(email);
  });

  it('guards reset-password: users:write, same org, a known user, a valid body', async () => {
    const created = await create({ email: uniqueEmail('guarded'), display_name: 'Guarded', send_activation: false });
    const path = `/v2/users/${created.body.id}/reset-password`;
    expectProblem(await call(path, { json: {} }), 401, 'unauthenticated');
    const readOnly = await issue({
      grant_type: 'password',
      username: org.adminEmail,
      password: org.adminPassword,
      scope: 'users:read',
    });
    expectProblem(await call(path, { token: readOnly.access_token, json: {} }), 403, 'insufficient_scope');
    const other = await newOrg('reset-other');
    expectProblem(await call(path, { token: other.clientToken, json: { send_email: false } }), 404, 'not_found');
    expectProblem(
      await call(`/v2/users/${randomUUID()}/reset-password`, { token: org.clientToken, json: { send_email: false } }),
      404,
      'not_found',
    );
    const bad = expectProblem(
      await call(path, { token: org.clientToken, json: { send_email: 'no' } }),
      400,
      'validation_failed',
    );
    expect(bad.errors?.map((error) => error.field)).toContain('send_email');
  });

  it('refuses /v2/users/me/password without the one-time token, with an access token or a made-up one (401)', async () => {
    expectProblem(
      await call('/v2/users/me/password', { json: { password: 'some-password-1' } }),
      401,
      'unauthenticated',
    );
    expectProblem(await setPassword(org.admin.access_token, 'some-password-1'), 401, 'unauthenticated');
    expectProblem(await setPassword('A'.repeat(43), 'some-password-1'), 401, 'unauthenticated');
  });
});
