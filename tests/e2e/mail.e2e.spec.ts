import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { DedicatedServer, LocalObjectStorage, request, SmtpCatcher, TestStack, waitFor } from '@acct/testing';
import { HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';

interface Bootstrap {
  org_id: string;
  client_id: string;
  client_secret: string;
}

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
    stack = await TestStack.start({ s3Endpoint: storage.endpoint, natsUrl: nats.url, env: { SMTP_URL: smtp.url } });
    const org = stack.cli<Bootstrap>(
      'bootstrap',
      '--org',
      'mailers',
      '--email',
      'admin@mail.test',
      '--password',
      'admin-pass-1',
    );
    stack.cli(
      'set-rate-limit',
      '--org-id',
      org.org_id,
      '--group',
      'users.write',
      '--rate-per-minute',
      '60000',
      '--burst',
      '10',
      '--scope',
      'per-token',
    );
    token = (
      await request<{ access_token: string }>(stack.url('/v2/auth/token'), {
        body: { grant_type: 'client_credentials', client_id: org.client_id, client_secret: org.client_secret },
      })
    ).body.access_token;
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
});
