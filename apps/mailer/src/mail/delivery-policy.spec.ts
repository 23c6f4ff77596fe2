import { classifyFailure, retryDelayMs, RetryPolicy, tooOldToRetry } from './delivery-policy';

const policy: RetryPolicy = { baseMs: 1000, maxMs: 60_000, maxAgeMs: 24 * 3600 * 1000 };

describe('delivery policy', () => {
  it('gives up only on a refusal of the message or its recipient', () => {
    const smtpError = (code: string, responseCode?: number, command = 'RCPT TO') =>
      Object.assign(new Error('failed'), { code, responseCode, command, response: `${responseCode} no` });
    expect(classifyFailure(smtpError('EENVELOPE', 550)).permanent).toBe(true);
    expect(classifyFailure(smtpError('EMESSAGE', 554, 'DATA')).permanent).toBe(true);
    expect(classifyFailure(smtpError('EENVELOPE', undefined, 'API')).permanent).toBe(true); // an address nodemailer refuses
    // for now, out of step, the connection or the mailer's own configuration: worth another try
    for (const transient of [
      smtpError('EENVELOPE', 450),
      smtpError('EENVELOPE', 451),
      smtpError('EMESSAGE', 452, 'DATA'),
      smtpError('EENVELOPE', 503),
      // the sender (MAIL_FROM) refused, or authentication required: the same for every mail
      smtpError('EENVELOPE', 553, 'MAIL FROM'),
      smtpError('EENVELOPE', 530, 'MAIL FROM'),
      smtpError('EENVELOPE', 530, 'RCPT TO'),
      smtpError('EAUTH', 535, 'AUTH PLAIN'),
      smtpError('EPROTOCOL', 554, 'CONN'),
      smtpError('ECONNECTION', undefined, 'CONN'),
      smtpError('ETIMEDOUT', undefined, 'CONN'),
      smtpError('ESOCKET', undefined, 'CONN'),
      new Error('object storage did not answer'),
      'not even an error',
    ])
      expect(classifyFailure(transient).permanent).toBe(false);
  });

  it('reports the reply code and error code, never more than a short detail', () => {
    const verdict = classifyFailure(
      Object.assign(new Error('x'), { code: 'EENVELOPE', responseCode: 550, response: `550 ${'y'.repeat(2000)}` }),
    );
    expect(verdict).toMatchObject({ smtpCode: 550, code: 'EENVELOPE' });
    expect(verdict.detail.length).toBeLessThanOrEqual(500);
  });

  it('backs off exponentially, each delay longer than the last until the cap, jittered into the upper half', () => {
    for (const random of [0, 0.25, 0.5, 0.999999]) {
      const delays = Array.from({ length: 12 }, (_, index) => retryDelayMs(index + 1, policy, () => random));
      for (const [index, delay] of delays.entries()) {
        const ceiling = Math.min(policy.maxMs, policy.baseMs * 2 ** index);
        expect(delay).toBeGreaterThanOrEqual(ceiling / 2);
        expect(delay).toBeLessThanOrEqual(ceiling);
      }
      const growing = delays.filter((_, index) => policy.baseMs * 2 ** (index + 1) <= policy.maxMs);
      for (let index = 1; index < growing.length; index += 1)
        expect(growing[index]).toBeGreaterThan(growing[index - 1]);
    }
    expect(retryDelayMs(1000, policy, () => 0.999999)).toBeLessThanOrEqual(policy.maxMs);
    expect(retryDelayMs(0, policy, () => 0)).toBe(500);
  });

  it('spreads mails refused together', () => {
    const delays = new Set(Array.from({ length: 50 }, () => retryDelayMs(4, policy)));
    expect(delays.size).toBeGreaterThan(10);
  });

  it('stops retrying at the maximum age of the event', () => {
    const occurredAt = '2026-11-20T10:00:00.000Z';
    const at = (offsetMs: number) => Date.parse(occurredAt) + offsetMs;
    expect(tooOldToRetry(occurredAt, at(policy.maxAgeMs - 1), policy)).toBe(false);
    expect(tooOldToRetry(occurredAt, at(policy.maxAgeMs), policy)).toBe(true);
    expect(tooOldToRetry('not a date', at(10 * policy.maxAgeMs), policy)).toBe(false);
  });
});
