import { redirectUriProblem, redirectUriRegistered } from './redirect-uri';

describe('redirect URIs', () => {
  describe('registration', () => {
    it.each([
      'https://app.example/callback',
      'https://app.example:8443/cb?tenant=1',
      'http://127.0.0.1/callback',
      'http://[::1]:8080/callback',
      'http://localhost:3000/',
    ])('accepts %s', (uri) => {
      expect(redirectUriProblem(uri)).toBeUndefined();
    });

    it.each([
      ['plain http on a public host', 'http://app.example/callback'],
      ['a fragment', 'https://app.example/callback#x'],
      ['userinfo', 'https://user@app.example/callback'],
      ['a relative URI', '/callback'],
      ['an upper-case host (it could never match exactly)', 'https://App.example/callback'],
      ['a custom scheme', 'javascript:alert(1)'],
      ['white space', 'https://app.example/call back'],
      ['nothing', ''],
      // Sent back in a Location header, which cannot hold it: the sign-in answered 500.
      ['a non-ASCII path (an IRI, not a URI)', 'https://app.example/回调'],
      ['a non-ASCII query', 'http://127.0.0.1/cb?next=€'],
      ['a character RFC 3986 does not allow', 'https://app.example/cb?x=<y>'],
    ])('refuses %s', (_what, uri) => {
      expect(redirectUriProblem(uri)).toEqual(expect.any(String));
    });

    it('accepts the percent-encoded spelling of what a URI cannot hold', () => {
      expect(redirectUriProblem('https://app.example/%E5%9B%9E%E8%B0%83')).toBeUndefined();
    });
  });

  describe('matching', () => {
    const registered = ['https://app.example/callback', 'http://127.0.0.1/cb', 'http://[::1]:9000/cb?x=1'];

    it('matches the same string only', () => {
      expect(redirectUriRegistered(registered, 'https://app.example/callback')).toBe(true);
      for (const lookAlike of [
        'https://app.example/callback/',
        'https://app.example/callback?',
        'https://app.example/callback#',
        'https://app.example:443/callback',
        'https://APP.EXAMPLE/callback',
        'https://app.example/Callback',
        'https://x@app.example/callback',
        'https://app.example/callback/../callback',
        'https://app.example%2F@evil.test/callback',
      ]) {
        expect(redirectUriRegistered(registered, lookAlike)).toBe(false);
      }
    });

    it('ignores the port of a loopback http URI, and nothing else (RFC 8252 §7.3)', () => {
      expect(redirectUriRegistered(registered, 'http://127.0.0.1:51234/cb')).toBe(true);
      expect(redirectUriRegistered(registered, 'http://127.0.0.1/cb')).toBe(true);
      expect(redirectUriRegistered(registered, 'http://[::1]/cb?x=1')).toBe(true);
      expect(redirectUriRegistered(registered, 'http://[::1]:1/cb?x=2')).toBe(false);
      expect(redirectUriRegistered(registered, 'http://localhost:51234/cb')).toBe(false);
      expect(redirectUriRegistered(registered, 'http://127.0.0.1:51234/cb/')).toBe(false);
      expect(redirectUriRegistered(registered, 'http://127.0.0.1:51234@evil.test/cb')).toBe(false);
      expect(redirectUriRegistered(['https://app.example/cb'], 'https://app.example:444/cb')).toBe(false);
    });

    it('matches no URI holding what a Location header cannot carry, even one registered before that was refused', () => {
      expect(redirectUriRegistered(['https://app.example/回调'], 'https://app.example/回调')).toBe(false);
      expect(redirectUriRegistered(['http://127.0.0.1/回调'], 'http://127.0.0.1:5000/回调')).toBe(false);
    });
  });
});
