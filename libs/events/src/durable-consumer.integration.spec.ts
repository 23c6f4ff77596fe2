import { randomUUID } from 'node:crypto';

import { Logger } from '@nestjs/common';
import { connect, JsMsg, NatsConnection } from 'nats';

import { DurableConsumer, Outcome } from './durable-consumer';
import { ensureStream } from './streams';

jest.setTimeout(90_000);

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
/** The consumer's ack wait (30 s), and a little more. */
const PAST_THE_ACK_WAIT_MS = 32_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Two instances of one durable consumer (as two mailer replicas run) against the shared NATS, on a stream of their own. */
describe('DurableConsumer (real NATS JetStream)', () => {
  const id = randomUUID().slice(0, 8);
  const stream = { name: `TEST_DURABLE_${id}`, subjects: [`test-durable-${id}.>`] };
  let nats: NatsConnection;
  const consumers: DurableConsumer[] = [];

  beforeAll(async () => {
    nats = await connect({ servers: NATS_URL });
    await ensureStream(await nats.jetstreamManager(), stream);
  });

  afterAll(async () => {
    await Promise.all(consumers.map((consumer) => consumer.stop()));
    await (await nats.jetstreamManager()).streams.delete(stream.name).catch(() => undefined);
    await nats.close();
  });

  it('hands each message to one handler once, even when one takes longer than the ack wait', async () => {
    const js = nats.jetstream();
    for (const body of ['slow', 'second', 'third']) await js.publish(`test-durable-${id}.event`, body);
    const handled: string[] = [];
    const handle = async (message: JsMsg) => {
      const body = message.string();
      handled.push(body);
      // A mail whose server (or the archive check before it) is slow: the handler outlasts the ack wait.
      await sleep(body === 'slow' ? PAST_THE_ACK_WAIT_MS : 100);
      return 'ack' as const;
    };
    for (const name of ['replica-1', 'replica-2']) {
      const consumer = new DurableConsumer({
        natsUrl: NATS_URL,
        name,
        stream,
        durable: 'shared',
        handle,
        logger: new Logger(name),
      });
      consumers.push(consumer);
      consumer.start();
    }
    await sleep(PAST_THE_ACK_WAIT_MS + 5_000);
    // A message handled twice is a mail sent twice: the mailer's "already sent?" check cannot see a copy in flight.
    expect([...handled].sort()).toEqual(['second', 'slow', 'third']);
  });

  it('keeps delivering new messages while more than a thousand wait for their own delayed retry', async () => {
    // The mailer's case: an org invites 1,000 people at a domain that defers mail (greylisting, a full
    // or throttled server: SMTP 4yz), each retried with back-off for up to a day; a reset mail of
    // another org comes after them. JetStream counts a message given back with a delay as pending, and
    // stopped delivering anything at its default of 1,000 pending.
    // A stream of its own: the other test's durable, still running, would take these messages too.
    const deferring = { name: `TEST_DEFERRING_${id}`, subjects: [`test-deferring-${id}.>`] };
    await ensureStream(await nats.jetstreamManager(), deferring);
    const subject = `test-deferring-${id}.event`;
    const js = nats.jetstream();
    const deferred = 1000;
    for (let index = 0; index < deferred; index += 1) js.publish(subject, 'deferred').catch(() => undefined);
    await js.publish(subject, 'deferred');
    await js.publish(subject, 'healthy');
    let retried = 0;
    let healthy = false;
    const consumer = new DurableConsumer({
      natsUrl: NATS_URL,
      name: 'deferring',
      stream: deferring,
      durable: 'deferring',
      handle: (message): Promise<Outcome> => {
        if (message.string() === 'healthy') {
          healthy = true;
          return Promise.resolve('ack');
        }
        retried += 1;
        return Promise.resolve({ retryInMs: 10 * 60_000 });
      },
      logger: new Logger('deferring'),
    });
    consumers.push(consumer);
    consumer.start();
    const deadline = Date.now() + 60_000;
    while (!healthy && Date.now() < deadline) await sleep(500);
    await consumer.stop();
    await (await nats.jetstreamManager()).streams.delete(deferring.name).catch(() => undefined);
    expect({ healthy, retried }).toEqual({ healthy: true, retried: deferred + 1 });
  });
});
