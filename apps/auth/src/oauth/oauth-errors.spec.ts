import { OAuthErrors } from './oauth-errors';

describe('OAuthErrors.unsupportedGrantType', () => {
  it('names a short grant type as it was sent', () => {
    expect(OAuthErrors.unsupportedGrantType('implicit').detail).toContain('"implicit"');
  });

  it('echoes at most 64 characters of a huge one, so the error still fits in gRPC metadata', () => {
    const error = OAuthErrors.unsupportedGrantType('x'.repeat(60_000));
    expect(error.detail).toContain(`"${'x'.repeat(64)}…"`);
    expect(error.detail.length).toBeLessThan(200);
  });
});
