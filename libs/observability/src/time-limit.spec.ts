import { valueWithin, withTimeout } from './time-limit';

const never = new Promise<string>(() => undefined);

describe('withTimeout', () => {
  it('passes on what the work settles with in time', async () => {
    await expect(withTimeout(Promise.resolve('done'), 1000, 'late')).resolves.toBe('done');
    await expect(withTimeout(Promise.reject(new Error('broken')), 1000, 'late')).rejects.toThrow('broken');
  });

  it('rejects with the message when the work does not settle in time', async () => {
    await expect(withTimeout(never, 10, 'no answer within 10 ms')).rejects.toThrow('no answer within 10 ms');
  });
});

describe('valueWithin', () => {
  it('gives the work’s value in time, the fallback otherwise', async () => {
    await expect(valueWithin(Promise.resolve('fresh'), 1000, 'stale')).resolves.toBe('fresh');
    await expect(valueWithin(never, 10, 'stale')).resolves.toBe('stale');
  });
});
