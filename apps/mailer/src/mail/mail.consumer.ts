import { Clock } from '@acct/clock';
import {
  EventConsumer,
  EventOf,
  Outcome,
  PASSWORD_RESET_REQUESTED,
  STREAMS,
  USER_CREATED,
  USER_DELETED,
} from '@acct/events';
import { METRICS_REGISTRY } from '@acct/observability';
import { S3Client } from '@aws-sdk/client-s3';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { JsMsg } from 'nats';
import type { Logger as PinoLogger } from 'pino';
import { Counter, Registry } from 'prom-client';

import { MAILER_CONFIG, MAILER_LOGGER, MailerConfig } from '../config';
import { classifyFailure, FailureVerdict, retryDelayMs, RetryPolicy, tooOldToRetry } from './delivery-policy';
import { MailSender } from './mail-sender';
import { MessageArchive, UndeliverableRecord } from './message-archive';
import { renderWithArchivedCopy } from './redaction';
import { MAIL_KINDS, MailKind, wordingFor } from './templates';

/** What the mailer knows of an event besides its mail: its ids (for every log line) and its age. */
interface EventLabels {
  eventId: string | null;
  type: string | null;
  requestId: string | null;
  occurredAt: string | null;
}

/** The envelope's ids and time, read leniently: they label log lines even for a malformed event. */
function labelsOf(json: unknown): EventLabels {
  const envelope = (typeof json === 'object' && json !== null ? json : {}) as Record<string, unknown>;
  const text = (value: unknown) => (typeof value === 'string' && value.length <= 128 ? value : null);
  return {
    eventId: text(envelope.id),
    type: text(envelope.type),
    requestId: text(envelope.request_id),
    occurredAt: text(envelope.occurred_at),
  };
}

/** A server's reply for a log line: the e-mail addresses it may echo are left out. */
const withoutAddresses = (reply: string) => reply.replace(/[^\s<>"]+@[^\s<>"]+/g, '<address>');

type MailEventType = typeof USER_CREATED | typeof PASSWORD_RESET_REQUESTED;
/** The mails' events, and the deletion of a user, which ends the mails of its still waiting. */
type HandledType = MailEventType | typeof USER_DELETED;

interface MailJob {
  eventId: string;
  userId: string;
  kind: MailKind;
  to: string;
  displayName: string;
  locale: string;
  token: string;
  /** When the token (and so the link) expires, as the event says (ISO 8601). */
  expiresAt?: string;
}

/**
 * Sends the activation and password-reset e-mails: a durable JetStream consumer with explicit acks.
 * Each event's mail is sent at most once: the archive in object storage is the record, checked before
 * sending: the copy of the sent message under the event id (written right after the SMTP server
 * accepted it, with the one-time token left out), or the record of a mail given up as undeliverable.
 * Once the mail is out, writing the copy is retried (the message kept in progress) until the store
 * answers, so an object-storage outage delays the record but never repeats the mail; only a crash
 * (or a stop that outlasts the consumer's stop grace) before the copy is written can. Events that
 * need no mail are acked. A user's deletion is marked in the archive too: a mail of its still waiting
 * for a retry then brings a dead link, to an address that has no account any more, and is not sent.
 *
 * A failed attempt is classified (delivery-policy.ts): a permanent SMTP refusal is recorded as
 * undeliverable and acked at once; anything else is retried with exponential back-off and jitter
 * (a delayed `nak`) until the event is `MAIL_MAX_AGE_MS` old, then recorded as undeliverable too.
 * Every log line about an event carries its `event_id` and `request_id`.
 */
@Injectable()
export class MailConsumer extends EventConsumer<HandledType> {
  private readonly mailLogger: PinoLogger;
  private readonly sender: MailSender;
  private readonly archive: MessageArchive;
  private readonly policy: RetryPolicy;
  private readonly sent: Counter<'kind'>;
  private readonly failures: Counter<'kind'>;
  private readonly undeliverable: Counter<'kind' | 'reason'>;
  /** Set once a stop has let the message in hand go (its grace is over, the connection closed). */
  private graceOver = false;

  constructor(
    @Inject(MAILER_CONFIG) private readonly config: MailerConfig,
    @Inject(METRICS_REGISTRY) registry: Registry,
    @Inject(MAILER_LOGGER) logger: PinoLogger,
    private readonly clock: Clock,
  ) {
    super({
      natsUrl: config.NATS_URL,
      name: 'mailer',
      stream: STREAMS.identity,
      durable: 'mailer',
      filterSubject: 'identity.user.>',
      types: [USER_CREATED, PASSWORD_RESET_REQUESTED, USER_DELETED],
      logger: new Logger('mail'),
    });
    this.mailLogger = logger.child({ context: 'mail' });
    this.policy = {
      baseMs: config.MAIL_RETRY_BASE_MS,
      maxMs: config.MAIL_RETRY_MAX_MS,
      maxAgeMs: config.MAIL_MAX_AGE_MS,
    };
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
    this.failures = new Counter({
      name: 'mailer_mail_failed_total',
      help: 'Attempts to send an e-mail that failed (retried later, or given up as undeliverable).',
      labelNames: ['kind'],
      registers: [registry],
    });
    this.undeliverable = new Counter({
      name: 'mailer_mail_undeliverable_total',
      help: 'E-mails given up: refused for good by the SMTP server, or still failing at the maximum age.',
      labelNames: ['kind', 'reason'],
      registers: [registry],
    });
    // Every series at 0 from the start: a mailer that has sent nothing since it started has a sent
    // rate of 0, not none (the MailFailing alert compares it with 0), and a first increment counts.
    const reasons: ReadonlyArray<UndeliverableRecord['reason']> = ['refused', 'expired'];
    for (const kind of MAIL_KINDS) {
      this.sent.inc({ kind }, 0);
      this.failures.inc({ kind }, 0);
      for (const reason of reasons) this.undeliverable.inc({ kind, reason }, 0);
    }
  }

  protected override async stop() {
    await super.stop();
    this.graceOver = true;
    this.sender.close();
  }

  /** With the ids the malformed event's envelope still gives, like every line about an event. */
  protected override logRejection(message: JsMsg, json: unknown, reason: string): void {
    const { eventId, requestId } = labelsOf(json);
    this.mailLogger.warn(
      { event_id: eventId, request_id: requestId, subject: message.subject, seq: message.seq },
      `rejected ${message.subject} #${message.seq}: ${reason}`,
    );
  }

  protected async handleEvent(event: EventOf<HandledType>, message: JsMsg): Promise<Outcome> {
    if (event.type === USER_DELETED) return this.markUserDeleted(event, message);
    const job = jobOf(event);
    if (!job) return 'ack';
    const labels = labelsOf(event);
    // The request id comes from the event's request context (EventConsumer), as on every line of it.
    const log = this.mailLogger.child({ event_id: job.eventId, kind: job.kind });
    let archived: Buffer;
    try {
      const [done, userDeleted] = await Promise.all([
        this.archive.outcomeOf(job.eventId),
        this.archive.isUserDeleted(job.userId),
      ]);
      if (done) {
        log.info(`${job.kind} mail already ${done}: a redelivery, acknowledged`);
        return 'ack';
      }
      if (userDeleted) {
        log.info(`${job.kind} mail not sent: its user was deleted, and its link with it`);
        return 'ack';
      }
      // Held up (the broker, the mailer or the SMTP server away) past the link's expiry, the mail
      // would bring a dead link: it is given up instead. Sent late, it says how long the link still works.
      const linkLifetimeMs = this.linkLifetimeMs(job);
      if (linkLifetimeMs !== undefined && linkLifetimeMs <= 0) {
        const verdict = { permanent: true, code: 'ELINKEXPIRED', detail: `the link expired at ${job.expiresAt}` };
        return this.giveUp('expired', job, labels, message.info.deliveryCount, verdict, log);
      }
      const { mail, archived: copy } = renderWithArchivedCopy(
        job.kind,
        job.locale,
        job.displayName,
        job.token,
        (token) => this.linkFor(token, job.locale),
        linkLifetimeMs,
      );
      archived = await this.sender.send({ to: job.to, messageId: `<${job.eventId}@account-platform>`, ...mail }, copy);
    } catch (error) {
      return this.attemptFailed(job, labels, message, log, error);
    }
    try {
      await this.storeSent(job.eventId, archived, message, log);
    } catch (error) {
      log.warn(`${job.kind} mail sent, its copy not stored before the stop: ${(error as Error).message}`);
      return 'retry';
    }
    this.sent.inc({ kind: job.kind });
    log.info(`sent ${job.kind} mail for event ${job.eventId}`);
    return 'ack';
  }

  /**
   * Marks the user deleted: its links died with it, so a mail of its still waiting (a retry, the SMTP
   * server away) is not sent. Retried with the mails' back-off while object storage is away.
   */
  private async markUserDeleted(event: EventOf<typeof USER_DELETED>, message: JsMsg): Promise<Outcome> {
    try {
      await this.archive.markUserDeleted(event.data.user_id, event.id, event.occurred_at);
      return 'ack';
    } catch (error) {
      const delay = retryDelayMs(message.info.deliveryCount, this.policy);
      this.mailLogger.warn(
        { event_id: event.id, retry_in_ms: delay },
        `deleted user ${event.data.user_id} not marked yet (${(error as Error).message}); retrying in ${delay} ms`,
      );
      return { retryInMs: delay };
    }
  }

  /**
   * The link of the mail (the archived copy gets it with the token redacted), with the mail's language
   * so the page speaks it too.
   */
  private linkFor(token: string, locale: string): string {
    const lang = encodeURIComponent(wordingFor(locale).locale);
    return `${this.config.PUBLIC_URL.replace(/\/$/, '')}/activate?token=${encodeURIComponent(token)}&lang=${lang}`;
  }

  /** How long the mail's link still works, when the event says when it expires. */
  private linkLifetimeMs(job: MailJob): number | undefined {
    const expiresAt = Date.parse(job.expiresAt ?? '');
    return Number.isFinite(expiresAt) ? expiresAt - this.clock.now() : undefined;
  }

  /** A failed attempt: given up when refused for good or too old, else retried after a back-off. */
  private attemptFailed(
    job: MailJob,
    labels: EventLabels,
    message: JsMsg,
    log: PinoLogger,
    error: unknown,
  ): Promise<Outcome> | Outcome {
    this.failures.inc({ kind: job.kind });
    const verdict = classifyFailure(error);
    const attempt = message.info.deliveryCount;
    if (verdict.permanent) return this.giveUp('refused', job, labels, attempt, verdict, log);
    if (labels.occurredAt && tooOldToRetry(labels.occurredAt, this.clock.now(), this.policy))
      return this.giveUp('expired', job, labels, attempt, verdict, log);
    const delay = retryDelayMs(attempt, this.policy);
    log.warn(
      { attempt, retry_in_ms: delay, smtp_code: verdict.smtpCode ?? null, error_code: verdict.code },
      `${job.kind} mail not sent (${verdict.code}: ${withoutAddresses(verdict.detail)}); retrying in ${delay} ms`,
    );
    return { retryInMs: delay };
  }

  /** Records the mail as undeliverable beside the sent copies and acknowledges the event for good. */
  private async giveUp(
    reason: UndeliverableRecord['reason'],
    job: MailJob,
    labels: EventLabels,
    attempt: number,
    verdict: FailureVerdict,
    log: PinoLogger,
  ): Promise<Outcome> {
    const details = { reason, attempt, smtp_code: verdict.smtpCode ?? null, error_code: verdict.code };
    try {
      await this.archive.storeUndeliverable({
        event_id: job.eventId,
        event_type: labels.type ?? '',
        request_id: labels.requestId,
        kind: job.kind,
        to: job.to,
        reason,
        occurred_at: labels.occurredAt ?? '',
        recorded_at: this.clock.date().toISOString(),
        attempts: attempt,
        smtp_code: verdict.smtpCode ?? null,
        error_code: verdict.code,
        detail: verdict.detail,
      });
    } catch (error) {
      const delay = retryDelayMs(attempt, this.policy);
      log.warn(
        { ...details, retry_in_ms: delay },
        `${job.kind} mail undeliverable, not recorded yet (${(error as Error).message}); retrying in ${delay} ms`,
      );
      return { retryInMs: delay };
    }
    this.undeliverable.inc({ kind: job.kind, reason });
    log.warn(
      details,
      `${job.kind} mail undeliverable (${reason}: ${withoutAddresses(verdict.detail)}); recorded as ${MessageArchive.undeliverableKeyOf(job.eventId)}, not retried`,
    );
    return 'ack';
  }

  /**
   * Writes the copy of a sent mail, retrying until object storage answers (see the class comment),
   * through a stop's grace too: given back unrecorded, the mail would be sent again by the next
   * mailer. Only the end of the grace ends it, the message no longer being kept in progress.
   */
  private async storeSent(eventId: string, raw: Buffer, message: JsMsg, log: PinoLogger): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        await this.archive.store(eventId, raw);
        return;
      } catch (error) {
        if (this.graceOver) throw error;
        if (attempt === 1) log.warn(`copy of sent mail ${eventId} not stored yet: ${(error as Error).message}`);
        message.working(); // keeps JetStream from redelivering it meanwhile
        await new Promise((resolve) => setTimeout(resolve, Math.min(2000, 100 * 2 ** attempt)));
      }
    }
  }
}

/**
 * The mail an event asks for, if any: an activation only when identity asked for one, and none for an
 * event without its token (the user deleted before its event left identity's outbox).
 */
function jobOf(event: EventOf<MailEventType>): MailJob | undefined {
  if (event.type === USER_CREATED) {
    if (!event.data.send_activation || !event.data.activation_token) return undefined;
    return {
      eventId: event.id,
      userId: event.data.user_id,
      kind: 'activation',
      to: event.data.email,
      displayName: event.data.display_name,
      locale: event.data.locale,
      token: event.data.activation_token,
      expiresAt: event.data.activation_expires_at,
    };
  }
  // No link (the user was deleted before its event left identity's outbox): nothing to send.
  if (!event.data.token) return undefined;
  return {
    eventId: event.id,
    userId: event.data.user_id,
    // A pending user's link from the reset operation is its activation (interface §3).
    kind: event.data.activation ? 'activation' : 'password_reset',
    to: event.data.email,
    displayName: event.data.display_name,
    locale: event.data.locale,
    token: event.data.token,
    expiresAt: event.data.expires_at,
  };
}
