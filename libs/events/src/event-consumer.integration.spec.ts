import { randomUUID } from 'node:crypto';

import { Injectable, Logger, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { connect, JsMsg, NatsConnection } from 'nats';

import { Outcome } from './durable-consumer';
import { EventOf, USER_ENABLED } from './envelope';
import { EventConsumer } from './event-consumer';
import { ensureStream } from './streams';

jest.setTimeout(60_000);

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
/** How long a stop waits for the message in hand here (15 s in the services). */
const STOP_GRACE_MS = 5_000;

const id = randomUUID().slice(0, 8);
const stream = { name: `TEST_CONSUMER_STOP_${id}`, subjects: [`test-consumer-stop-${id}.>`] };

/**
 * A consumer whose handler holds every message open until the test lets go: a handler slower than
 * the stop grace (an SMTP server or a database that does not answer).
 */
abstract class HeldConsumer extends EventConsumer<typeof USER_ENABLED> {
  readonly received: string[] = [];
  private release!: () => void;
  private readonly released = new Promise<void>((resolve) => (this.release = resolve));

  protected constructor(durable: string) {
    super({
      natsUrl: NATS_URL,
      name: durable,
      stream,
      durable,
      types: [USER_ENABLED],
      logger: new Logger(durable),
      stopGraceMs: STOP_GRACE_MS,
    });
  }

  override async handle(message: JsMsg): Promise<Outcome> {
    this.received.push(message.string());
    await this.released;
    return 'ack';
  }

  letGo() {
    this.release();
  }

  protected handleEvent(_event: EventOf<typeof USER_ENABLED>): Promise<Outcome> {
    return Promise.resolve('ack');
  }
}

@Injectable()
class SessionEndingLike extends HeldConsumer {
  constructor() {
    super(`session-ending-${id}`);
  }
}

@Injectable()
class AdminAuditLike extends HeldConsumer {
  constructor() {
    super(`admin-audit-${id}`);
  }
}

@Module({ providers: [SessionEndingLike] })
class RevocationLikeModule {}

@Module({ providers: [AdminAuditLike] })
class AuditLikeModule {}

/**
 * Two durable consumers in two modules of one application, as auth runs `auth-session-ending` and
 * `auth-admin-audit`, on a stream of their own on the shared NATS.
 */
describe('EventConsumer stopped with its application (real NATS JetStream)', () => {
  let nats: NatsConnection;

  beforeAll(async () => {
    nats = await connect({ servers: NATS_URL });
    await ensureStream(await nats.jetstreamManager(), stream);
  });

  afterAll(async () => {
    await (await nats.jetstreamManager()).streams.delete(stream.name).catch(() => undefined);
    await nats.close();
  });

  it("stops every consumer of the application at once: two slow messages in hand take one stop grace, not two (Kubernetes' 20 s)", async () => {
    const app = await Test.createTestingModule({ imports: [RevocationLikeModule, AuditLikeModule] })
      .setLogger({ log: () => undefined, warn: () => undefined, error: () => undefined })
      .compile();
    await app.init();
    const consumers = [app.get(SessionEndingLike), app.get(AdminAuditLike)];
    try {
      await nats.jetstream().publish(`test-consumer-stop-${id}.event`, 'in hand');
      const deadline = Date.now() + 15_000;
      while (consumers.some((consumer) => consumer.received.length === 0) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(consumers.map((consumer) => consumer.received)).toEqual([['in hand'], ['in hand']]);

      const began = Date.now();
      await app.close(); // what SIGTERM does
      const took = Date.now() - began;

      // Each stop waited its grace for the message in hand; one after the other they would take two.
      expect(took).toBeGreaterThanOrEqual(STOP_GRACE_MS);
      expect(took).toBeLessThan(2 * STOP_GRACE_MS);
    } finally {
      for (const consumer of consumers) consumer.letGo();
    }
  });
});
