import { DomainError } from '@acct/problem';

import { PlatformBackend } from '../backends/backends.module';
import { loadGatewayConfig } from '../config';
import { HealthReporter } from './health-reporter';

describe('HealthReporter at start', () => {
  function reporterWith(answer: Promise<unknown>) {
    const platform = { call: jest.fn(() => answer), connected: () => false } as unknown as PlatformBackend;
    return new HealthReporter(platform, loadGatewayConfig({}));
  }

  it('is unready until its first report is in, and ready after it even when that report is down', async () => {
    let fail!: (error: Error) => void;
    const reporter = reporterWith(new Promise((_, reject) => (fail = reject)));

    await expect(reporter.check()).rejects.toThrow('first health report not in yet');
    reporter.onApplicationBootstrap();
    await expect(reporter.check()).rejects.toThrow('first health report not in yet');
    fail(new DomainError('service_unavailable', 'platform did not answer'));
    await new Promise((resolve) => setImmediate(resolve));

    await expect(reporter.check()).resolves.toBeUndefined();
  });

  it('reports the platform down with the time it waited, and every component the platform probes down with it', async () => {
    const reporter = reporterWith(Promise.reject(new DomainError('service_unavailable', 'no answer')));
    const report = await reporter.report();
    expect(report.status).toBe('down');
    const waited = report.checks.find((check) => check.component === 'platform')!.latency_ms;
    expect(report.checks).toEqual(
      ['database', 'cache', 'object_storage', 'message_bus', 'identity', 'auth', 'platform'].map((component) => ({
        component,
        status: 'down',
        latency_ms: waited,
      })),
    );
  });
});

describe('HealthReporter when the platform answers with an error', () => {
  it.each([
    ['an internal error', new DomainError('internal_error', 'An unexpected error occurred.')],
    ["the gateway's token refused", new DomainError('unauthenticated', 'The access token is not valid.')],
    ['an error of no kind it knows', new Error('boom')],
  ])('reports the platform down and becomes ready after %s, as after no answer', async (_, error) => {
    const platform = {
      call: jest.fn(() => Promise.reject(error)),
      connected: () => false,
    } as unknown as PlatformBackend;
    const reporter = new HealthReporter(platform, loadGatewayConfig({}));
    const report = await reporter.report();
    expect(report.status).toBe('down');
    expect(report.checks.find((check) => check.component === 'platform')?.status).toBe('down');
    await expect(reporter.check()).resolves.toBeUndefined();
  });
});

describe('HealthReporter answering from memory', () => {
  const platformAnswer = (status: string) => ({
    status,
    checks: [{ component: 'database', status: status === 'healthy' ? 'up' : 'down', latencyMs: 0.5 }],
  });
  let answers: Array<() => Promise<unknown>>;
  let connected: boolean;
  let call: jest.Mock;
  let reporter: HealthReporter;

  beforeEach(() => {
    jest.useFakeTimers({ doNotFake: ['performance', 'nextTick', 'setImmediate'] });
    answers = [];
    connected = true;
    call = jest.fn(() => (answers.shift() ?? (() => Promise.resolve(platformAnswer('healthy'))))());
    const platform = { call, connected: () => connected } as unknown as PlatformBackend;
    reporter = new HealthReporter(platform, loadGatewayConfig({ HEALTH_REPORT_REFRESH_MS: '1000' }));
  });

  afterEach(() => {
    reporter.onApplicationShutdown();
    jest.useRealTimers();
  });

  const settle = () => new Promise((resolve) => setImmediate(resolve));

  it('answers every request from the latest report without calling the platform', async () => {
    reporter.onApplicationBootstrap();
    await settle();
    for (let i = 0; i < 5; i += 1) expect((await reporter.report()).status).toBe('healthy');
    expect(call).toHaveBeenCalledTimes(1);
  });

  it('measures again in the background every refresh interval, and answers with the new report', async () => {
    answers.push(() => Promise.resolve(platformAnswer('healthy')));
    answers.push(() => Promise.resolve(platformAnswer('down')));
    reporter.onApplicationBootstrap();
    await settle();
    expect((await reporter.report()).status).toBe('healthy');
    jest.advanceTimersByTime(1000);
    await settle();
    expect(call).toHaveBeenCalledTimes(2);
    const report = await reporter.report();
    expect(report.status).toBe('down');
    expect(report.checks.map((check) => check.component)).toEqual(['database', 'platform']);
    expect(call).toHaveBeenCalledTimes(2);
  });

  it('asks the platform itself while the channel is not connected, so a platform that is gone is down at once, naming what it last probed', async () => {
    // The platform's answer named a component of its own beside the contract's.
    answers.push(() =>
      Promise.resolve({ status: 'healthy', checks: [{ component: 'search', status: 'up', latencyMs: 0.5 }] }),
    );
    reporter.onApplicationBootstrap();
    await settle();
    connected = false;
    answers.push(() => Promise.reject(new DomainError('service_unavailable', 'connection refused')));
    const report = await reporter.report();
    expect(report.status).toBe('down');
    expect(report.checks.map((check) => [check.component, check.status])).toEqual(
      ['database', 'cache', 'object_storage', 'message_bus', 'identity', 'auth', 'search', 'platform'].map(
        (component) => [component, 'down'],
      ),
    );
    expect(call).toHaveBeenCalledTimes(2);
  });
});

/**
 * Contract §2: while the cache is down the gateway limits with its in-process buckets and health reports
 * `degraded`. The gateway falls back when its own Redis connection fails or answers slower than
 * RATE_LIMIT_REDIS_TIMEOUT_MS, which the platform's probe (another connection, a 1 s timeout) may not see.
 */
describe("HealthReporter and the gateway's own Redis", () => {
  const platform = {
    call: jest.fn(() =>
      Promise.resolve({
        status: 'healthy',
        checks: [
          { component: 'database', status: 'up', latencyMs: 0.5 },
          { component: 'cache', status: 'up', latencyMs: 0.4 },
        ],
      }),
    ),
    connected: () => true,
  } as unknown as PlatformBackend;
  /** The gateway's rate-limit connection: it answers the write, or fails it as a closed or slow one does. */
  const redisAnswering = (answer: () => Promise<unknown>) => ({ status: 'ready', set: jest.fn(answer) }) as never;

  it('reports the cache down and the service degraded while its buckets fall back, though the platform sees Redis up', async () => {
    const reporter = new HealthReporter(
      platform,
      loadGatewayConfig({}),
      redisAnswering(() => Promise.reject(new Error('Command timed out'))),
    );
    const report = await reporter.report();
    expect(report.status).toBe('degraded');
    expect(report.checks.find((check) => check.component === 'cache')?.status).toBe('down');
    expect(report.checks.find((check) => check.component === 'database')?.status).toBe('up');
  });

  it('reports healthy while its own Redis connection answers too', async () => {
    const reporter = new HealthReporter(
      platform,
      loadGatewayConfig({}),
      redisAnswering(() => Promise.resolve('OK')),
    );
    const report = await reporter.report();
    expect(report.status).toBe('healthy');
    expect(report.checks.find((check) => check.component === 'cache')?.status).toBe('up');
  });
});
