import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

import { JetStreamPublisher, STREAMS, USER_CREATED } from '@acct/events';
import {
  LocalObjectStorage,
  repositoryRoot,
  SmtpAttempt,
  SmtpCatcher,
  SmtpRefusal,
  TestStack,
  waitFor,
} from '@acct/testing';
import { GetObjectCommand, NoSuchKey, S3Client } from '@aws-sdk/client-s3';
import { connect, JetStreamManager, NatsConnection } from 'nats';

interface Event {
  id: string;
  request_id: string;
  occurred_at: string;
  data: { email: string; activation_token: string };
}

interface UndeliverableRecord {
  event_id: string;
  request_id: string | null;
  reason: string;
  attempts: number;
  smtp_code: number | null;
  error_code: string;
  to: string;
}

interface LogLine {
  message?: string;
  event_id?: string | null;
  request_id?: string | null;
  retry_in_ms?: number;
  error_code?: string;
}

const BASE_MS = 200;
const MAX_MS = 1600;

/**
 * Issue 11 item 5: a mail the SMTP server refuses. The mailer runs alone against its own NATS, object
 * storage and a real SMTP server (smtp-server) told to refuse some recipients; events are published
 * as identity publishes them. Back-off parameters are shortened (`MAIL_RETRY_*`), and the maximum age
 * is reached by the event's own clock (`occurred_at`), so nothing waits for minutes.
 */
describe('mail the SMTP server refuses', () => {
  let storage: LocalObjectStorage;
  let smtp: SmtpCatcher;
  let stack: TestStack;
  let publisher: JetStreamPublisher;
  let nats: NatsConnection;
  let jsm: JetStreamManager;
  let s3: S3Client;
  const published: Event[] = [];
  let sequence = 0;
  const address = (label: string) => `${label}-${Date.now()}-${(sequence += 1)}@refusals.test`;

  beforeAll(async () => {
    [storage, smtp] = await Promise.all([LocalObjectStorage.start(), SmtpCatcher.start()]);
    stack = await TestStack.start({
      apps: ['mailer'],
      s3Endpoint: storage.endpoint,
      env: {
        SMTP_URL: smtp.url,
        LOG_LEVEL: 'info',
        MAIL_RETRY_BASE_MS: String(BASE_MS),
        MAIL_RETRY_MAX_MS: String(MAX_MS),
      },
    });
    publisher = new JetStreamPublisher({
      natsUrl: stack.env.NATS_URL,
      name: 'refusals-test',
      stream: STREAMS.identity,
    });
    nats = await connect({ servers: stack.env.NATS_URL });
    jsm = await nats.jetstreamManager();
    s3 = new S3Client({
      endpoint: storage.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
  });

  afterAll(async () => {
    s3?.destroy();
    await publisher?.close();
    await nats?.drain();
    await stack?.close();
    await Promise.all([storage?.dispose(), smtp?.close()]);
  });

  /** An `identity.user.created` event asking for an activation mail, published as identity's relay does. */
  const publish = async (
    to: string,
    occurredAt = new Date(),
    expiresAt = new Date(occurredAt.getTime() + 24 * 3600 * 1000),
  ): Promise<Event> => {
    const event = {
      id: randomUUID(),
      type: USER_CREATED,
      version: 1,
      occurred_at: occurredAt.toISOString(),
      request_id: `req-${randomUUID()}`,
      data: {
        user_id: randomUUID(),
        org_id: 'org-refusals',
        email: to,
        display_name: 'Ada',
        locale: 'en',
        send_activation: true,
        activation_token: randomBytes(32).toString('base64url'),
        activation_expires_at: expiresAt.toISOString(),
      },
    };
    await publisher.publish(USER_CREATED, JSON.stringify(event), event.id);
    published.push(event);
    return event;
  };

  const undeliverable = async (eventId: string): Promise<UndeliverableRecord | undefined> => {
    try {
      const object = await s3.send(
        new GetObjectCommand({ Bucket: storage.bucket, Key: `undeliverable/${eventId}.json` }),
      );
      return JSON.parse((await object.Body?.transformToString('utf8')) ?? '') as UndeliverableRecord;
    } catch (error) {
      if (error instanceof NoSuchKey || (error as { name?: string }).name === 'NoSuchKey') return undefined;
      throw error;
    }
  };

  /** Every event handed to the mailer has been acknowledged: nothing pending, nothing waiting for a retry. */
  const allAcknowledged = () =>
    waitFor('every event acknowledged', async () => {
      const info = await jsm.consumers.info(STREAMS.identity.name, 'mailer');
      return info.num_pending === 0 && info.num_ack_pending === 0 ? true : undefined;
    });

  const mailerLog = (): LogLine[] =>
    fs
      .readFileSync(path.join(repositoryRoot, '.data', 'test-logs', `${stack.ports.http}-mailer.log`), 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as LogLine);
  const linesAbout = (event: Event) => mailerLog().filter((line) => JSON.stringify(line).includes(event.id));

  const undeliverableCount = async (reason: string): Promise<number> => {
    const text = await (await fetch(stack.opsUrl('mailer', '/metrics'))).text();
    // Summed over the mail kinds: every kind's series is there from the start.
    return text
      .split('\n')
      .filter(
        (candidate) =>
          candidate.startsWith('mailer_mail_undeliverable_total{') && candidate.includes(`reason="${reason}"`),
      )
      .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
  };

  /** The waits the mailer announced for an event, and the attempts the SMTP server saw after each. */
  const retriesOf = (event: Event, attempts: SmtpAttempt[]) => {
    const delays = linesAbout(event)
      .map((line) => line.retry_in_ms)
      .filter((delay): delay is number => typeof delay === 'number');
    const gaps = attempts.slice(1).map((attempt, index) => attempt.at - attempts[index].at);
    return { delays, gaps };
  };

  it('records a permanently refused mail as undeliverable at once, acknowledges it and never retries', async () => {
    const to = address('unknown');
    smtp.refuse(to, 'permanent');
    const before = await undeliverableCount('refused');
    const event = await publish(to);
    const record = await waitFor('the undeliverable record', () => undeliverable(event.id));
    expect(record).toMatchObject({
      event_id: event.id,
      request_id: event.request_id,
      reason: 'refused',
      attempts: 1,
      smtp_code: 550,
      error_code: 'EENVELOPE',
      to,
    });
    expect(JSON.stringify(record)).not.toContain(event.data.activation_token);
    await allAcknowledged(); // acknowledged: JetStream never delivers it again
    expect(smtp.attemptsTo(to).map((attempt) => attempt.answer)).toEqual(['permanent']);
    expect(smtp.to(to)).toHaveLength(0);
    expect(await undeliverableCount('refused')).toBe(before + 1);
    const lines = linesAbout(event);
    expect(lines.some((line) => /undeliverable \(refused/.test(line.message ?? ''))).toBe(true);
  });

  /** Publishes a mail to `to` after telling the server to refuse it `times` times; waits for its one delivery. */
  const deliveredOnceAfter = async (to: string, refusal: SmtpRefusal, times: number) => {
    smtp.refuse(to, refusal, times);
    const event = await publish(to);
    await waitFor('the mail', () => (smtp.to(to).length > 0 ? true : undefined));
    await allAcknowledged();
    expect(smtp.to(to)).toHaveLength(1);
    const attempts = smtp.attemptsTo(to);
    expect(attempts.map((attempt) => attempt.answer)).toEqual([...Array<SmtpRefusal>(times).fill(refusal), 'accepted']);
    expect(await undeliverable(event.id)).toBeUndefined();
    return { event, ...retriesOf(event, attempts) };
  };

  it('retries a temporarily refused mail with growing delays and delivers it once', async () => {
    const { delays, gaps } = await deliveredOnceAfter(address('busy'), 'temporary', 3);
    expect(delays).toHaveLength(3);
    for (const [index, delay] of delays.entries()) {
      // exponential with jitter in the upper half: BASE·2^i/2 ≤ delay ≤ BASE·2^i, so each one longer
      expect(delay).toBeGreaterThanOrEqual((BASE_MS * 2 ** index) / 2);
      expect(delay).toBeLessThanOrEqual(BASE_MS * 2 ** index);
      if (index > 0) expect(delay).toBeGreaterThan(delays[index - 1]);
      // JetStream held the message back at least that long
      expect(gaps[index]).toBeGreaterThanOrEqual(delay - 5);
    }
  });

  it('retries through dropped connections and delivers once', async () => {
    const { event, delays, gaps } = await deliveredOnceAfter(address('cut'), 'drop', 2);
    const retries = linesAbout(event).filter((line) => typeof line.retry_in_ms === 'number');
    expect(retries.map((line) => line.error_code)).toEqual(['ECONNECTION', 'ECONNECTION']);
    expect(delays[1]).toBeGreaterThan(delays[0]);
    for (const [index, delay] of delays.entries()) expect(gaps[index]).toBeGreaterThanOrEqual(delay - 5);
  });

  it('gives a temporarily refused mail up as undeliverable once the event is past its maximum age', async () => {
    const to = address('late');
    smtp.refuse(to, 'temporary');
    const before = await undeliverableCount('expired');
    // MAIL_MAX_AGE_MS is 24 h: an event that occurred 25 h ago is past it (its link made to work an
    // hour more, so that the mail is tried at all).
    const event = await publish(to, new Date(Date.now() - 25 * 3600 * 1000), new Date(Date.now() + 3600 * 1000));
    const record = await waitFor('the undeliverable record', () => undeliverable(event.id));
    expect(record).toMatchObject({ reason: 'expired', smtp_code: 451, request_id: event.request_id, attempts: 1 });
    await allAcknowledged();
    expect(smtp.attemptsTo(to)).toHaveLength(1);
    expect(await undeliverableCount('expired')).toBe(before + 1);
  });

  it('sends no mail whose link expired before it could be sent, and records it as undeliverable', async () => {
    const to = address('dead-link');
    const before = await undeliverableCount('expired');
    const event = await publish(to, new Date(Date.now() - 25 * 3600 * 1000));
    const record = await waitFor('the undeliverable record', () => undeliverable(event.id));
    expect(record).toMatchObject({ reason: 'expired', smtp_code: null, request_id: event.request_id, attempts: 1 });
    await allAcknowledged();
    expect(smtp.attemptsTo(to)).toHaveLength(0);
    expect(await undeliverableCount('expired')).toBe(before + 1);
  });

  it('names the event and its request on every log line about an event', () => {
    expect(published.length).toBeGreaterThanOrEqual(4);
    for (const event of published) {
      const lines = linesAbout(event);
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) expect(line).toMatchObject({ event_id: event.id, request_id: event.request_id });
    }
  });
});
