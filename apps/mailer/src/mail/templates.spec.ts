import { renderMail, wordingFor } from './templates';

describe('mail templates', () => {
  it('renders the activation mail in the user locale with the link in both parts', () => {
    const mail = renderMail('activation', 'zh-CN', '李雷', 'https://x.test/activate?token=abc');
    expect(mail.subject).toBe('激活您的账户');
    expect(mail.text).toContain('https://x.test/activate?token=abc');
    expect(mail.html).toContain('href="https://x.test/activate?token=abc"');
    expect(mail.html).toContain('lang="zh-CN"');
  });

  it('falls back to the language, then to English', () => {
    expect(wordingFor('zh-TW').locale).toBe('zh-CN');
    expect(wordingFor('fr-FR').locale).toBe('en');
    expect(renderMail('password_reset', 'de', 'Ada', 'https://x.test/a').subject).toBe('Reset your password');
  });

  it('says how long the link still works, never longer than it does: in whole hours, under an hour in minutes', () => {
    const hour = 3600 * 1000;
    const expiry = (locale: string, ms?: number) =>
      renderMail('activation', locale, 'Ada', 'https://x.test/a', ms).text.split('\n')[5];
    expect(expiry('en')).toBe('The link works once and expires in 24 hours.');
    expect(expiry('en', 4 * hour + 10 * 60_000)).toBe('The link works once and expires in 4 hours.');
    expect(expiry('en', hour)).toBe('The link works once and expires in 1 hour.');
    // Never more than the link has left: an hour and 31 minutes is not "2 hours".
    expect(expiry('en', hour + 31 * 60_000)).toBe('The link works once and expires in 1 hour.');
    expect(expiry('en', 23 * hour + 40 * 60_000)).toBe('The link works once and expires in 23 hours.');
    // A mail sent at once (a second or so after the token) still says the full day.
    expect(expiry('en', 24 * hour - 1500)).toBe('The link works once and expires in 24 hours.');
    expect(expiry('en', 59 * 60_000 + 59_000)).toBe('The link works once and expires in 59 minutes.');
    expect(expiry('en', 30_000)).toBe('The link works once and expires in 1 minute.');
    expect(expiry('zh-CN', 4 * hour)).toBe('该链接仅可使用一次，4 小时后失效。');
    expect(expiry('zh-CN', 20 * 60_000)).toBe('该链接仅可使用一次，20 分钟后失效。');
  });

  it('escapes what the user typed in the HTML part', () => {
    const mail = renderMail('activation', 'en', '<script>alert(1)</script>', 'https://x.test/a?b=1&c=2');
    expect(mail.html).not.toContain('<script>');
    expect(mail.html).toContain('&#60;script&#62;');
    expect(mail.html).toContain('b=1&#38;c=2');
  });
});
