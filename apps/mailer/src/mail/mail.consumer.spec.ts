import { randomBytes, randomUUID } from 'node:crypto';

import { FakeClock } from '@acct/clock';
import { Outcome, PASSWORD_RESET_REQUESTED, USER_CREATED, USER_DELETED } from '@acct/events';
import { createLogger } from '@acct/observability';
import { LocalObjectStorage, SmtpCatcher } from '@acct/testing';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { JsMsg } from 'nats';
import { Registry } from 'prom-client';

import { loadMailerConfig } from '../config';
import { MailConsumer } from './mail.consumer';

const DAY_MS = 24 * 3600 * 1000;

/**
 * The consumer's decisions, one delivery at a time, against a real SMTP server and object storage:
 * JetStream is stood in for by the message it hands over (subject, body, delivery count), and the
 * time by a FakeClock, so the maximum age is crossed without waiting.
 */
describe('MailConsumer', () => {
  let storage: LocalObjectStorage;
  let smtp: SmtpCatcher;
  let consumer: MailConsumer;
  const clock = new FakeClock();
  const lines: Array<Record<string, unknown>> = [];
  let sequence = 0;

  beforeAll(async () => {
    [storage, smtp] = await Promise.all([LocalObjectStorage.start(), SmtpCatcher.start()]);
    const config = loadMailerConfig({
      SMTP_URL: smtp.url,
      S3_ENDPOINT: storage.endpoint,
      S3_BUCKET: storage.bucket,
      NATS_URL: 'nats://127.0.0.1:9', // never connected: the consumer is not started
      MAIL_RETRY_BASE_MS: '1000',
      MAIL_RETRY_MAX_MS: '60000',
      MAIL_MAX_AGE_MS: String(DAY_MS),
    });
    const logger = createLogger('mailer', 'info', { write: (line: string) => lines.push(JSON.parse(line)) });
    consumer = new MailConsumer(config, new Registry(), logger, clock);
  });

  afterAll(async () => {
    await consumer?.onModuleDestroy();
    await Promise.all([storage?.dispose(), smtp?.close()]);
  });

  const tokens: string[] = [];
  const eventFor = (to: string, occurredAt: number) => ({
    id: randomUUID(),
    type: USER_CREATED,
    version: 1,
    occurred_at: new Date(occurredAt).toISOString(),
    request_id: `req-${randomUUID()}`,
    data: {
      user_id: randomUUID(),
      org_id: 'org-1',
      email: to,
      display_name: 'Ada',
      locale: 'en',
      send_activation: true,
      activation_token: tokens[tokens.push(randomBytes(32).toString('base64url')) - 1],
      activation_expires_at: new Date(occurredAt + DAY_MS).toISOString(),
    },
  });
  /** The event as JetStream hands it over on its `deliveryCount`-th delivery. */
  const delivery = (event: object, deliveryCount: number) =>
    ({
      subject: USER_CREATED,
      seq: (sequence += 1),
      string: () => JSON.stringify(event),
      info: { deliveryCount },
      working: () => undefined,
    }) as unknown as JsMsg;
  const address = (label: string) => `${label}-${(sequence += 1)}@consumer.test`;
  /** An object of the mailer's archive, as text. */
  const stored = async (key: string) => {
    const s3 = new S3Client({
      endpoint: storage.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
    try {
      const object = await s3.send(new GetObjectCommand({ Bucket: storage.bucket, Key: key }));
      return (await object.Body?.transformToString('utf8')) ?? '';
    } finally {
      s3.destroy();
    }
  };

  it('backs off a transient failure until the event reaches its maximum age, then gives it up', async () => {
    const to = address('busy');
    smtp.refuse(to, 'temporary');
    const event = eventFor(to, clock.now());
    const outcomes: Outcome[] = [];
    for (let attempt = 1; attempt <= 8; attempt += 1) outcomes.push(await consumer.handle(delivery(event, attempt)));
    const delays = outcomes.map((outcome) => (typeof outcome === 'object' ? outcome.retryInMs : NaN));
    expect(delays.every((delay, index) => delay >= Math.min(60_000, 1000 * 2 ** index) / 2)).toBe(true);
    expect(delays.slice(0, 6).every((delay, index) => index === 0 || delay > delays[index - 1])).toBe(true);
    expect(Math.max(...delays)).toBeLessThanOrEqual(60_000);

    clock.advance(DAY_MS - 1);
    expect(await consumer.handle(delivery(event, 9))).toEqual({ retryInMs: expect.any(Number) });
    clock.advance(1);
    expect(await consumer.handle(delivery(event, 10))).toBe('ack');
    // Given up: a later redelivery neither sends nor asks the SMTP server again. (The tenth delivery
    // did not ask either: the link had expired with the event's maximum age.)
    expect(await consumer.handle(delivery(event, 11))).toBe('ack');
    expect(smtp.attemptsTo(to)).toHaveLength(9);
  });

  it('gives a permanent refusal up at the first attempt, and never tries it again', async () => {
    const to = address('unknown');
    smtp.refuse(to, 'permanent');
    const event = eventFor(to, clock.now());
    expect(await consumer.handle(delivery(event, 1))).toBe('ack');
    expect(await consumer.handle(delivery(event, 2))).toBe('ack');
    expect(smtp.attemptsTo(to)).toHaveLength(1);
  });

  it('retries, not gives up, a mail the relay refuses for want of authentication (the mailer configured wrong), and sends it once that is fixed', async () => {
    const to = address('unauthenticated');
    const event = eventFor(to, clock.now());
    smtp.requireAuthentication(true);
    try {
      expect(await consumer.handle(delivery(event, 1))).toEqual({ retryInMs: expect.any(Number) });
    } finally {
      smtp.requireAuthentication(false);
    }
    expect(await consumer.handle(delivery(event, 2))).toBe('ack');
    expect(smtp.to(to)).toHaveLength(1);
  });

  it('sends no mail whose link expired before it could be sent (events held up a day), and records it as undeliverable', async () => {
    const to = address('late');
    const event = eventFor(to, clock.now() - DAY_MS - 60_000);
    expect(await consumer.handle(delivery(event, 1))).toBe('ack');
    expect(smtp.attemptsTo(to)).toHaveLength(0);
    const record = await stored(`undeliverable/${event.id}.json`);
    expect(JSON.parse(record)).toMatchObject({ event_id: event.id, reason: 'expired', attempts: 1 });
    expect(record).not.toContain(event.data.activation_token);
  });

  it("says how long the link still works when the mail goes out late, not the token's full 24 hours", async () => {
    const to = address('delayed');
    const event = eventFor(to, clock.now() - 20 * 3600 * 1000);
    expect(await consumer.handle(delivery(event, 1))).toBe('ack');
    const [mail] = smtp.to(to);
    expect(mail.text).toContain('expires in 4 hours.');
    expect(mail.html).toContain('expires in 4 hours.');
  });

  it("sends the link reset-password made for a pending user as its activation mail, and an active user's as a reset", async () => {
    const resetEvent = (to: string, activation: boolean | undefined) => {
      const { id, occurred_at, request_id } = eventFor(to, clock.now());
      return {
        id,
        type: PASSWORD_RESET_REQUESTED,
        version: 1,
        occurred_at,
        request_id,
        data: {
          user_id: randomUUID(),
          org_id: 'org-1',
          email: to,
          display_name: 'Ada',
          locale: 'en',
          token: randomBytes(32).toString('base64url'),
          expires_at: new Date(clock.now() + DAY_MS).toISOString(),
          ...(activation === undefined ? {} : { activation }),
        },
      };
    };
    const asReset = (event: object) => ({ ...delivery(event, 1), subject: PASSWORD_RESET_REQUESTED }) as JsMsg;
    const [invited, active, older] = [address('invited'), address('active'), address('older')];
    expect(await consumer.handle(asReset(resetEvent(invited, true)))).toBe('ack');
    expect(await consumer.handle(asReset(resetEvent(active, false)))).toBe('ack');
    // An event written before identity said which it was: a reset, as it always was.
    expect(await consumer.handle(asReset(resetEvent(older, undefined)))).toBe('ack');
    expect(smtp.to(invited).map((mail) => mail.subject)).toEqual(['Activate your account']);
    expect(smtp.to(active).map((mail) => mail.subject)).toEqual(['Reset your password']);
    expect(smtp.to(older).map((mail) => mail.subject)).toEqual(['Reset your password']);
  });

  it('sends nothing for the events whose link identity withdrew (the user deleted before they were published)', async () => {
    const [invited, reset] = [address('deleted-invited'), address('deleted-reset')];
    const created = eventFor(invited, clock.now());
    const { activation_token: _withdrawn, ...createdData } = created.data;
    const withdrawnReset = {
      ...eventFor(reset, clock.now()),
      type: PASSWORD_RESET_REQUESTED,
      data: {
        user_id: randomUUID(),
        org_id: 'org-1',
        email: reset,
        display_name: 'Ada',
        locale: 'en',
        expires_at: new Date(clock.now() + DAY_MS).toISOString(),
      },
    };
    expect(await consumer.handle(delivery({ ...created, data: createdData }, 1))).toBe('ack');
    expect(await consumer.handle({ ...delivery(withdrawnReset, 1), subject: PASSWORD_RESET_REQUESTED })).toBe('ack');
    expect(smtp.attemptsTo(invited)).toHaveLength(0);
    expect(smtp.attemptsTo(reset)).toHaveLength(0);
  });

  it('sends no mail it still held back (the SMTP server deferring it) once the user was deleted: its link died with it', async () => {
    const to = address('deleted-while-deferred');
    smtp.refuse(to, 'temporary', 1);
    const event = eventFor(to, clock.now());
    expect(await consumer.handle(delivery(event, 1))).toEqual({ retryInMs: expect.any(Number) });
    const deleted = {
      id: randomUUID(),
      type: USER_DELETED,
      version: 1,
      occurred_at: new Date(clock.now()).toISOString(),
      data: {
        user_id: event.data.user_id,
        org_id: event.data.org_id,
        occurred_at: new Date(clock.now()).toISOString(),
      },
    };
    expect(await consumer.handle({ ...delivery(deleted, 1), subject: USER_DELETED })).toBe('ack');
    expect(await consumer.handle(delivery(event, 2))).toBe('ack');
    expect(await consumer.handle(delivery(event, 3))).toBe('ack');
    expect(smtp.attemptsTo(to)).toHaveLength(1);
    expect(smtp.to(to)).toHaveLength(0);
  });

  it('sends once: a redelivery after the mail went out is acknowledged without sending', async () => {
    const to = address('once');
    const event = eventFor(to, clock.now());
    expect(await consumer.handle(delivery(event, 1))).toBe('ack');
    expect(await consumer.handle(delivery(event, 2))).toBe('ack');
    expect(smtp.to(to)).toHaveLength(1);
  });

  it('waits for a relay slow to confirm a message it took (RFC 5321 §4.5.3.2.6), instead of sending it again', async () => {
    const to = address('slow-relay');
    const event = eventFor(to, clock.now());
    smtp.confirmAfter(12_000);
    try {
      expect(await consumer.handle(delivery(event, 1))).toBe('ack');
    } finally {
      smtp.confirmAfter(0);
    }
    expect(await consumer.handle(delivery(event, 2))).toBe('ack');
    expect(smtp.to(to)).toHaveLength(1);
  }, 30_000);

  it('rejects a malformed event without sending, and logs it with the event and request ids its envelope gives', async () => {
    const to = address('malformed');
    const event = eventFor(to, clock.now());
    const malformed = { ...event, data: { ...event.data, email: 42 } };
    expect(await consumer.handle(delivery(malformed, 1))).toBe('reject');
    expect(smtp.attemptsTo(to)).toHaveLength(0);
    expect(lines).toContainEqual(
      expect.objectContaining({
        event_id: event.id,
        request_id: event.request_id,
        message: expect.stringMatching(/^rejected identity\.user\.created #\d+: /),
      }),
    );
  });

  it('names the event and its request on every line it logs about one, and never the token', () => {
    const about = lines.filter((line) => line.event_id !== undefined);
    expect(about.length).toBeGreaterThan(10);
    for (const line of about) {
      expect(line.event_id).toEqual(expect.any(String));
      expect(line.request_id).toMatch(/^req-/);
    }
    const logged = JSON.stringify(lines);
    expect(tokens.length).toBeGreaterThan(0);
    for (const token of tokens) expect(logged).not.toContain(token);
    // every line that mentions an event id is one of those
    const mentioning = lines.filter((line) => /[0-9a-f]{8}-[0-9a-f]{4}-/.test(String(line.message)));
    expect(mentioning.every((line) => line.event_id !== undefined)).toBe(true);
  });
});
