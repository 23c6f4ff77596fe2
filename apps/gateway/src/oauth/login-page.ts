import { createHash } from 'node:crypto';

/** The languages of the login page: Simplified Chinese unless the browser prefers English. */
export type Language = 'zh-CN' | 'en';

/**
 * The page's language from `Accept-Language` (RFC 9110 §12.5.4): the first of `zh*` and `en*` by
 * preference (q), zh-CN when neither is named.
 */
export function languageOf(acceptLanguage: string | undefined): Language {
  const ranges = (acceptLanguage ?? '')
    .split(',')
    .map((part, index) => {
      const [tag = '', ...params] = part.trim().toLowerCase().split(';');
      const q = params.map((param) => /^\s*q=([0-9.]+)\s*$/.exec(param)?.[1]).find(Boolean);
      return { tag: tag.trim(), q: q === undefined ? 1 : Number(q), index };
    })
    .filter((range) => range.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index);
  for (const { tag } of ranges) {
    if (tag === 'en' || tag.startsWith('en-')) return 'en';
    if (tag === 'zh' || tag.startsWith('zh-')) return 'zh-CN';
  }
  return 'zh-CN';
}

const TEXT = {
  'zh-CN': {
    title: '登录',
    continueTo: (client: string) => `登录以继续使用 ${client}`,
    email: '电子邮件或手机号',
    password: '密码',
    signIn: '登录',
    mfaTitle: '两步验证',
    mfaCode: '验证码',
    mfaHint: '输入身份验证器应用显示的 6 位数字，或一个未用过的恢复码。',
    verify: '验证',
    errorTitle: '无法完成登录请求',
    errorHint: '请返回应用重新开始。如果问题仍然存在，请联系应用的开发者。',
    invalidCredentials: '账号或密码不正确。',
    invalidCode: '验证码不正确或已被使用。',
    locked: (seconds: number) => `尝试次数过多，请在 ${seconds} 秒后重试。`,
    throttled: (seconds: number) => `来自您所在网络的请求过多，请在 ${seconds} 秒后重试。`,
    notActive: '此账户尚未激活，请先通过激活邮件设置密码。',
    refused: '无法登录此账户。',
    expired: '此登录表单已失效，请返回应用重新开始。',
    missing: '请输入账号和密码。',
    controlCharacters: '账号、密码或验证码中含有不可见的控制字符，请重新输入。',
    unavailable: '服务暂时不可用，请稍后重试。',
  },
  en: {
    title: 'Sign in',
    continueTo: (client: string) => `Sign in to continue to ${client}`,
    email: 'E-mail or phone',
    password: 'Password',
    signIn: 'Sign in',
    mfaTitle: 'Two-step verification',
    mfaCode: 'Verification code',
    mfaHint: 'Enter the 6-digit code your authenticator app shows, or one of your unused recovery codes.',
    verify: 'Verify',
    errorTitle: 'This sign-in request cannot be completed',
    errorHint: 'Go back to the app and start again. If this keeps happening, tell the app’s developer.',
    invalidCredentials: 'The account or password is incorrect.',
    invalidCode: 'The code is incorrect or has already been used.',
    locked: (seconds: number) => `Too many attempts. Try again in ${seconds} seconds.`,
    throttled: (seconds: number) => `Too many requests from your network. Try again in ${seconds} seconds.`,
    notActive: 'This account is not active yet: set its password from the activation e-mail first.',
    refused: 'This account cannot sign in.',
    expired: 'This sign-in form is no longer valid. Go back to the app and start again.',
    missing: 'Enter your e-mail (or phone) and password.',
    controlCharacters:
      'The account, password or code contains an invisible control character (such as a tab or line break). Type it again.',
    unavailable: 'The service is unavailable. Try again in a moment.',
  },
} as const;

export type Message = {
  [K in keyof (typeof TEXT)['en']]: (typeof TEXT)['en'][K] extends string ? K : never;
}[keyof (typeof TEXT)['en']];

const escape = (value: string) =>
  value.replace(
    /[&<>"']/g,
    (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char] ?? char,
  );

const STYLE = `
body { font-family: system-ui, sans-serif; max-width: 26rem; margin: 3rem auto; padding: 0 1rem; line-height: 1.5; }
label { display: block; margin-top: 1rem; font-weight: 600; }
input { width: 100%; padding: .5rem; font-size: 1rem; box-sizing: border-box; }
button { margin-top: 1.5rem; padding: .6rem 1.2rem; font-size: 1rem; }
.hint { margin: .25rem 0 0; color: #555; font-size: .9rem; }
.error { color: #a40000; }
code { word-break: break-all; }
`;

/**
 * The CSP source that admits the redirect URI: its origin, or only its scheme when its host is an IP
 * literal (`http://[::1]:port`, RFC 8252 §7.3): CSP's host-source has no form for one, and a browser
 * drops such a source as invalid ("It will be ignored"), which blocked the 303 back to the app. The
 * page has no script and one form, posting to itself, so the scheme alone lets nothing else through.
 * Undefined for a URI that does not parse or has no origin.
 */
export function formActionSource(redirectUri: string): string | undefined {
  let url: URL;
  try {
    url = new URL(redirectUri);
  } catch {
    return undefined;
  }
  if (url.origin === 'null') return undefined;
  return url.hostname.startsWith('[') ? url.protocol : url.origin;
}

/**
 * No script at all, and styles only by hash. Forms may post only to this origin and (for the 303
 * that follows a sign-in, which browsers check against form-action too) to the client's redirect URI.
 */
export function contentSecurityPolicy(redirectUri?: string): string {
  const redirectSource = redirectUri ? formActionSource(redirectUri) : undefined;
  return [
    "default-src 'none'",
    `style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`,
    `form-action 'self'${redirectSource ? ` ${redirectSource}` : ''}`,
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function document(language: Language, title: string, body: string): string {
  return `<!doctype html>
<html lang="${language}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escape(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>`;
}

/** The authorization request's parameters and the CSRF token, carried from step to step as hidden fields. */
export type HiddenFields = Record<string, string>;

const hidden = (fields: HiddenFields) =>
  Object.entries(fields)
    .filter(([, value]) => value !== '')
    .map(([name, value]) => `<input type="hidden" name="${escape(name)}" value="${escape(value)}">`)
    .join('\n');

const errorLine = (text: string | undefined) =>
  `<p id="error" class="error" role="alert">${text ? escape(text) : ''}</p>`;

export interface LoginPageOptions {
  language: Language;
  clientName: string;
  action: string;
  fields: HiddenFields;
  email?: string;
  error?: string;
}

/** Step 1: e-mail (or phone: identity tells them apart) and password. */
export function loginPage(options: LoginPageOptions): string {
  const text = TEXT[options.language];
  return document(
    options.language,
    text.title,
    `<h1>${escape(text.title)}</h1>
<p>${escape(text.continueTo(options.clientName))}</p>
${errorLine(options.error)}
<form method="post" action="${escape(options.action)}">
${hidden(options.fields)}
<label for="username">${escape(text.email)}</label>
<input id="username" name="username" type="text" autocomplete="username" required value="${escape(options.email ?? '')}"${options.error ? ' aria-describedby="error"' : ''}>
<label for="password">${escape(text.password)}</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">${escape(text.signIn)}</button>
</form>`,
  );
}

/** Step 2, for an account with MFA: the TOTP code or a recovery code (the ticket of step 1 rides along hidden). */
export function mfaPage(options: Omit<LoginPageOptions, 'email'>): string {
  const text = TEXT[options.language];
  return document(
    options.language,
    text.mfaTitle,
    `<h1>${escape(text.mfaTitle)}</h1>
<p>${escape(text.continueTo(options.clientName))}</p>
${errorLine(options.error)}
<form method="post" action="${escape(options.action)}">
${hidden(options.fields)}
<label for="mfa_code">${escape(text.mfaCode)}</label>
<input id="mfa_code" name="mfa_code" type="text" autocomplete="one-time-code" maxlength="32" required aria-describedby="mfa_code-hint">
<p id="mfa_code-hint" class="hint">${escape(text.mfaHint)}</p>
<button type="submit">${escape(text.verify)}</button>
</form>`,
  );
}

/** An authorization request that cannot go back to the client (unknown client or redirect URI, RFC 6749 §4.1.2.1). */
export function errorPage(language: Language, description: string): string {
  const text = TEXT[language];
  return document(
    language,
    text.errorTitle,
    `<h1>${escape(text.errorTitle)}</h1>
<p class="error" role="alert"><code>${escape(description)}</code></p>
<p>${escape(text.errorHint)}</p>`,
  );
}

/**
 * The login page that cannot be served now, saying why (too many requests from this address, auth
 * unavailable) and so how long to wait. No form: serving one takes auth's CSRF token.
 */
export function noticePage(language: Language, notice: string): string {
  const text = TEXT[language];
  return document(
    language,
    text.title,
    `<h1>${escape(text.title)}</h1>
<p class="error" role="alert">${escape(notice)}</p>`,
  );
}

export function message(language: Language, key: Message): string {
  return TEXT[language][key];
}

export function lockedMessage(language: Language, seconds: number): string {
  return TEXT[language].locked(seconds);
}

/**
 * The per-IP limit (the `auth` group): every request from the address counts, not only this person's
 * attempts (an office behind one address shares it), so it says so rather than "too many attempts".
 */
export function throttledMessage(language: Language, seconds: number): string {
  return TEXT[language].throttled(seconds);
}
