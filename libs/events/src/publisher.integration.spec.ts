import { randomUUID } from 'node:crypto';

import { connect, NatsConnection } from 'nats';

import { JetStreamPublisher } from './publisher';

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

/** The shared NATS, on a stream of its own. */
describe('JetStreamPublisher (real NATS JetStream)', () => {
  const id = randomUUID().slice(0, 8);
  const stream = { name: `TEST_PUBLISHER_${id}`, subjects: [`test-publisher-${id}.>`] };
  let nats: NatsConnection;
  let publisher: JetStreamPublisher;

  beforeAll(async () => {
    nats = await connect({ servers: NATS_URL });
    publisher = new JetStreamPublisher({ natsUrl: NATS_URL, name: 'test-publisher', stream });
  });

  afterAll(async () => {
    await publisher.close();
    await (await nats.jetstreamManager()).streams.delete(stream.name).catch(() => undefined);
    await nats.close();
  });

  it('creates its stream again when JetStream lost it, and the message is published', async () => {
    const jsm = await nats.jetstreamManager();
    await publisher.publish(`test-publisher-${id}.event`, 'first', randomUUID());
    expect((await jsm.streams.info(stream.name)).state.messages).toBe(1);

    // A NATS restarted with an empty store, or an operator's delete: no stream takes the subject now.
    await jsm.streams.delete(stream.name);
    await publisher.publish(`test-publisher-${id}.event`, 'second', randomUUID());
    const info = await jsm.streams.info(stream.name);
    expect(info.state.messages).toBe(1);
    expect((await jsm.streams.getMessage(stream.name, { seq: info.state.first_seq })).string()).toBe('second');
  });
});
