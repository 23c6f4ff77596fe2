import { GetObjectCommand, HeadObjectCommand, NotFound, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';

/** Why an event's mail was given up: refused for good by the SMTP server, or too old to retry. */
export interface UndeliverableRecord {
  event_id: string;
  event_type: string;
  request_id: string | null;
  kind: string;
  to: string;
  reason: 'refused' | 'expired';
  occurred_at: string;
  recorded_at: string;
  attempts: number;
  smtp_code: number | null;
  error_code: string;
  detail: string;
}

/** What the archive says was done with an event's mail. */
export type ArchivedOutcome = 'sent' | 'undeliverable';

/**
 * Copies of sent messages in object storage, one object per event: `messages/<event id>.eml`, and
 * beside them `undeliverable/<event id>.json` for mails given up. Either object is the mailer's record
 * of what it did with the event, so a redelivered event is recognised and nothing is sent twice.
 * `deleted-users/<user id>.json` marks a deleted user: a mail of its still waiting for a retry is not sent.
 */
export class MessageArchive {
  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
    /** Longest wait for one request: a hung store must not hold a message past its ack deadline. */
    private readonly timeoutMs = 5000,
  ) {}

  static keyOf(eventId: string) {
    return `messages/${eventId}.eml`;
  }

  static undeliverableKeyOf(eventId: string) {
    return `undeliverable/${eventId}.json`;
  }

  /** The mark of a deleted user: its mails not sent yet carry links that died with it. */
  static deletedUserKeyOf(userId: string) {
    return `deleted-users/${userId}.json`;
  }

  /** `sent`, `undeliverable`, or undefined when the event's mail was neither sent nor given up. */
  async outcomeOf(eventId: string): Promise<ArchivedOutcome | undefined> {
    const [sent, undeliverable] = await Promise.all([
      this.exists(MessageArchive.keyOf(eventId)),
      this.exists(MessageArchive.undeliverableKeyOf(eventId)),
    ]);
    return sent ? 'sent' : undeliverable ? 'undeliverable' : undefined;
  }

  /** Marks a user deleted, by its `identity.user.deleted` event (its id and time, for support). */
  async markUserDeleted(userId: string, eventId: string, occurredAt: string): Promise<void> {
    await this.s3.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: MessageArchive.deletedUserKeyOf(userId),
        Body: JSON.stringify({ user_id: userId, event_id: eventId, occurred_at: occurredAt }),
        ContentType: 'application/json',
      }),
      { abortSignal: AbortSignal.timeout(this.timeoutMs) },
    );
  }

  isUserDeleted(userId: string): Promise<boolean> {
    return this.exists(MessageArchive.deletedUserKeyOf(userId));
  }

  private async exists(key: string): Promise<boolean> {
    try {
      await this.s3.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }), {
        abortSignal: AbortSignal.timeout(this.timeoutMs),
      });
      return true;
    } catch (error) {
      if (error instanceof NotFound || (error as { name?: string }).name === 'NotFound') return false;
      throw error;
    }
  }

  async store(eventId: string, raw: Buffer): Promise<void> {
    await this.s3.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: MessageArchive.keyOf(eventId),
        Body: raw,
        ContentType: 'message/rfc822',
      }),
      { abortSignal: AbortSignal.timeout(this.timeoutMs) },
    );
  }

  async storeUndeliverable(record: UndeliverableRecord): Promise<void> {
    await this.s3.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: MessageArchive.undeliverableKeyOf(record.event_id),
        Body: JSON.stringify(record, null, 2),
        ContentType: 'application/json',
      }),
      { abortSignal: AbortSignal.timeout(this.timeoutMs) },
    );
  }

  async read(eventId: string): Promise<string> {
    const object = await this.s3.send(
      new GetObjectCommand({ Bucket: this.bucket, Key: MessageArchive.keyOf(eventId) }),
    );
    return (await object.Body?.transformToString('utf8')) ?? '';
  }
}
