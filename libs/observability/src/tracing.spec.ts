import { tracingEnabled } from './tracing';

describe('tracing switch', () => {
  it('is off by default', () => {
    expect(tracingEnabled({})).toBe(false);
  });

  it.each([
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }],
    [{ OTEL_TRACES_EXPORTER: 'console' }],
  ])('is on with %p', (env) => {
    expect(tracingEnabled(env)).toBe(true);
  });

  it.each([
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' }],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }],
  ])('stays off with %p', (env) => {
    expect(tracingEnabled(env)).toBe(false);
  });
});
