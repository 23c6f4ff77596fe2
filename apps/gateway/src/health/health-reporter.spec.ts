import { DomainError } from '@acct/problem';

import { PlatformBackend } from '../backends/backends.module';
import { loadGatewayConfig } from '../config';
import { HealthReporter } from './health-reporter';

describe('HealthReporter at start', () => {
  function reporterWith(answer: Promise<unknown>) {
    const platform = { call: jest.fn(() => answer) } as unknown as PlatformBackend;
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

  it('reports the platform as down with the time it waited when the platform does not answer', async () => {
    const reporter = reporterWith(Promise.reject(new DomainError('service_unavailable', 'no answer')));
    const report = await reporter.report();
    expect(report.status).toBe('down');
    expect(report.checks).toEqual([{ component: 'platform', status: 'down', latency_ms: expect.any(Number) }]);
  });
});
