import { Writable } from 'node:stream';

import pino from 'pino';

import { createLogger, lineTime } from './logger';

/** The JSON lines a logger writes. */
function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: createLogger('test', 'info', destination) };
}

describe('createLogger', () => {
  it('never writes a secret, a token or a device credential, however it is named', () => {
    const { lines, logger } = capture();
    logger.info(
      {
        password: 'p',
        deviceToken: 'd1',
        device_token: 'd2',
        request: { deviceToken: 'd3', client_secret: 's', username: 'ada@example.test' },
        req: { headers: { authorization: 'Bearer t', 'x-device-token': 'd4', 'user-agent': 'jest' } },
      },
      'a request',
    );
    const text = JSON.stringify(lines);
    for (const secret of ['"p"', 'd1', 'd2', 'd3', '"s"', 'Bearer t', 'd4']) expect(text).not.toContain(secret);
    expect(lines[0]).toMatchObject({
      message: 'a request',
      request: { username: 'ada@example.test' },
      req: { headers: { 'user-agent': 'jest' } },
    });
  });

  it('never writes the secret fields of any request or answer, snake_case or camelCase, two levels down', () => {
    const { lines, logger } = capture();
    // The names the proto messages and HTTP bodies give their secrets, as grpc-js hands them over
    // (camelCase) and as the wire has them (snake_case).
    const secrets = {
      clientSecret: 'cs1',
      refreshToken: 'rt1',
      accessToken: 'at1',
      mfaCode: 'mc1',
      codeVerifier: 'cv1',
      csrf_token: 'ct1',
      csrfToken: 'ct2',
      otpauth_uri: 'ou1',
      otpauthUri: 'ou2',
      codes: ['rc1', 'rc2'],
    };
    logger.info({ ...secrets, call: { request: { ...secrets, password: 'pw2' } }, status: 'kept' }, 'a call');
    const text = JSON.stringify(lines);
    for (const secret of ['cs1', 'rt1', 'at1', 'mc1', 'cv1', 'ct1', 'ct2', 'ou1', 'ou2', 'rc1', 'rc2', 'pw2']) {
      expect(text).not.toContain(secret);
    }
    expect(lines[0]).toMatchObject({ status: 'kept', message: 'a call' });
  });
});

describe('lineTime', () => {
  afterEach(() => jest.restoreAllMocks());

  it("writes pino's isoTime field, formatted anew as soon as the millisecond changes", () => {
    const now = jest.spyOn(Date, 'now');
    for (const at of [
      Date.UTC(2026, 10, 27, 6, 43, 9, 38),
      Date.UTC(2026, 10, 27, 6, 43, 9, 38),
      Date.UTC(2026, 10, 27, 6, 43, 9, 39),
    ]) {
      now.mockReturnValue(at);
      expect(lineTime()).toBe(pino.stdTimeFunctions.isoTime());
    }
    expect(lineTime()).toBe(',"time":"2026-11-27T06:43:09.039Z"');
  });

  it('stamps every line with the time it was written', () => {
    const { lines, logger } = capture();
    const before = Date.now();
    logger.info('one');
    const after = Date.now();
    const time = Date.parse(String(lines[0].time));
    expect(time).toBeGreaterThanOrEqual(before);
    expect(time).toBeLessThanOrEqual(after);
  });
});
