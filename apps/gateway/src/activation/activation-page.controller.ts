import { createHash } from 'node:crypto';

import { DomainError } from '@acct/problem';
import { Controller, Get, Headers, HttpCode, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';

import { Public } from '../auth/access.decorators';
import { oneTimeBearerToken } from '../auth/one-time-token';
import { IdentityBackend } from '../backends/backends.module';
import { RateLimited } from '../rate-limits/rate-limited.decorator';

/** The languages the page speaks, as the mails do (apps/mailer/src/mail/templates.ts). */
const PAGE_TEXT = {
  en: {
    title: 'Set your password',
    password: 'New password',
    passwordHint: '8 to 128 characters.',
    confirmation: 'Repeat the password',
    confirmationHint: 'Type the same password again.',
    submit: 'Set password',
    messages: {
      noToken: 'This link has no token. Open the link from your e-mail again.',
      length: 'Your password must be 8 to 128 characters long.',
      mismatch: 'The two passwords do not match.',
      saving: 'Saving…',
      done: 'Your password is set and your account is active. You can now sign in.',
      doneDisabled: 'Your password is set, but your account is disabled: ask an administrator to enable it.',
      deadLink: 'This link is invalid, expired or already used. Ask for a new one.',
      field: 'Your password ',
      failed: 'Something went wrong. Try again.',
      unreachable: 'The service cannot be reached. Try again in a moment.',
    },
  },
  'zh-CN': {
    title: '设置密码',
    password: '新密码',
    passwordHint: '8 到 128 个字符。',
    confirmation: '再次输入密码',
    confirmationHint: '请再输入一次相同的密码。',
    submit: '设置密码',
    messages: {
      noToken: '此链接缺少令牌。请从邮件中重新打开链接。',
      length: '密码长度必须为 8 到 128 个字符。',
      mismatch: '两次输入的密码不一致。',
      saving: '正在保存…',
      done: '密码已设置，账户已激活。现在可以登录了。',
      doneDisabled: '密码已设置，但您的账户已被停用：请联系管理员启用。',
      deadLink: '此链接无效、已过期或已被使用。请申请新的链接。',
      field: '密码不符合要求：',
      failed: '出现问题，请重试。',
      unreachable: '暂时无法连接服务，请稍后重试。',
    },
  },
} as const;

type PageLanguage = keyof typeof PAGE_TEXT;
const LANGUAGES = Object.keys(PAGE_TEXT) as PageLanguage[];

/**
 * The page's language: the link's `lang` (the mailer puts the mail's language there), else the
 * first language of `Accept-Language` the page speaks (matched by its primary tag: `zh-TW` → `zh-CN`),
 * else English.
 */
export function pageLanguage(lang: unknown, acceptLanguage: string | undefined): PageLanguage {
  const speak = (tag: string) => {
    const wanted = tag.trim().toLowerCase();
    return (
      LANGUAGES.find((language) => language.toLowerCase() === wanted) ??
      LANGUAGES.find((language) => language.split('-')[0].toLowerCase() === wanted.split('-')[0])
    );
  };
  if (typeof lang === 'string' && lang) {
    const fromLink = speak(lang);
    if (fromLink) return fromLink;
  }
  const ranked = (acceptLanguage ?? '')
    .split(',')
    .map((entry, index) => {
      const [tag = '', ...parameters] = entry.split(';');
      const q = Number(/^\s*q=([\d.]+)/.exec(parameters.join(';'))?.[1] ?? 1);
      return { tag: tag.trim(), q: Number.isFinite(q) ? q : 0, index };
    })
    .filter((entry) => entry.tag && entry.tag !== '*' && entry.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index);
  for (const entry of ranked) {
    const language = speak(entry.tag);
    if (language) return language;
  }
  return 'en';
}

/**
 * `GET /activate?token=…[&lang=…]`: the page behind the e-mail link, in the mail's language. Plain
 * HTML and a little script, no dependencies. On load it asks `GET /activate/check` whether the link
 * still works, so a dead link is said at once, before anyone types a password; then it checks the
 * password rules itself, sends the token as the bearer credential to `POST /v2/users/me/password`,
 * and shows the outcome. The token never leaves the page's memory (it travels in the Authorization
 * header, never in a URL the gateway logs). Both are called by relative URLs, so behind a proxy's
 * prefix (the mailer's PUBLIC_URL `https://example.com/accounts`) they go under it as the page did.
 * Lengths are counted in code points as identity counts them; the inputs carry no `maxlength`,
 * which counts UTF-16 units and would cut a valid password of emoji short without saying so.
 * Errors go to a `role="alert"` region and mark the field `aria-invalid`; progress and success go
 * to a `role="status"` region.
 */
@Controller('activate')
export class ActivationPageController {
  constructor(private readonly identity: IdentityBackend) {}

  @Get()
  @Public()
  @RateLimited('default')
  page(
    @Query('lang') lang: unknown,
    @Headers('accept-language') acceptLanguage: string | undefined,
    @Res() reply: FastifyReply,
  ) {
    return reply
      .header('Content-Type', 'text/html; charset=utf-8')
      .header('Content-Language', pageLanguage(lang, acceptLanguage))
      .header('Vary', 'Accept-Language')
      .header('Cache-Control', 'no-store')
      .header('Referrer-Policy', 'no-referrer')
      .header('X-Frame-Options', 'DENY')
      .header('X-Content-Type-Options', 'nosniff')
      .header('Content-Security-Policy', CONTENT_SECURITY_POLICY)
      .send(PAGES[pageLanguage(lang, acceptLanguage)]);
  }

  /**
   * `GET /activate/check` with the link's token as `Authorization: Bearer …`: 204 while the link can
   * be used, 401 problem+json when it is unknown, expired or used. Consumes nothing and answers
   * nothing about the user: it tells only what the token's holder could learn by submitting it.
   */
  @Get('check')
  @Public()
  @RateLimited('users.write')
  @HttpCode(204)
  async check(@Req() request: FastifyRequest): Promise<void> {
    // What the page sends as the bearer credential: the opaque one-time token of the link.
    const token = oneTimeBearerToken(request);
    if (!token) throw deadLink();
    await this.identity.call('checkPasswordSetToken', { token });
  }
}

const deadLink = () =>
  new DomainError('unauthenticated', 'The link is invalid, expired or already used.', {
    headers: { 'WWW-Authenticate': 'Bearer realm="account-platform", error="invalid_token"' },
  });

export const ACTIVATION_SCRIPT = `
const text = JSON.parse(document.getElementById('messages').textContent);
const form = document.getElementById('form');
const password = document.getElementById('password');
const confirmation = document.getElementById('confirmation');
const button = form.querySelector('button');
const error = document.getElementById('error');
const status = document.getElementById('status');
const token = new URLSearchParams(location.search).get('token');
function clear() {
  error.textContent = ''; status.textContent = '';
  for (const input of [password, confirmation]) { input.removeAttribute('aria-invalid'); input.setAttribute('aria-describedby', input.id + '-hint'); }
}
function fail(message, input) {
  clear(); error.textContent = message;
  if (input) { input.setAttribute('aria-invalid', 'true'); input.setAttribute('aria-describedby', input.id + '-hint error'); input.focus(); }
}
function inform(message) { clear(); status.textContent = message; }
form.hidden = true;
if (!token) fail(text.noToken);
else {
  fetch('activate/check', { headers: { authorization: 'Bearer ' + token } })
    .then((response) => { if (response.status === 401) fail(text.deadLink); else form.hidden = false; })
    .catch(() => { form.hidden = false; });
}
form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const length = [...password.value].length;
  if (length < 8 || length > 128) { fail(text.length, password); return; }
  if (password.value !== confirmation.value) { fail(text.mismatch, confirmation); return; }
  button.disabled = true;
  inform(text.saving);
  try {
    const response = await fetch('v2/users/me/password', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer ' + token },
      body: JSON.stringify({ password: password.value }),
    });
    if (response.ok) {
      // A disabled user's link still sets its password, and the account stays disabled.
      const user = await response.json().catch(() => ({}));
      form.hidden = true;
      inform(user.status === 'disabled' ? text.doneDisabled : text.done);
      return;
    }
    const problem = await response.json().catch(() => ({}));
    const field = (problem.errors || [])[0];
    if (response.status === 401) fail(text.deadLink);
    else if (field) fail(text.field + field.message + '.', password);
    else fail(problem.detail || text.failed);
  } catch {
    fail(text.unreachable);
  }
  button.disabled = false;
});
`;

const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);

function activationPage(language: PageLanguage): string {
  const t = PAGE_TEXT[language];
  // The messages ride in a JSON data block (not run, so the script's CSP hash is one for every language).
  const messages = JSON.stringify(t.messages).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="${language}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(t.title)}</title>
<style>
body { font-family: system-ui, sans-serif; max-width: 28rem; margin: 3rem auto; padding: 0 1rem; line-height: 1.5; }
label { display: block; margin-top: 1rem; font-weight: 600; }
input { width: 100%; padding: .5rem; font-size: 1rem; box-sizing: border-box; }
button { margin-top: 1.5rem; padding: .6rem 1.2rem; font-size: 1rem; }
.hint { margin: .25rem 0 0; color: #555; font-size: .9rem; }
.error { color: #a40000; } #status { color: #0a6b1f; }
[aria-invalid="true"] { border-color: #a40000; }
</style>
</head>
<body>
<main>
<h1>${escapeHtml(t.title)}</h1>
<p id="error" class="error" role="alert"></p>
<p id="status" role="status"></p>
<form id="form" novalidate hidden>
<label for="password">${escapeHtml(t.password)}</label>
<input id="password" name="password" type="password" autocomplete="new-password" required aria-describedby="password-hint">
<p id="password-hint" class="hint">${escapeHtml(t.passwordHint)}</p>
<label for="confirmation">${escapeHtml(t.confirmation)}</label>
<input id="confirmation" name="confirmation" type="password" autocomplete="new-password" required aria-describedby="confirmation-hint">
<p id="confirmation-hint" class="hint">${escapeHtml(t.confirmationHint)}</p>
<button type="submit">${escapeHtml(t.submit)}</button>
</form>
</main>
<script type="application/json" id="messages">${messages}</script>
<script>${ACTIVATION_SCRIPT}</script>
</body>
</html>`;
}

const PAGES = Object.fromEntries(LANGUAGES.map((language) => [language, activationPage(language)])) as Record<
  PageLanguage,
  string
>;

/** Only this page's own script may run (by hash), and it may talk only to this origin. */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  `script-src 'sha256-${createHash('sha256').update(ACTIVATION_SCRIPT).digest('base64')}'`,
  "style-src 'unsafe-inline'",
  "connect-src 'self'",
  "form-action 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');
