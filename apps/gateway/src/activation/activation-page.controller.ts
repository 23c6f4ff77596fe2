import { createHash } from 'node:crypto';

import { Controller, Get, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';

import { Public } from '../auth/access.decorators';
import { RateLimited } from '../rate-limits/rate-limited.decorator';

/**
 * `GET /activate?token=…`: the page behind the e-mail link. Plain HTML and a little script, no
 * dependencies: it checks the password rules itself, sends the token as the bearer credential to
 * `POST /v2/users/me/password`, and shows the outcome. The token never leaves the page's memory.
 * Lengths are counted in code points as identity counts them; the inputs carry no `maxlength`,
 * which counts UTF-16 units and would cut a valid password of emoji short without saying so.
 * Errors go to a `role="alert"` region and mark the field `aria-invalid`; progress and success go
 * to a `role="status"` region.
 */
@Controller()
export class ActivationPageController {
  @Get('activate')
  @Public()
  @RateLimited('default')
  page(@Res() reply: FastifyReply) {
    return reply
      .header('Content-Type', 'text/html; charset=utf-8')
      .header('Cache-Control', 'no-store')
      .header('Referrer-Policy', 'no-referrer')
      .header('X-Frame-Options', 'DENY')
      .header('X-Content-Type-Options', 'nosniff')
      .header('Content-Security-Policy', CONTENT_SECURITY_POLICY)
      .send(ACTIVATION_PAGE);
  }
}

export const ACTIVATION_SCRIPT = `
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
function fail(text, input) {
  clear(); error.textContent = text;
  if (input) { input.setAttribute('aria-invalid', 'true'); input.setAttribute('aria-describedby', input.id + '-hint error'); input.focus(); }
}
function inform(text) { clear(); status.textContent = text; }
if (!token) { fail('This link has no token. Open the link from your e-mail again.'); form.hidden = true; }
form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const length = [...password.value].length;
  if (length < 8 || length > 128) { fail('Your password must be 8 to 128 characters long.', password); return; }
  if (password.value !== confirmation.value) { fail('The two passwords do not match.', confirmation); return; }
  button.disabled = true;
  inform('Saving…');
  try {
    const response = await fetch('/v2/users/me/password', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer ' + token },
      body: JSON.stringify({ password: password.value }),
    });
    if (response.ok) {
      form.hidden = true;
      inform('Your password is set and your account is active. You can now sign in.');
      return;
    }
    const problem = await response.json().catch(() => ({}));
    const field = (problem.errors || [])[0];
    if (response.status === 401) fail('This link is invalid, expired or already used. Ask for a new one.');
    else if (field) fail('Your password ' + field.message + '.', password);
    else fail(problem.detail || 'Something went wrong. Try again.');
  } catch {
    fail('The service cannot be reached. Try again in a moment.');
  }
  button.disabled = false;
});
`;

const ACTIVATION_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Set your password</title>
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
<h1>Set your password</h1>
<p id="error" class="error" role="alert"></p>
<p id="status" role="status"></p>
<form id="form" novalidate>
<label for="password">New password</label>
<input id="password" name="password" type="password" autocomplete="new-password" required aria-describedby="password-hint">
<p id="password-hint" class="hint">8 to 128 characters.</p>
<label for="confirmation">Repeat the password</label>
<input id="confirmation" name="confirmation" type="password" autocomplete="new-password" required aria-describedby="confirmation-hint">
<p id="confirmation-hint" class="hint">Type the same password again.</p>
<button type="submit">Set password</button>
</form>
</main>
<script>${ACTIVATION_SCRIPT}</script>
</body>
</html>`;

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
