import { PASSWORD_SET_TOKEN_LIFETIME_MS } from '@acct/events';

/** What an e-mail says, in one language. */
export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
}

export type MailKind = 'activation' | 'password_reset';

export const MAIL_KINDS: readonly MailKind[] = ['activation', 'password_reset'];

interface Wording {
  subject: Record<MailKind, string>;
  greeting: (name: string) => string;
  body: Record<MailKind, string>;
  action: Record<MailKind, string>;
  /** The link's remaining lifetime, in whole hours or (under an hour) minutes. */
  hours: (count: number) => string;
  minutes: (count: number) => string;
  expiry: (duration: string) => string;
  ignore: string;
}

const WORDING: Record<string, Wording> = {
  en: {
    subject: { activation: 'Activate your account', password_reset: 'Reset your password' },
    greeting: (name) => `Hello ${name},`,
    body: {
      activation: 'An account was created for you. Choose a password to activate it:',
      password_reset: 'A password reset was requested for your account. Choose a new password:',
    },
    action: { activation: 'Activate account', password_reset: 'Set a new password' },
    hours: (count) => (count === 1 ? '1 hour' : `${count} hours`),
    minutes: (count) => (count === 1 ? '1 minute' : `${count} minutes`),
    expiry: (duration) => `The link works once and expires in ${duration}.`,
    ignore: 'If you did not expect this e-mail, you can ignore it.',
  },
  'zh-CN': {
    subject: { activation: '激活您的账户', password_reset: '重置您的密码' },
    greeting: (name) => `${name}，您好：`,
    body: {
      activation: '我们为您创建了一个账户。请设置密码以激活账户：',
      password_reset: '有人请求重置您账户的密码。请设置新密码：',
    },
    action: { activation: '激活账户', password_reset: '设置新密码' },
    hours: (count) => `${count} 小时`,
    minutes: (count) => `${count} 分钟`,
    expiry: (duration) => `该链接仅可使用一次，${duration}后失效。`,
    ignore: '如果您没有预期收到此邮件，请忽略。',
  },
};

/** The template for a BCP 47 locale: an exact match, else its language, else English. */
export function wordingFor(locale: string): { locale: string; wording: Wording } {
  if (WORDING[locale]) return { locale, wording: WORDING[locale] };
  const language = Object.keys(WORDING).find((candidate) => candidate.split('-')[0] === locale.split('-')[0]);
  return language ? { locale: language, wording: WORDING[language] } : { locale: 'en', wording: WORDING.en };
}

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;

/**
 * How long the link still works, in words: in whole hours (rounded down, once rounded to the minute, so
 * a mail sent a second after its token still says the full day), or in minutes (rounded down) under an
 * hour. Never longer than it works: "2 hours" for an hour and a half sent the reader back to a dead link.
 */
const durationOf = (wording: Wording, ms: number) =>
  ms >= HOUR_MS
    ? wording.hours(Math.floor(Math.round(ms / MINUTE_MS) / 60))
    : wording.minutes(Math.max(1, Math.floor(ms / MINUTE_MS)));

const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);

/** Plain text and HTML versions of one e-mail with its link, which works for `linkLifetimeMs` more. */
export function renderMail(
  kind: MailKind,
  locale: string,
  displayName: string,
  link: string,
  linkLifetimeMs = PASSWORD_SET_TOKEN_LIFETIME_MS,
): RenderedMail {
  const { locale: chosen, wording } = wordingFor(locale);
  const expiry = wording.expiry(durationOf(wording, linkLifetimeMs));
  const lines = [wording.greeting(displayName), '', wording.body[kind], link, '', expiry, wording.ignore];
  const html = `<!doctype html>
<html lang="${escapeHtml(chosen)}"><head><meta charset="utf-8"><title>${escapeHtml(wording.subject[kind])}</title></head>
<body style="font-family: sans-serif; line-height: 1.5">
<p>${escapeHtml(wording.greeting(displayName))}</p>
<p>${escapeHtml(wording.body[kind])}</p>
<p><a href="${escapeHtml(link)}">${escapeHtml(wording.action[kind])}</a></p>
<p>${escapeHtml(expiry)}<br>${escapeHtml(wording.ignore)}</p>
</body></html>`;
  return { subject: wording.subject[kind], text: lines.join('\n'), html };
}
