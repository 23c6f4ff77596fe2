import { loadPlatformConfig } from '../config';
import { HealthMonitor } from './health-monitor.service';
import { Probe } from './probes';

/** A probe the test answers by hand. */
class HeldProbe implements Probe {
  private release!: (error?: Error) => void;
  readonly answered = new Promise<void>((resolve, reject) => {
    this.release = (error) => (error ? reject(error) : resolve());
  });

  constructor(
    readonly component: string,
    readonly critical: boolean,
  ) {}

  run() {
    return this.answered;
  }

  answer(error?: Error) {
    this.release(error);
  }
}

describe('HealthMonitor before its first round of probes', () => {
  const config = loadPlatformConfig({ HEALTH_PROBE_TIMEOUT_MS: '60000' });

  it('is unready, and reports nothing it has not measured: the first report waits for the first round', async () => {
    const database = new HeldProbe('database', true);
    const cache = new HeldProbe('cache', false);
    const monitor = new HealthMonitor([database, cache], config);

    await expect(monitor.check()).rejects.toThrow('first health probes still running');
    let report: Awaited<ReturnType<HealthMonitor['latest']>> | undefined;
    const answered = monitor.latest().then((latest) => (report = latest));
    database.answer();
    await Promise.resolve();
    expect(report).toBeUndefined();
    cache.answer(new Error('connection refused'));
    await answered;

    expect(report?.status).toBe('degraded');
    expect(report?.checks.map(({ component, status, error }) => ({ component, status, error }))).toEqual([
      { component: 'database', status: 'up', error: undefined },
      { component: 'cache', status: 'down', error: 'connection refused' },
    ]);
    await expect(monitor.check()).resolves.toBeUndefined();
    await monitor.onModuleDestroy();
  });
});
