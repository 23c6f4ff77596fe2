import { acceptRequestId, currentRequestId, runInRequestContext } from './request-context';

describe('request ids', () => {
  it('keeps a sane client id', () => {
    expect(acceptRequestId('abc-123_x.y:z')).toBe('abc-123_x.y:z');
  });

  it.each([undefined, '', 'a'.repeat(129), 'has space', '<script>', '\u00e9t\u00e9', ['a']])(
    'replaces %p with a generated uuid',
    (candidate) => {
      expect(acceptRequestId(candidate)).toMatch(/^[0-9a-f-]{36}$/);
    },
  );

  it('exposes the id of the request being served, and none outside it', async () => {
    expect(currentRequestId()).toBeUndefined();
    const seen = await runInRequestContext({ requestId: 'r1' }, async () => {
      await new Promise((resolve) => setImmediate(resolve));
      return currentRequestId();
    });
    expect(seen).toBe('r1');
  });
});
