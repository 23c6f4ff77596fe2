import { DurableConsumer, PASSWORD_RESET_REQUESTED, STREAMS, USER_CREATED, userCreated } from '@acct/events';
import { METRICS_REGISTRY } from '@acct/observability';
import { S3Client } from '@aws-sdk/client-s3';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { JsMsg } from 'nats';
import { Counter, Registry } from 'prom-client';
import { z } from 'zod';

import { MAILER_CONFIG, MailerConfig } from '../config';
import { MailSender } from './mail-sender';
import { MessageArchive } from './message-archive';
import { MailKind, renderMail } from './templates';

/** `identity.user.password_reset_requested` (v1): who, and the one-time token for the link. */
const passwordResetRequested = z.object({
  id: z.uuid(),
  type: z.literal(PASSWORD_RESET_REQUESTED),
  version: z.literal(1),
  occurred_at: z.string(),
  data: z.object({
    user_id: z.string(),
    email: z.string(),
    display_name: z.string(),
    locale: z.string(),
    token: z.string(),
    expires_at: z.string(),
  }),
});

interface MailJob {
  eventId: string;
  kind: MailKind;
  to: string;
  displayName: string;
  locale: string;
  token: string;
}

/**
 * Sends the activation and password-reset e-mails: a durable JetStream consumer with explicit acks.
 * Each event's mail is sent at most once: the copy stored in object storage under the event id is
 * the record, checked before sending and written right after the SMTP server accepted the message.
 * Once the mail is out, writing the copy is retried (the message kept in progress) until the store
 * answers, so an object-storage outage delays the record but never repeats the mail; only a crash
 * (or a shutdown) before the copy is written can. Events that need no mail are acked.
 */
@Injectable()
export class MailConsumer implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('mail');
  private readonly consumer: DurableConsumer;
  private readonly sender: MailSender;
  private readonly archive: MessageArchive;
  private readonly sent: Counter<'kind'>;
  private readonly failed: Counter<'kind'>;
  private stopping = false;

  constructor(
    @Inject(MAILER_CONFIG) private readonly config: MailerConfig,
    @Inject(METRICS_REGISTRY) registry: Registry,
  ) {
    this.sender = new MailSender(config.SMTP_URL, config.MAIL_FROM);
    this.archive = new MessageArchive(
      new S3Client({
        endpoint: config.S3_ENDPOINT,
        region: config.S3_REGION,
        forcePathStyle: config.S3_FORCE_PATH_STYLE,
        credentials: { accessKeyId: config.S3_ACCESS_KEY_ID, secretAccessKey: config.S3_SECRET_ACCESS_KEY },
        maxAttempts: 2,
      }),
      config.S3_BUCKET,
    );
    this.sent = new Counter({
      name: 'mailer_mail_sent_total',
      help: 'E-mails sent.',
      labelNames: ['kind'],
      registers: [registry],
    });
    this.failed = new Counter({
      name: 'mailer_mail_failed_total',
      help: 'Attempts to send an e-mail that failed (retried later).',
      labelNames: ['kind'],
      registers: [registry],
    });
    this.consumer = new DurableConsumer({
      natsUrl: config.NATS_URL,
      name: 'mailer',
      stream: STREAMS.identity,
      durable: 'mailer',
      filterSubject: 'identity.user.>',
      handle: (message) => this.handle(message),
      logger: this.logger,
    });
  }

  onApplicationBootstrap() {
    this.consumer.start();
  }

  async onModuleDestroy() {
    this.stopping = true;
    await this.consumer.stop();
    this.sender.close();
  }

  async handle(message: JsMsg): Promise<'ack' | 'retry' | 'reject'> {
    let job: MailJob | undefined;
    try {
      job = this.jobOf(message.subject, JSON.parse(message.string()));
    } catch (error) {
      this.logger.warn(`rejected ${message.subject} #${message.seq}: ${(error as Error).message}`);
      return 'reject';
    }
    if (!job) return 'ack';
    if (await this.archive.has(job.eventId)) return 'ack'; // sent before: a redelivery
    const link = `${this.config.PUBLIC_URL.replace(/\/$/, '')}/activate?token=${encodeURIComponent(job.token)}`;
    let raw: Buffer;
    try {
      raw = await this.sender.send({
        to: job.to,
        messageId: `<${job.eventId}@account-platform>`,
        ...renderMail(job.kind, job.locale, job.displayName, link),
      });
    } catch (error) {
      this.failed.inc({ kind: job.kind });
      throw error;
    }
    await this.storeSent(job.eventId, raw, message);
    this.sent.inc({ kind: job.kind });
    this.logger.log(`sent ${job.kind} mail for event ${job.eventId}`);
    return 'ack';
  }

  /** Writes the copy of a sent mail, retrying until object storage answers (see the class comment). */
  private async storeSent(eventId: string, raw: Buffer, message: JsMsg): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        await this.archive.store(eventId, raw);
        return;
      } catch (error) {
        if (this.stopping) throw error;
        if (attempt === 1) this.logger.warn(`copy of sent mail ${eventId} not stored yet: ${(error as Error).message}`);
        message.working(); // keeps JetStream from redelivering it meanwhile
        await new Promise((resolve) => setTimeout(resolve, Math.min(2000, 100 * 2 ** attempt)));
      }
    }
  }

  private jobOf(subject: string, json: unknown): MailJob | undefined {
    if (subject === USER_CREATED) {
      const event = userCreated.parse(json);
      if (!event.data.send_activation || !event.data.activation_token) return undefined;
      return {
        eventId: event.id,
        kind: 'activation',
        to: event.data.email,
        displayName: event.data.display_name,
        locale: event.data.locale,
        token: event.data.activation_token,
      };
    }
    if (subject === PASSWORD_RESET_REQUESTED) {
      const event = passwordResetRequested.parse(json);
      return {
        eventId: event.id,
        kind: 'password_reset',
        to: event.data.email,
        displayName: event.data.display_name,
        locale: event.data.locale,
        token: event.data.token,
      };
    }
    return undefined;
  }
}
