import { commonEnv, databaseUrl, flag, grpcAddress, port, queryTimeoutEnv, tokenEnv } from './common-env';
import { ConfigError, loadConfig } from './load-config';

describe('loadConfig', () => {
  const shape = {
    ...commonEnv,
    GATEWAY_PORT: port(8080),
    DATABASE_URL: databaseUrl('identity'),
    FLAG: flag(false),
    TARGET: grpcAddress('127.0.0.1:50051'),
  };

  it('fills every documented default when the environment is empty', () => {
    const config = loadConfig(shape, {});
    expect(config.GATEWAY_PORT).toBe(8080);
    expect(config.DATABASE_URL).toBe('postgresql://postgres@127.0.0.1:5432/identity');
    expect(config.REGION).toBe('local-1');
    expect(config.FLAG).toBe(false);
    expect(config.GRPC_DEADLINE_MS).toBe(2000);
  });

  it('coerces values from strings', () => {
    const config = loadConfig(shape, { GATEWAY_PORT: '9999', FLAG: 'true', GRPC_DEADLINE_MS: '250' });
    expect(config).toMatchObject({ GATEWAY_PORT: 9999, FLAG: true, GRPC_DEADLINE_MS: 250 });
  });

  it('names every invalid variable at once', () => {
    const attempt = () =>
      loadConfig(shape, { GATEWAY_PORT: '70000', DATABASE_URL: 'mysql://x/y', TARGET: 'nohost', LOG_LEVEL: 'loud' });
    expect(attempt).toThrow(ConfigError);
    try {
      attempt();
    } catch (error) {
      const problems = (error as ConfigError).problems.join('\n');
      for (const name of ['GATEWAY_PORT', 'DATABASE_URL', 'TARGET', 'LOG_LEVEL']) expect(problems).toContain(name);
    }
  });

  it('takes one host:port, a dns:/// name, or a list of IPv4 ip:port for round-robin, as a gRPC address', () => {
    expect(loadConfig(shape, { TARGET: 'identity.svc:50051' }).TARGET).toBe('identity.svc:50051');
    expect(loadConfig(shape, { TARGET: 'dns:///identity-grpc.acct.svc:50051' }).TARGET).toBe(
      'dns:///identity-grpc.acct.svc:50051',
    );
    expect(loadConfig(shape, { TARGET: '127.0.0.1:1001,127.0.0.1:1002' }).TARGET).toBe('127.0.0.1:1001,127.0.0.1:1002');
    for (const bad of ['a.svc:1,b.svc:2', '127.0.0.1:1,', '127.0.0.1', 'dns://identity:1', 'dns:///a:1,dns:///b:2']) {
      expect(() => loadConfig(shape, { TARGET: bad })).toThrow(ConfigError);
    }
  });

  it('takes a TOKEN_ISSUER that is an http(s) URL without query or fragment, which discovery builds on (RFC 8414 §2)', () => {
    const issuerShape = { ...tokenEnv };
    for (const good of ['https://accounts.example.com', 'http://127.0.0.1:8080', 'https://example.com/tenant']) {
      expect(loadConfig(issuerShape, { TOKEN_ISSUER: good }).TOKEN_ISSUER).toBe(good);
    }
    for (const bad of [
      'accounts.example.com',
      'issuer',
      'ftp://example.com',
      'https://a.example?x=1',
      'https://a.example#f',
    ]) {
      expect(() => loadConfig(issuerShape, { TOKEN_ISSUER: bad })).toThrow(/TOKEN_ISSUER: /);
    }
  });

  it('refuses, by name, a tracing exporter or OTLP protocol OpenTelemetry would only warn about and then trace nothing', () => {
    for (const good of ['otlp', 'console', 'zipkin', 'otlp,console', 'none']) {
      expect(loadConfig(shape, { OTEL_TRACES_EXPORTER: good }).OTEL_TRACES_EXPORTER).toBe(good);
    }
    expect(loadConfig(shape, { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }).OTEL_EXPORTER_OTLP_PROTOCOL).toBe('grpc');
    expect(() => loadConfig(shape, { OTEL_TRACES_EXPORTER: 'otlp,jeager' })).toThrow(/OTEL_TRACES_EXPORTER: /);
    expect(() => loadConfig(shape, { OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http' })).toThrow(
      /OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: /,
    );
  });

  it("refuses, by name, a duration longer than Node's timers can wait (they would fire after 1 ms instead)", () => {
    // 2^31 - 1 ms (about 24.8 days) is the longest: a statement timeout of 2^31 ms failed every query at
    // once, and a shutdown grace of 2^31 ms exited 1 at SIGTERM, dropping the requests in flight.
    expect(loadConfig(shape, { GRPC_DEADLINE_MS: '2147483647' }).GRPC_DEADLINE_MS).toBe(2_147_483_647);
    for (const tooLong of ['2147483648', '3000000000']) {
      expect(() => loadConfig(shape, { GRPC_DEADLINE_MS: tooLong })).toThrow(/GRPC_DEADLINE_MS: .*24\.8 days/);
    }
    expect(() => loadConfig(queryTimeoutEnv, { DATABASE_QUERY_TIMEOUT_MS: '3000000000' })).toThrow(
      /DATABASE_QUERY_TIMEOUT_MS: /,
    );
  });

  it('returns a frozen object', () => {
    expect(Object.isFrozen(loadConfig(shape, {}))).toBe(true);
  });
});
