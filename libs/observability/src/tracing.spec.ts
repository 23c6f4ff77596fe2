import { execFileSync } from 'node:child_process';
import path from 'node:path';

import { tracingEnabled } from './tracing';

const repositoryRoot = path.resolve(__dirname, '../../..');

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

describe('a traced HTTP request', () => {
  /**
   * One request to a server of a process tracing to the console exporter (startTracing, as every main
   * does): what its server span keeps of the query (given in the environment, which no span records).
   */
  function tracedQuery(query: string): string {
    const script = `
      const { startTracing, stopTracing } = require('./libs/observability/src/tracing.ts');
      startTracing('test').then(async () => {
        const http = require('node:http');
        const server = http.createServer((_request, response) => response.end('ok'));
        await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
        await fetch('http://127.0.0.1:' + server.address().port + '/v2/users/me?' + process.env.QUERY);
        server.close();
        await stopTracing();
      });`;
    return execFileSync(process.execPath, ['-r', './tools/run-ts.cjs', '-e', script], {
      cwd: repositoryRoot,
      env: { ...process.env, OTEL_TRACES_EXPORTER: 'console', OTEL_SERVICE_NAME: 'test', QUERY: query },
      encoding: 'utf8',
    });
  }

  it('keeps no credential a client put in the query, and the rest of it', () => {
    const output = tracedQuery(
      'access_token=at-secret-1&password=pw-secret-2&client_secret=cs-secret-3&refresh_token=rt-secret-4' +
        '&code=ac-secret-5&code_verifier=cv-secret-6&token=ot-secret-7&limit=20',
    );
    expect(output).toContain('url.query');
    expect(output).toContain('limit=20');
    for (const secret of [
      'at-secret-1',
      'pw-secret-2',
      'cs-secret-3',
      'rt-secret-4',
      'ac-secret-5',
      'cv-secret-6',
      'ot-secret-7',
    ])
      expect(output).not.toContain(secret);
  });
});
