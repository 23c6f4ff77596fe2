import { GetObjectCommand, HeadObjectCommand, NotFound, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';

/**
 * Copies of sent messages in object storage, one object per event: `messages/<event id>.eml`. The
 * copy is also the mailer's record of what it sent, so a redelivered event is recognised.
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

  async has(eventId: string): Promise<boolean> {
    try {
      await this.s3.send(new HeadObjectCommand({ Bucket: this.bucket, Key: MessageArchive.keyOf(eventId) }), {
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

  async read(eventId: string): Promise<string> {
    const object = await this.s3.send(
      new GetObjectCommand({ Bucket: this.bucket, Key: MessageArchive.keyOf(eventId) }),
    );
    return (await object.Body?.transformToString('utf8')) ?? '';
  }
}
