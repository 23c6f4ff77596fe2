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

  it('escapes what the user typed in the HTML part', () => {
    const mail = renderMail('activation', 'en', '<script>alert(1)</script>', 'https://x.test/a?b=1&c=2');
    expect(mail.html).not.toContain('<script>');
    expect(mail.html).toContain('&#60;script&#62;');
    expect(mail.html).toContain('b=1&#38;c=2');
  });
});
