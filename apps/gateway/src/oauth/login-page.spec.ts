import { contentSecurityPolicy, errorPage, languageOf, loginPage, mfaPage } from './login-page';

describe('the login page', () => {
  it.each([
    [undefined, 'zh-CN'],
    ['', 'zh-CN'],
    ['fr-FR,de;q=0.8', 'zh-CN'],
    ['en-US,en;q=0.9', 'en'],
    ['de-DE,en;q=0.5', 'en'],
    ['zh-CN,en;q=0.9', 'zh-CN'],
    ['en;q=0.4,zh-TW;q=0.8', 'zh-CN'],
    ['en;q=0', 'zh-CN'],
  ])('speaks the language Accept-Language %p prefers of zh and en: %s', (header, language) => {
    expect(languageOf(header)).toBe(language);
  });

  it('escapes everything it shows or carries, so a client name or a parameter cannot inject markup', () => {
    const hostile = '"><script>alert(1)</script>';
    const html = loginPage({
      language: 'en',
      clientName: hostile,
      action: '/v2/auth/authorize',
      fields: { state: hostile, csrf_token: 't' },
      email: hostile,
      error: hostile,
    });
    expect(html).not.toContain('<script>');
    expect(html).toContain('&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(mfaPage({ language: 'en', clientName: hostile, action: '/x', fields: {} })).not.toContain('<script>');
    expect(errorPage('zh-CN', hostile)).not.toContain('<script>');
  });

  it('carries the hidden fields that have a value and never the password', () => {
    const html = loginPage({
      language: 'zh-CN',
      clientName: 'App',
      action: '/v2/auth/authorize',
      fields: { client_id: 'c', state: '', csrf_token: 'token' },
    });
    expect(html).toContain('<input type="hidden" name="client_id" value="c">');
    expect(html).toContain('<input type="hidden" name="csrf_token" value="token">');
    expect(html).not.toContain('name="state"');
    expect(html).toContain('<html lang="zh-CN">');
    expect(html).toContain('type="password"');
    expect(mfaPage({ language: 'en', clientName: 'App', action: '/x', fields: { mfa_ticket: 'm' } })).not.toContain(
      'type="password"',
    );
  });

  it('allows no script, its own style by hash, and form posts to itself and the redirect origin only', () => {
    const policy = contentSecurityPolicy('https://app.example/callback?x=1');
    expect(policy).toContain("default-src 'none'");
    expect(policy).toMatch(/style-src 'sha256-[A-Za-z0-9+/=]+'/);
    expect(policy).toContain("form-action 'self' https://app.example");
    expect(policy).not.toContain('script-src');
    expect(contentSecurityPolicy()).toContain("form-action 'self';");
    expect(contentSecurityPolicy('http://127.0.0.1:5000/cb')).toContain("form-action 'self' http://127.0.0.1:5000;");
  });

  // CSP's host-source cannot name an IP literal: Chromium ignored `http://[::1]:5000` as an invalid
  // source and blocked the sign-in's 303 to a native app's IPv6 loopback redirect URI.
  it('admits an IPv6 loopback redirect URI by its scheme, the one source a browser accepts for it', () => {
    expect(contentSecurityPolicy('http://[::1]:5000/callback')).toContain("form-action 'self' http:;");
    expect(contentSecurityPolicy('http://[::1]:5000/callback')).not.toContain('[::1]');
  });
});
