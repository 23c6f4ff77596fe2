import { GetObjectCommand, HeadObjectCommand, NotFound, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';

import { MessageArchive, UndeliverableRecord } from './message-archive';

type Command = HeadObjectCommand | PutObjectCommand | GetObjectCommand;

/** An object store in memory, answering the three commands the archive sends; `failing` keys throw. */
function memoryStore(objects = new Map<string, string>(), failing = new Set<string>()) {
  const sent: Command[] = [];
  const s3 = {
    send: (command: Command) => {
      sent.push(command);
      const key = command.input.Key ?? '';
      if (failing.has(key)) return Promise.reject(new Error('connect ETIMEDOUT'));
      if (command instanceof PutObjectCommand) {
        const body = command.input.Body;
        objects.set(key, Buffer.isBuffer(body) ? body.toString('utf8') : typeof body === 'string' ? body : '');
        return Promise.resolve({});
      }
      if (!objects.has(key)) {
        return Promise.reject(new NotFound({ message: 'Not Found', $metadata: { httpStatusCode: 404 } }));
      }
      if (command instanceof GetObjectCommand) {
        return Promise.resolve({ Body: { transformToString: () => Promise.resolve(objects.get(key)) } });
      }
      return Promise.resolve({});
    },
  };
  return { archive: new MessageArchive(s3 as unknown as S3Client, 'mail-archive'), objects, sent };
}

const record = (eventId: string): UndeliverableRecord => ({
  event_id: eventId,
  event_type: 'identity.user.created',
  request_id: null,
  kind: 'activation',
  to: 'ada@example.test',
  reason: 'refused',
  occurred_at: '2026-11-22T10:00:00.000Z',
  recorded_at: '2026-11-22T10:00:05.000Z',
  attempts: 1,
  smtp_code: 550,
  error_code: 'EENVELOPE',
  detail: 'mailbox unavailable',
});

describe('MessageArchive', () => {
  it('knows nothing of an event whose mail was neither sent nor given up', async () => {
    const { archive } = memoryStore();
    await expect(archive.outcomeOf('event-1')).resolves.toBeUndefined();
  });

  it('says sent once the message is stored, and gives its copy back', async () => {
    const { archive, objects } = memoryStore();
    await archive.store('event-1', Buffer.from('Subject: Welcome\r\n\r\nhello'));
    expect([...objects.keys()]).toEqual(['messages/event-1.eml']);
    await expect(archive.outcomeOf('event-1')).resolves.toBe('sent');
    await expect(archive.read('event-1')).resolves.toBe('Subject: Welcome\r\n\r\nhello');
    await expect(archive.outcomeOf('event-2')).resolves.toBeUndefined();
  });

  it('says undeliverable once the record of a given-up mail is stored beside the messages', async () => {
    const { archive, objects } = memoryStore();
    await archive.storeUndeliverable(record('event-1'));
    expect(JSON.parse(objects.get('undeliverable/event-1.json') ?? '{}')).toEqual(record('event-1'));
    await expect(archive.outcomeOf('event-1')).resolves.toBe('undeliverable');
  });

  it('says sent when both exist: a sent message is never reported as given up', async () => {
    const { archive } = memoryStore();
    await archive.storeUndeliverable(record('event-1'));
    await archive.store('event-1', Buffer.from('raw'));
    await expect(archive.outcomeOf('event-1')).resolves.toBe('sent');
  });

  it('fails, rather than answer "nothing sent", when the store cannot be asked (so nothing is sent twice)', async () => {
    const { archive } = memoryStore(new Map(), new Set(['messages/event-1.eml']));
    await expect(archive.outcomeOf('event-1')).rejects.toThrow('ETIMEDOUT');
  });

  it('writes into its bucket with the content types of a message and of a record', async () => {
    const { archive, sent } = memoryStore();
    await archive.store('event-1', Buffer.from('raw'));
    await archive.storeUndeliverable(record('event-2'));
    expect(
      sent.map((command) => [command.input.Bucket, (command.input as { ContentType?: string }).ContentType]),
    ).toEqual([
      ['mail-archive', 'message/rfc822'],
      ['mail-archive', 'application/json'],
    ]);
  });
});
