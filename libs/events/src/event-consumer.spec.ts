import { currentRequestId } from '@acct/observability';
import { Logger } from '@nestjs/common';
import { JsMsg } from 'nats';

import { Outcome } from './durable-consumer';
import { EventOf, USER_ACTIVATED, USER_ENABLED } from './envelope';
import { EventConsumer } from './event-consumer';
import { STREAMS } from './streams';

const enabled = {
  id: '7f1f3a52-4c1e-4d7b-9a43-0d2b8c1e9a10',
  type: USER_ENABLED,
  version: 1,
  occurred_at: '2026-11-23T10:00:00.000Z',
  data: { user_id: '0b6f7c8e-3f43-4c1c-9a52-0a4a0f3c2d11', org_id: 'org-1' },
};

const delivered = (subject: string, body: string) => ({ subject, seq: 7, string: () => body }) as unknown as JsMsg;

/** Never started: `handle` is driven by hand, no broker is involved. */
class EnabledUsers extends EventConsumer<typeof USER_ENABLED> {
  readonly seen: Array<EventOf<typeof USER_ENABLED>> = [];
  readonly warnings: string[] = [];
  /** The request id of the context each warning was logged in (what its log line carries). */
  readonly warningRequestIds: Array<string | undefined> = [];
  /** The request id of the context handleEvent ran in. */
  handledInRequest?: string;

  constructor(private readonly outcome: Outcome | Error = 'ack') {
    super({
      natsUrl: 'nats://127.0.0.1:9',
      name: 'test',
      stream: STREAMS.identity,
      durable: 'test',
      types: [USER_ENABLED],
      logger: new Logger('test'),
    });
    jest.spyOn(this.logger, 'warn').mockImplementation((message: string) => {
      this.warnings.push(message);
      this.warningRequestIds.push(currentRequestId());
    });
  }

  protected async handleEvent(event: EventOf<typeof USER_ENABLED>): Promise<Outcome> {
    this.seen.push(event);
    await Promise.resolve();
    this.handledInRequest = currentRequestId();
    if (this.outcome instanceof Error) throw this.outcome;
    return this.outcome;
  }
}

describe('EventConsumer', () => {
  it('hands a valid event of its types to handleEvent, parsed, and answers its outcome', async () => {
    const consumer = new EnabledUsers('retry');
    await expect(consumer.handle(delivered(USER_ENABLED, JSON.stringify(enabled)))).resolves.toBe('retry');
    expect(consumer.seen).toEqual([enabled]);
  });

  it('acknowledges the other events on its subjects unread', async () => {
    const consumer = new EnabledUsers();
    await expect(consumer.handle(delivered(USER_ACTIVATED, 'not even JSON'))).resolves.toBe('ack');
    expect(consumer.seen).toEqual([]);
    expect(consumer.warnings).toEqual([]);
  });

  it.each([
    ['not JSON', '{'],
    ['not a valid event', JSON.stringify({ ...enabled, data: { ...enabled.data, user_id: 'someone' } })],
    ['an event of another type', JSON.stringify({ ...enabled, type: USER_ACTIVATED })],
  ])('rejects a message that is %s, and logs it', async (_, body) => {
    const consumer = new EnabledUsers();
    await expect(consumer.handle(delivered(USER_ENABLED, body))).resolves.toBe('reject');
    expect(consumer.seen).toEqual([]);
    expect(consumer.warnings).toEqual([expect.stringMatching(/^rejected identity\.user\.enabled #7: /)]);
  });

  it("handles an event in the context of the request that raised it, so the handler's lines carry its request id", async () => {
    const consumer = new EnabledUsers();
    const event = { ...enabled, request_id: 'req-42' };
    await expect(consumer.handle(delivered(USER_ENABLED, JSON.stringify(event)))).resolves.toBe('ack');
    expect(consumer.handledInRequest).toBe('req-42');
  });

  it('logs a failed event with its request id and has it redelivered', async () => {
    const consumer = new EnabledUsers(new Error('database unavailable'));
    const event = { ...enabled, request_id: 'req-42' };
    await expect(consumer.handle(delivered(USER_ENABLED, JSON.stringify(event)))).resolves.toBe('retry');
    expect(consumer.warnings).toEqual([
      expect.stringMatching(/^identity\.user\.enabled #7 failed: database unavailable/),
    ]);
    expect(consumer.warningRequestIds).toEqual(['req-42']);
  });
});
