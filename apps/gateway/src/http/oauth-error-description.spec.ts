import { oauthErrorDescription } from './oauth-error-description';

describe('oauthErrorDescription', () => {
  it('keeps a description RFC 6749 §5.2 allows as it is', () => {
    const allowed = "The scope users:read is not available to this grant (see #4, 100% [sure]); use 'x' or {y}.";
    expect(oauthErrorDescription(allowed)).toBe(allowed);
  });

  it('writes quotes, backslashes and non-ASCII characters a client sent so that the set holds them', () => {
    expect(oauthErrorDescription('The grant type "foo" is not supported')).toBe(
      "The grant type 'foo' is not supported",
    );
    expect(oauthErrorDescription('The scope a\\b ü… is not available.')).toBe('The scope a?b ?? is not available.');
    expect(oauthErrorDescription('tab\there')).toBe('tab?here');
  });
});
