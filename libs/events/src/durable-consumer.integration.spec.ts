import { randomUUID } from 'node:crypto';

import { Logger } from '@nestjs/common';
import { connect, JsMsg, NatsConnection } from 'nats';

import { DurableConsumer } from './durable-consumer';
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
});
