import { ComponentResult, overallStatus } from './health-status';

const check = (component: string, status: 'up' | 'down', critical: boolean): ComponentResult => ({
  component,
  status,
  critical,
  latencyMs: 1.5,
});

describe('overallStatus', () => {
  const allUp = [
    check('database', 'up', true),
    check('cache', 'up', false),
    check('object_storage', 'up', false),
    check('message_bus', 'up', false),
    check('identity', 'up', true),
  ];

  it('is healthy when every component is up', () => {
    expect(overallStatus(allUp)).toBe('healthy');
  });

  it.each(['cache', 'object_storage', 'message_bus'])('is degraded when only %s is down', (component) => {
    const results = allUp.map((result) =>
      result.component === component ? { ...result, status: 'down' as const } : result,
    );
    expect(overallStatus(results)).toBe('degraded');
  });

  it.each(['database', 'identity'])('is down when %s is down, whatever else fails', (component) => {
    const results = allUp.map((result) =>
      result.component === component || result.component === 'cache' ? { ...result, status: 'down' as const } : result,
    );
    expect(overallStatus(results)).toBe('down');
  });
});
