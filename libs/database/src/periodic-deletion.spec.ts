import { FakeClock } from '@acct/clock';

import { PeriodicDeletion, PeriodicDeletionOptions } from './periodic-deletion';

const HOUR = 60 * 60 * 1000;

/** A table of `rows` due rows, deleted `batch` at a time; `failures` batches fail first. */
function setUp(rows: number, options: Partial<PeriodicDeletionOptions> & { failures?: number } = {}) {
  const clock = new FakeClock(Date.parse('2026-11-23T10:00:00Z'));
  const logger = { log: jest.fn<void, [string]>(), warn: jest.fn<void, [string]>() };
  const table = { rows, failures: options.failures ?? 0, batches: [] as Date[] };
  const deletion = new PeriodicDeletion({
    what: 'expired things',
    intervalMs: HOUR,
    deleteBatch: (now) => {
      table.batches.push(now);
      clock.advance(1); // a batch takes time: every batch of a run still gets the run's start
      if (table.failures > 0) {
        table.failures -= 1;
        return Promise.reject(new Error('connection refused'));
      }
      const deleted = Math.min(table.rows, options.batchSize ?? table.rows);
      table.rows -= deleted;
      return Promise.resolve(deleted);
    },
    clock,
    logger,
    ...options,
  });
  return { clock, logger, table, deletion };
}

describe('PeriodicDeletion', () => {
  afterEach(() => jest.useRealTimers());

  it('runs batches until one deletes fewer than the batch size, all as of the run’s start, and logs the total', async () => {
    const { deletion, table, logger } = setUp(2500, { batchSize: 1000 });
    await expect(deletion.run()).resolves.toBe(2500);
    expect(table.batches).toHaveLength(3);
    expect(new Set(table.batches.map((now) => now.getTime()))).toEqual(new Set([Date.parse('2026-11-23T10:00:00Z')]));
    expect(logger.log).toHaveBeenCalledWith('deleted 2500 expired things');
  });

  it('runs one more batch after one that deletes exactly the batch size, and logs nothing when nothing was due', async () => {
    const exact = setUp(2000, { batchSize: 1000 });
    await expect(exact.deletion.run()).resolves.toBe(2000);
    expect(exact.table.batches).toHaveLength(3);
    const empty = setUp(0, { batchSize: 1000 });
    await expect(empty.deletion.run()).resolves.toBe(0);
    expect(empty.table.batches).toHaveLength(1);
    expect(empty.logger.log).not.toHaveBeenCalled();
  });

  it('without a batch size, deletes once per run', async () => {
    const { deletion, table } = setUp(5000);
    await expect(deletion.run()).resolves.toBe(5000);
    expect(table.batches).toHaveLength(1);
  });

  it('joins a run in progress instead of starting a second one', async () => {
    const { deletion, table } = setUp(1500, { batchSize: 1000 });
    const [first, second] = await Promise.all([deletion.run(), deletion.run()]);
    expect([first, second]).toEqual([1500, 1500]);
    expect(table.batches).toHaveLength(2);
  });

  it('logs and throws a failed batch, and the next run tries again', async () => {
    const { deletion, table, logger } = setUp(1500, { batchSize: 1000, failures: 1 });
    await expect(deletion.run()).rejects.toThrow('connection refused');
    expect(logger.warn).toHaveBeenCalledWith('could not delete expired things: connection refused');
    await expect(deletion.run()).resolves.toBe(1500);
    expect(table.rows).toBe(0);
  });

  it('once started, runs every interval (not at once) and survives a failed run; stops with stop()', async () => {
    jest.useFakeTimers();
    const { deletion, table } = setUp(10, { failures: 1 });
    deletion.start();
    expect(table.batches).toHaveLength(0);
    await jest.advanceTimersByTimeAsync(HOUR);
    expect(table.batches).toHaveLength(1); // failed
    await jest.advanceTimersByTimeAsync(HOUR);
    expect(table.batches).toHaveLength(2);
    expect(table.rows).toBe(0);
    await deletion.stop();
    await jest.advanceTimersByTimeAsync(3 * HOUR);
    expect(table.batches).toHaveLength(2);
  });

  it('stop() answers once the run in progress has ended', async () => {
    let finish: (deleted: number) => void = () => undefined;
    const { deletion } = setUp(0, {
      deleteBatch: () => new Promise<number>((resolve) => (finish = resolve)),
    });
    const run = deletion.run();
    let stopped = false;
    const stopping = deletion.stop().then(() => (stopped = true));
    await Promise.resolve();
    expect(stopped).toBe(false);
    finish(3);
    await stopping;
    await expect(run).resolves.toBe(3);
  });

  it('ends a run after the batch in hand once stopping, and tells a batch that loops itself', async () => {
    let finish: (deleted: number) => void = () => undefined;
    const seen: boolean[] = [];
    const { deletion } = setUp(0, {
      batchSize: 10,
      deleteBatch: (_now, stopping) => {
        seen.push(stopping());
        return new Promise<number>((resolve) => (finish = resolve));
      },
    });
    const run = deletion.run();
    const stopped = deletion.stop();
    finish(10); // a whole batch: without the stop, another would follow
    await stopped;
    await expect(run).resolves.toBe(10);
    expect(seen).toEqual([false]);
  });
});
