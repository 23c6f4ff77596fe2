import pino from 'pino';

import { exitGracefullyOnSignals, isDraining } from './shutdown';

describe('graceful shutdown', () => {
  afterEach(() => {
    process.removeAllListeners('SIGTERM');
    process.removeAllListeners('SIGINT');
  });

  it('turns unready first, drains, then closes, and exits 0', async () => {
    const steps: string[] = [];
    const exited = new Promise<number>((resolve) =>
      exitGracefullyOnSignals({
        logger: pino({ level: 'silent' }),
        graceMs: 5000,
        drain: () => {
          steps.push(`drain (draining: ${isDraining()})`);
          return Promise.resolve();
        },
        close: () => {
          steps.push('close');
          return Promise.resolve();
        },
        exit: resolve,
      }),
    );
    expect(isDraining()).toBe(false);
    process.emit('SIGTERM');
    expect(await exited).toBe(0);
    expect(steps).toEqual(['drain (draining: true)', 'close']);
  });

  it('exits 1 when the work in flight outlasts the grace period', async () => {
    const exited = new Promise<number>((resolve) =>
      exitGracefullyOnSignals({
        logger: pino({ level: 'silent' }),
        graceMs: 50,
        drain: () => new Promise(() => undefined),
        close: () => Promise.resolve(),
        exit: resolve,
      }),
    );
    process.emit('SIGTERM');
    expect(await exited).toBe(1);
  });
});
