import { createHash } from 'node:crypto';

import { Controller, Get, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';

import { Public } from '../auth/access.decorators';

/**
 * `GET /activate?token=…`: the page behind the e-mail link. Plain HTML and a little script, no
 * dependencies: it checks the password rules itself, sends the token as the bearer credential to
 * `POST /v2/users/me/password`, and shows the outcome. The token never leaves the page's memory.
 */
@Controller()
export class ActivationPageController {
  @Get('activate')
  @Public()
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
const message = document.getElementById('message');
const token = new URLSearchParams(location.search).get('token');
function show(text, kind) { message.textContent = text; message.className = kind; }
if (!token) { show('This link has no token. Open the link from your e-mail again.', 'error'); form.hidden = true; }
form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const length = [...password.value].length;
  if (length < 8 || length > 128) { show('Your password must be 8 to 128 characters long.', 'error'); password.focus(); return; }
  if (password.value !== confirmation.value) { show('The two passwords do not match.', 'error'); confirmation.focus(); return; }
  form.querySelector('button').disabled = true;
  show('Saving…', 'info');
  try {
    const response = await fetch('/v2/users/me/password', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer ' + token },
      body: JSON.stringify({ password: password.value }),
    });
    if (response.ok) {
      form.hidden = true;
      show('Your password is set and your account is active. You can now sign in.', 'success');
      return;
    }
    const problem = await response.json().catch(() => ({}));
    const field = (problem.errors || [])[0];
    show(response.status === 401 ? 'This link is invalid, expired or already used. Ask for a new one.'
      : field ? 'Password ' + field.message + '.' : (problem.detail || 'Something went wrong. Try again.'), 'error');
  } catch {
    show('The service cannot be reached. Try again in a moment.', 'error');
  }
  form.querySelector('button').disabled = false;
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
.error { color: #a40000; } .success { color: #0a6b1f; } .info { color: #333; }
</style>
</head>
<body>
<main>
<h1>Set your password</h1>
<p id="message" role="status" aria-live="polite"></p>
<form id="form" novalidate>
<label for="password">New password (8–128 characters)</label>
<input id="password" name="password" type="password" autocomplete="new-password" required minlength="8" maxlength="128">
<label for="confirmation">Repeat the password</label>
<input id="confirmation" name="confirmation" type="password" autocomplete="new-password" required>
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
