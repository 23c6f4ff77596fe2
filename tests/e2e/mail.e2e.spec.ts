import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import {
  ApiClient,
  bootstrapOrg,
  DedicatedServer,
  LocalObjectStorage,
  raiseLimit,
  repositoryRoot,
  request,
  secretTracesIn,
  SmtpCatcher,
  TestStack,
  waitFor,
} from '@acct/testing';
import { GetObjectCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { simpleParser } from 'mailparser';

/** Issue 5: outbox → JetStream → mailer → SMTP, at most once per event, through broker and mailer outages. */
describe('activation e-mail', () => {
  let stack: TestStack;
  let storage: LocalObjectStorage;
  let smtp: SmtpCatcher;
  let nats: DedicatedServer;
  let natsDir: string;
  let token: string;
  let sequence = 0;
  const email = (label: string) => `${label}-${Date.now()}-${(sequence += 1)}@mail.test`;

  const createUser = (body: Record<string, unknown>) =>
    request<{ id: string; code?: string }>(stack.url('/v2/users'), { token, body });
  const settle = () => new Promise((resolve) => setTimeout(resolve, 1500));

  beforeAll(async () => {
    natsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mail-nats-'));
    [storage, smtp, nats] = await Promise.all([
      LocalObjectStorage.start(),
      SmtpCatcher.start(),
      DedicatedServer.nats(natsDir),
    ]);
    stack = await TestStack.start({
      s3Endpoint: storage.endpoint,
      natsUrl: nats.url,
      env: { SMTP_URL: smtp.url, TRUSTED_PROXIES: '127.0.0.1', LOG_LEVEL: 'info' },
    });
    const org = bootstrapOrg(stack, 'mailers', 'admin@mail.test', 'admin-pass-1');
    raiseLimit(stack, org.org_id, 'users.write');
    token = (await new ApiClient(stack.url('')).clientToken(org)).access_token;
  });

  afterAll(async () => {
    await stack?.close();
    await Promise.all([storage?.dispose(), smtp?.close(), nats?.stop()]);
    fs.rmSync(natsDir, { recursive: true, force: true });
  });

  it('sends exactly one activation e-mail with the link, and keeps a copy in object storage', async () => {
    const address = email('ada');
    expect((await createUser({ email: address, display_name: 'Ada', profile: { locale: 'en-GB' } })).status).toBe(201);
    const [mail] = await waitFor('the e-mail', () => (smtp.to(address).length > 0 ? smtp.to(address) : undefined));
    await settle();
    expect(smtp.to(address)).toHaveLength(1);
    expect(mail.subject).toBe('Activate your account');
    expect(mail.text).toMatch(new RegExp(`${stack.env.PUBLIC_URL}/activate\\?token=[A-Za-z0-9_%-]{40,}`));
    expect(mail.html).toContain(`${stack.env.PUBLIC_URL}/activate?token=`);
    const eventId = /^<(.+)@account-platform>$/.exec(mail.messageId)?.[1];
    const s3 = new S3Client({
      endpoint: storage.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
    const copy = await s3.send(new HeadObjectCommand({ Bucket: storage.bucket, Key: `messages/${eventId}.eml` }));
    expect(copy.ContentType).toBe('message/rfc822');
    s3.destroy();
  });

  it('writes in the user locale', async () => {
    const address = email('lei');
    await createUser({ email: address, display_name: '李雷' });
    const [mail] = await waitFor('the e-mail', () => (smtp.to(address).length > 0 ? smtp.to(address) : undefined));
    expect(mail.subject).toBe('激活您的账户');
  });

  it('sends nothing with send_activation: false', async () => {
    const address = email('quiet');
    expect((await createUser({ email: address, display_name: 'Quiet', send_activation: false })).status).toBe(201);
    const marker = email('marker');
    await createUser({ email: marker, display_name: 'Marker' });
    await waitFor('a later e-mail', () => (smtp.to(marker).length > 0 ? true : undefined));
    expect(smtp.to(address)).toHaveLength(0);
  });

  const tokenFromMail = (text: string) => decodeURIComponent(/activate\?token=([^\s"&]+)/.exec(text)![1]);
  let ip = 0;
  const login = (username: string, password: string) =>
    request<{ access_token?: string; code?: string }>(stack.url('/v2/auth/token'), {
      body: { grant_type: 'password', username, password },
      headers: { 'x-forwarded-for': `192.0.2.${(ip += 1)}` },
    });
  const setPassword = (oneTimeToken: string, password: unknown) =>
    request<{ status?: string; code?: string; errors?: Array<{ field: string }> }>(stack.url('/v2/users/me/password'), {
      body: { password },
      headers: { authorization: `Bearer ${oneTimeToken}` },
    });

  it('activates through the e-mail link once: page, password, active, login; the same link again is 401', async () => {
    const address = email('activate');
    const created = await createUser({ email: address, display_name: 'Act' });
    const [mail] = await waitFor('the e-mail', () => (smtp.to(address).length > 0 ? smtp.to(address) : undefined));
    const link = /(http:\/\/\S+\/activate\?token=\S+)/.exec(mail.text)![1];
    const page = await fetch(link);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'sha256-");
    expect(await page.text()).toContain('<form');
    const oneTimeToken = tokenFromMail(mail.text);
    const short = await setPassword(oneTimeToken, 'short');
    expect(short.status).toBe(400);
    expect(short.body.errors?.[0]?.field).toBe('password');
    expect((await login(address, 'activated-pass-1')).body.code).toBe('invalid_grant');
    const done = await setPassword(oneTimeToken, 'activated-pass-1');
    expect(done.status).toBe(200);
    expect(done.body.status).toBe('active');
    const user = await request<{ status: string }>(stack.url(`/v2/users/${created.body.id}`), { token });
    expect(user.body.status).toBe('active');
    expect((await login(address, 'activated-pass-1')).body.access_token).toEqual(expect.any(String));
    const again = await setPassword(oneTimeToken, 'another-pass-1');
    expect(again.status).toBe(401);
    expect(again.body.code).toBe('unauthenticated');
  });

  it('hands out a one-time token with reset-password send_email: false (the path for send_activation: false)', async () => {
    const address = email('silent');
    const created = await createUser({ email: address, display_name: 'Silent', send_activation: false });
    const reset = await request<{ token: string; expires_at: string }>(
      stack.url(`/v2/users/${created.body.id}/reset-password`),
      { token, body: { send_email: false } },
    );
    expect(reset.status).toBe(200);
    expect(new Date(reset.body.expires_at).getTime() - Date.now()).toBeGreaterThan(23.9 * 3600 * 1000);
    const results = await Promise.all([
      setPassword(reset.body.token, 'silent-pass-1'),
      setPassword(reset.body.token, 'silent-pass-2'),
    ]);
    expect(results.map((result) => result.status).sort()).toEqual([200, 401]);
    expect(smtp.to(address)).toHaveLength(0);
  });

  it("mails a link with reset-password (202): a pending user's as its activation, an active user's as a reset", async () => {
    const address = email('reset');
    const created = await createUser({ email: address, display_name: 'Reset', send_activation: false });
    const reset = () => request(stack.url(`/v2/users/${created.body.id}/reset-password`), { token, body: {} });
    expect((await reset()).status).toBe(202);
    const [invitation] = await waitFor('the activation e-mail', () =>
      smtp.to(address).length > 0 ? smtp.to(address) : undefined,
    );
    expect(invitation.subject).toBe('激活您的账户'); // the default locale, zh-CN
    expect((await setPassword(tokenFromMail(invitation.text), 'reset-pass-12')).status).toBe(200);
    expect((await reset()).status).toBe(202);
    const [, mail] = await waitFor('the reset e-mail', () =>
      smtp.to(address).length > 1 ? smtp.to(address) : undefined,
    );
    expect(mail.subject).toBe('重置您的密码');
    expect((await setPassword(tokenFromMail(mail.text), 'reset-pass-34')).status).toBe(200);
  });

  const eventIdOf = (messageId: string) => /^<(.+)@account-platform>$/.exec(messageId)![1];
  const archivedCopy = async (eventId: string): Promise<Buffer> => {
    const s3 = new S3Client({
      endpoint: storage.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
    try {
      const object = await s3.send(new GetObjectCommand({ Bucket: storage.bucket, Key: `messages/${eventId}.eml` }));
      return Buffer.from(await object.Body!.transformToByteArray());
    } finally {
      s3.destroy();
    }
  };

  /** Issue 11 item 9: the archive must not hold a live link. */
  it('archives activation and reset mails with the one-time token redacted, in every form, keeping its hash', async () => {
    const address = email('redacted');
    const created = await createUser({ email: address, display_name: 'Redacted', profile: { locale: 'en' } });
    await request(stack.url(`/v2/users/${created.body.id}/reset-password`), { token, body: {} });
    const mails = await waitFor('both e-mails', () => (smtp.to(address).length >= 2 ? smtp.to(address) : undefined));
    for (const mail of mails) {
      const oneTimeToken = tokenFromMail(mail.text);
      const copy = await waitFor('the archived copy', () => archivedCopy(eventIdOf(mail.messageId)));
      expect(await secretTracesIn(copy, oneTimeToken)).toEqual([]);
      const parsed = await simpleParser(copy);
      expect(parsed.subject).toBe(mail.subject);
      expect(parsed.text).toContain(`${stack.env.PUBLIC_URL}/activate?token=REDACTED`);
      expect(parsed.headers.get('x-redacted-token-sha256')).toBe(
        createHash('sha256').update(oneTimeToken).digest('hex'),
      );
    }
  });

  /** Issue 11 item 6, in the mailer: the request that created the user names the mailer's lines. */
  it("names the API request and the event on the mailer's log lines about it", async () => {
    const address = email('traced');
    const requestId = `mail-trace-${randomUUID()}`;
    await request(stack.url('/v2/users'), {
      token,
      body: { email: address, display_name: 'Traced' },
      headers: { 'x-request-id': requestId },
    });
    const [mail] = await waitFor('the e-mail', () => (smtp.to(address).length > 0 ? smtp.to(address) : undefined));
    const eventId = eventIdOf(mail.messageId);
    const log = path.join(repositoryRoot, '.data', 'test-logs', `${stack.ports.http}-mailer.log`);
    const lines = await waitFor('the mailer line about it', () => {
      const about = fs
        .readFileSync(log, 'utf8')
        .split('\n')
        .filter((line) => line.startsWith('{') && line.includes(eventId))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      return about.some((line) => String(line.message).startsWith('sent')) ? about : undefined;
    });
    for (const line of lines) expect(line).toMatchObject({ event_id: eventId, request_id: requestId });
  });

  it('keeps creating users while NATS is down, and sends every e-mail once when it returns', async () => {
    await nats.stop();
    const addresses = Array.from({ length: 5 }, () => email('offline'));
    for (const address of addresses)
      expect((await createUser({ email: address, display_name: 'Offline' })).status).toBe(201);
    await settle();
    expect(addresses.flatMap((address) => smtp.to(address))).toHaveLength(0);
    await nats.start();
    await waitFor(
      'every e-mail',
      () => (addresses.every((address) => smtp.to(address).length > 0) ? true : undefined),
      {
        timeoutMs: 30_000,
      },
    );
    await settle();
    for (const address of addresses) expect(smtp.to(address)).toHaveLength(1);
  });

  it('sends no e-mail for a user deleted while NATS was down: its link died with it', async () => {
    const typo = email('deleted-offline');
    const marker = email('marker-after-deletion');
    await nats.stop();
    try {
      const created = await createUser({ email: typo, display_name: 'Typo' });
      expect(created.status).toBe(201);
      expect((await request(stack.url(`/v2/users/${created.body.id}`), { method: 'DELETE', token })).status).toBe(204);
      expect((await createUser({ email: marker, display_name: 'Marker' })).status).toBe(201);
    } finally {
      await nats.start();
    }
    await waitFor('the later e-mail', () => (smtp.to(marker).length > 0 ? true : undefined), { timeoutMs: 30_000 });
    await settle();
    expect(smtp.attemptsTo(typo)).toHaveLength(0);
  });

  it('loses and repeats nothing when the mailer is stopped mid-batch and restarted', async () => {
    const addresses = Array.from({ length: 12 }, () => email('batch'));
    await Promise.all(addresses.map((address) => createUser({ email: address, display_name: 'Batch' })));
    await waitFor('the first e-mails', () =>
      addresses.some((address) => smtp.to(address).length > 0) ? true : undefined,
    );
    await stack.stopApp('mailer'); // SIGTERM, as Kubernetes stops a pod: the message in hand is finished
    await stack.startApp('mailer');
    await waitFor(
      'every e-mail',
      () => (addresses.every((address) => smtp.to(address).length > 0) ? true : undefined),
      {
        timeoutMs: 60_000,
      },
    );
    await settle();
    for (const address of addresses) expect(smtp.to(address)).toHaveLength(1);
  });

  it('sends a mail once when the mailer is stopped while the SMTP server is still confirming it', async () => {
    const address = email('slow-confirm');
    smtp.confirmAfter(4000);
    try {
      expect((await createUser({ email: address, display_name: 'Slow' })).status).toBe(201);
      await waitFor('the mail at the SMTP server', () => (smtp.to(address).length > 0 ? true : undefined));
      // SIGTERM, as Kubernetes stops a pod: the server has the mail and answers 4 s later.
      expect(await stack.terminateApp('mailer')).toEqual({ code: 0, signal: null });
    } finally {
      smtp.confirmAfter(0);
    }
    await stack.startApp('mailer');
    // Past the consumer's ack wait (30 s): an event left unacknowledged is redelivered by then.
    await new Promise((resolve) => setTimeout(resolve, 35_000));
    expect(smtp.to(address)).toHaveLength(1);
  }, 90_000);
});
