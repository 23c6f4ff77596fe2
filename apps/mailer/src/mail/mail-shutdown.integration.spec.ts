import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { SystemClock } from '@acct/clock';
import { JetStreamPublisher, STREAMS, USER_CREATED } from '@acct/events';
import { createLogger } from '@acct/observability';
import { DedicatedServer, LocalObjectStorage, SmtpCatcher, waitFor } from '@acct/testing';
import { HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { connect } from 'nats';
import { Registry } from 'prom-client';

import { loadMailerConfig, MailerConfig } from '../config';
import { MailConsumer } from './mail.consumer';

/**
 * A mailer stopped (SIGTERM: its module destroyed) while the SMTP server is still confirming a mail
 * it already has: the stop waits for that mail to be recorded and acknowledged, so the replica that
 * takes over (or the restarted pod) does not send it a second time.
 */
describe('MailConsumer stopped mid-send', () => {
  let nats: DedicatedServer;
  let natsDir: string;
  let storage: LocalObjectStorage;
  let smtp: SmtpCatcher;
  let config: MailerConfig;
  let publisher: JetStreamPublisher;
  const consumers: MailConsumer[] = [];

  beforeAll(async () => {
    natsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailer-stop-nats-'));
    [nats, storage, smtp] = await Promise.all([
      DedicatedServer.nats(natsDir),
      LocalObjectStorage.start(),
      SmtpCatcher.start(),
    ]);
    config = loadMailerConfig({
      SMTP_URL: smtp.url,
      S3_ENDPOINT: storage.endpoint,
      S3_BUCKET: storage.bucket,
      NATS_URL: nats.url,
    });
    publisher = new JetStreamPublisher({ natsUrl: nats.url, name: 'test-publisher', stream: STREAMS.identity });
  });

  afterAll(async () => {
    for (const consumer of consumers) await consumer.onModuleDestroy().catch(() => undefined);
    await publisher?.close();
    await Promise.all([nats?.stop(), storage?.dispose(), smtp?.close()]);
    fs.rmSync(natsDir, { recursive: true, force: true });
  });

  const startConsumer = () => {
    const consumer = new MailConsumer(config, new Registry(), createLogger('mailer', 'error'), new SystemClock());
    consumers.push(consumer);
    consumer.onApplicationBootstrap();
    return consumer;
  };

  const activationFor = (address: string, eventId: string) => ({
    id: eventId,
    type: USER_CREATED,
    version: 1,
    occurred_at: new Date().toISOString(),
    data: {
      user_id: randomUUID(),
      org_id: 'org-1',
      email: address,
      display_name: 'Slow',
      locale: 'en',
      send_activation: true,
      activation_token: randomBytes(32).toString('base64url'),
      activation_expires_at: new Date(Date.now() + 86_400_000).toISOString(),
    },
  });
  const copyStored = async (eventId: string) => {
    const s3 = new S3Client({
      endpoint: storage.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
    try {
      await s3.send(new HeadObjectCommand({ Bucket: storage.bucket, Key: `messages/${eventId}.eml` }));
      return true;
    } catch {
      return false;
    } finally {
      s3.destroy();
    }
  };

  it('finishes and acknowledges the mail in hand before it stops, so a restarted mailer does not send it again', async () => {
    const address = `slow-${randomUUID()}@mail.test`;
    const eventId = randomUUID();
    const event = activationFor(address, eventId);
    smtp.confirmAfter(4000);
    const first = startConsumer();
    await publisher.publish(USER_CREATED, JSON.stringify(event), eventId);
    await waitFor('the mail at the SMTP server', () => (smtp.to(address).length > 0 ? true : undefined), {
      timeoutMs: 15_000,
    });

    await first.onModuleDestroy(); // what SIGTERM does (app.close()), the SMTP server not yet confirmed

    const s3 = new S3Client({
      endpoint: storage.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
    // The copy is the mailer's record that the mail went out: without it, the redelivery sends it again.
    await expect(
      s3.send(new HeadObjectCommand({ Bucket: storage.bucket, Key: `messages/${eventId}.eml` })),
    ).resolves.toBeDefined();
    s3.destroy();

    smtp.confirmAfter(0);

    // And it was acknowledged before the connection closed: the broker has nothing left to deliver, so
    // a restarted mailer (or another replica) never gets it. Left unacknowledged, it would come back
    // only after the 30 s ack wait, which tests/e2e/mail.e2e.spec.ts waits out through the whole stack.
    const bus = await connect({ servers: nats.url });
    try {
      const consumer = await (await bus.jetstreamManager()).consumers.info(STREAMS.identity.name, 'mailer');
      expect(consumer.delivered.stream_seq).toBeGreaterThan(0);
      expect(consumer).toMatchObject({
        num_ack_pending: 0,
        num_pending: 0,
        ack_floor: { stream_seq: consumer.delivered.stream_seq },
      });
    } finally {
      await bus.close();
    }
  }, 60_000);

  it('keeps writing the copy of a mail the SMTP server took while object storage is briefly away as it stops, so the mail is not sent again', async () => {
    const address = `blip-${randomUUID()}@mail.test`;
    const eventId = randomUUID();
    smtp.confirmAfter(3000);
    const first = startConsumer();
    await publisher.publish(USER_CREATED, JSON.stringify(activationFor(address, eventId)), eventId);
    await waitFor('the mail at the SMTP server', () => (smtp.to(address).length > 0 ? true : undefined), {
      timeoutMs: 15_000,
    });

    // Object storage restarts while the SMTP server confirms, and SIGTERM arrives: the copy's first
    // writes fail, the store is back well within the stop's grace.
    await storage.stop();
    const stopped = first.onModuleDestroy();
    await new Promise((resolve) => setTimeout(resolve, 5000));
    await storage.resume();
    await stopped;
    smtp.confirmAfter(0);

    expect(await copyStored(eventId)).toBe(true);
    // Given back unrecorded, the mail would go to the next mailer and be sent a second time.
    startConsumer();
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(smtp.to(address)).toHaveLength(1);
  }, 60_000);
});
