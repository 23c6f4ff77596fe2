import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { LocalObjectStorage, request, SmtpCatcher, TestStack, waitFor } from '@acct/testing';
import { Browser, BrowserContext, chromium, Locator, Page } from 'playwright-core';

/** Debian's `chromium` package; `npm test` installs it when missing (tools/browser.mjs). */
const CHROMIUM = '/usr/bin/chromium';

interface Bootstrap {
  org_id: string;
  client_id: string;
  client_secret: string;
}

/**
 * Issue 5: the activation page behind the e-mail link, in a real headless Chromium: the page's own
 * password checks, success, a used link, and what it tells assistive technology. Issue 13 item 10: the
 * page speaks the mail's language (the link's `lang`, else Accept-Language) and says at once that a
 * dead link is dead.
 */
describe('activation page in Chromium', () => {
  let stack: TestStack;
  let storage: LocalObjectStorage;
  let smtp: SmtpCatcher;
  let browser: Browser;
  let context: BrowserContext;
  let token: string;
  let sequence = 0;
  let ip = 0;
  /** Script errors and CSP violations the page reports (a blocked script would leave a dead form). */
  let pageErrors: string[] = [];

  const email = (label: string) => `${label}-${Date.now()}-${(sequence += 1)}@page.test`;
  const userStatus = async (id: string) =>
    (await request<{ status: string }>(stack.url(`/v2/users/${id}`), { token })).body.status;
  const login = (username: string, password: string) =>
    request<{ access_token?: string; code?: string }>(stack.url('/v2/auth/token'), {
      body: { grant_type: 'password', username, password },
      headers: { 'x-forwarded-for': `192.0.2.${(ip += 1)}` },
    });

  /** A new user through the API; answers its id and the link from its real activation e-mail. */
  async function userWithLink(label: string, locale = 'en-GB'): Promise<{ id: string; address: string; link: string }> {
    const address = email(label);
    const created = await request<{ id: string }>(stack.url('/v2/users'), {
      token,
      body: { email: address, display_name: label, profile: { locale } },
    });
    expect(created.status).toBe(201);
    const [mail] = await waitFor('the activation e-mail', () =>
      smtp.to(address).length > 0 ? smtp.to(address) : undefined,
    );
    const link = /(http:\/\/\S+\/activate\?token=\S+)/.exec(mail.text)![1];
    return { id: created.body.id, address, link };
  }

  async function open(link: string): Promise<Page> {
    const page = await context.newPage();
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('console', (message) => {
      // A refused request (the used link's 401) is logged too; the page answers it, so it is no fault.
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) {
        pageErrors.push(message.text());
      }
    });
    expect((await page.goto(link))?.status()).toBe(200);
    return page;
  }

  const ENGLISH = { password: 'New password', confirmation: 'Repeat the password', submit: 'Set password' };
  const CHINESE = { password: '新密码', confirmation: '再次输入密码', submit: '设置密码' };

  async function submit(page: Page, password: string, confirmation = password, words = ENGLISH): Promise<void> {
    await page.getByLabel(words.password).fill(password);
    await page.getByLabel(words.confirmation).fill(confirmation);
    await page.getByRole('button', { name: words.submit }).click();
  }

  /** Waits for the region to show `text` (the answer may need a round trip), then asserts it. */
  async function expectText(region: Locator, text: string): Promise<void> {
    await waitFor(`"${text}"`, async () => ((await region.textContent()) === text ? true : undefined)).catch(
      () => undefined,
    );
    expect(await region.textContent()).toBe(text);
  }

  const attribute = (page: Page, selector: string, name: string) => page.locator(selector).getAttribute(name);

  beforeAll(async () => {
    if (!fs.existsSync(CHROMIUM)) {
      throw new Error(
        `${CHROMIUM} is missing: the browser tests need Debian's chromium package ` +
          '(`npm test` installs it; or run `node tools/browser.mjs` as root).',
      );
    }
    [storage, smtp] = await Promise.all([LocalObjectStorage.start(), SmtpCatcher.start()]);
    stack = await TestStack.start({
      s3Endpoint: storage.endpoint,
      env: { SMTP_URL: smtp.url, TRUSTED_PROXIES: '127.0.0.1' },
    });
    const org = stack.cli<Bootstrap>(
      'bootstrap',
      '--org',
      'pages',
      '--email',
      'admin@page.test',
      '--password',
      'admin-pass-1',
    );
    token = (
      await request<{ access_token: string }>(stack.url('/v2/auth/token'), {
        body: { grant_type: 'client_credentials', client_id: org.client_id, client_secret: org.client_secret },
      })
    ).body.access_token;
    // playwright-core gives each launch a fresh temporary profile and removes it on close.
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      timeout: 60_000,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
    await Promise.all([storage?.dispose(), smtp?.close()]);
  });

  beforeEach(async () => {
    pageErrors = [];
    context = await browser.newContext();
  });

  afterEach(async () => {
    await context?.close();
    expect(pageErrors).toEqual([]);
  });

  it('ties every input to its label and has an alert region for errors and a status region for progress', async () => {
    const { link } = await userWithLink('labels');
    const page = await open(link);
    await page.locator('#form').waitFor({ state: 'visible' });
    // Each input's accessible name comes from its <label for>, its description from its hint.
    expect(await page.locator('input').count()).toBe(2);
    for (const [label, id] of [
      ['New password', 'password'],
      ['Repeat the password', 'confirmation'],
    ]) {
      expect(await page.getByLabel(label, { exact: true }).getAttribute('id')).toBe(id);
      expect(await page.locator(`label[for="${id}"]`).textContent()).toBe(label);
      expect(await attribute(page, `#${id}`, 'aria-describedby')).toBe(`${id}-hint`);
    }
    expect(await page.locator('#password-hint').textContent()).toBe('8 to 128 characters.');
    expect(await page.getByRole('alert').count()).toBe(1);
    expect(await page.getByRole('status').count()).toBe(1);
    expect(await page.getByRole('alert').textContent()).toBe('');
    expect(await attribute(page, 'html', 'lang')).toBe('en');
    expect(await page.title()).toBe('Set your password');
  });

  it('refuses a password that breaks the policy and a mismatched confirmation, then activates with a valid one', async () => {
    const { id, address, link } = await userWithLink('ada');
    const page = await open(link);
    const alert = page.getByRole('alert');

    // The policy counts characters (code points), as identity does: seven emoji are 14 UTF-16 units.
    for (const tooShort of ['short-1', '🔑'.repeat(7), 'x'.repeat(129)]) {
      await submit(page, tooShort);
      await expectText(alert, 'Your password must be 8 to 128 characters long.');
      expect(await attribute(page, '#password', 'aria-invalid')).toBe('true');
      expect(await attribute(page, '#password', 'aria-describedby')).toBe('password-hint error');
      expect(await attribute(page, ':focus', 'id')).toBe('password');
    }
    expect(await userStatus(id)).toBe('pending');

    await submit(page, 'activated-pass-1', 'activated-pass-2');
    await expectText(alert, 'The two passwords do not match.');
    expect(await attribute(page, '#confirmation', 'aria-invalid')).toBe('true');
    expect(await attribute(page, '#confirmation', 'aria-describedby')).toBe('confirmation-hint error');
    expect(await attribute(page, '#password', 'aria-invalid')).toBeNull();
    expect(await userStatus(id)).toBe('pending');
    expect((await login(address, 'activated-pass-1')).body.code).toBe('invalid_grant');

    // 74 characters but 144 UTF-16 units: the field must take it whole (no maxlength cutting it short).
    const password = `clé-${'🔑'.repeat(70)}`;
    await submit(page, password);
    expect(await page.getByLabel('New password').inputValue()).toBe(password);
    await expectText(page.getByRole('status'), 'Your password is set and your account is active. You can now sign in.');
    expect(await alert.textContent()).toBe('');
    expect(await page.locator('#form').isHidden()).toBe(true);
    expect(await userStatus(id)).toBe('active');
    expect((await login(address, password)).body.access_token).toEqual(expect.any(String));
  });

  it("sets a disabled user's password without saying its account is active", async () => {
    const { id, address, link } = await userWithLink('disabled');
    expect((await request(stack.url(`/v2/users/${id}/disable`), { token, method: 'POST' })).status).toBe(200);
    // The disable retired the mailed link; the page says so before a password is typed.
    const retired = await open(link);
    await expectText(retired.getByRole('alert'), 'This link is invalid, expired or already used. Ask for a new one.');
    // A link the admin hands over after the disable sets the password.
    const reset = await request<{ token: string }>(stack.url(`/v2/users/${id}/reset-password`), {
      token,
      body: { send_email: false },
    });
    const page = await open(link.replace(/token=[^&\s]+/, `token=${reset.body.token}`));
    await submit(page, 'disabled-pass-1');
    await expectText(
      page.getByRole('status'),
      'Your password is set, but your account is disabled: ask an administrator to enable it.',
    );
    expect(await userStatus(id)).toBe('disabled');
    expect((await login(address, 'disabled-pass-1')).body.code).toBe('account_disabled');
  });

  it('says at once, before any password is typed, that a used link is dead', async () => {
    const { id, address, link } = await userWithLink('twice');
    const first = await open(link);
    await submit(first, 'first-pass-1');
    await expectText(
      first.getByRole('status'),
      'Your password is set and your account is active. You can now sign in.',
    );
    expect(await userStatus(id)).toBe('active');

    const again = await open(link);
    await expectText(again.getByRole('alert'), 'This link is invalid, expired or already used. Ask for a new one.');
    expect(await again.locator('#form').isHidden()).toBe(true);
    expect((await login(address, 'first-pass-1')).body.access_token).toEqual(expect.any(String));
  });

  it('says at once that an unknown link is dead, in the language of the link', async () => {
    const dead = stack.url(`/activate?token=${'A'.repeat(43)}&lang=zh-CN`);
    const page = await open(dead);
    await expectText(page.getByRole('alert'), '此链接无效、已过期或已被使用。请申请新的链接。');
    expect(await page.locator('#form').isHidden()).toBe(true);
    expect(await attribute(page, 'html', 'lang')).toBe('zh-CN');
  });

  it('checking a link uses nothing: a page opened twice still sets the password once', async () => {
    const { id, link } = await userWithLink('checked');
    await (await open(link)).close();
    const page = await open(link);
    await submit(page, 'checked-pass-1');
    await expectText(page.getByRole('status'), 'Your password is set and your account is active. You can now sign in.');
    expect(await userStatus(id)).toBe('active');
  });

  it('speaks the language of a zh-CN mail, and activates in it', async () => {
    const { id, address, link } = await userWithLink('li', 'zh-CN');
    expect(new URL(link).searchParams.get('lang')).toBe('zh-CN');
    const page = await open(link);
    expect(await attribute(page, 'html', 'lang')).toBe('zh-CN');
    expect(await page.title()).toBe('设置密码');
    expect(await page.locator('#password-hint').textContent()).toBe('8 到 128 个字符。');

    await submit(page, 'short', 'short', CHINESE);
    await expectText(page.getByRole('alert'), '密码长度必须为 8 到 128 个字符。');
    await submit(page, 'zh-pass-word-1', 'zh-pass-word-2', CHINESE);
    await expectText(page.getByRole('alert'), '两次输入的密码不一致。');
    await submit(page, 'zh-pass-word-1', 'zh-pass-word-1', CHINESE);
    await expectText(page.getByRole('status'), '密码已设置，账户已激活。现在可以登录了。');
    expect(await userStatus(id)).toBe('active');
    expect((await login(address, 'zh-pass-word-1')).body.access_token).toEqual(expect.any(String));
  });

  it("works behind a proxy's prefix: the page's calls go under it, as the page did", async () => {
    // A reverse proxy that serves the gateway under /accounts and forwards nothing else.
    const gateway = new URL(stack.url('/'));
    const proxy = http.createServer((incoming, answer) => {
      if (!incoming.url?.startsWith('/accounts/')) return void answer.writeHead(404).end();
      // As a reverse proxy does, it names the browser's address (the stack trusts 127.0.0.1), so the
      // page's calls count in a bucket of their own, not in the one every other test's browser fills.
      const headers = { ...incoming.headers, 'x-forwarded-for': '198.51.100.80' };
      const forwarded = http.request(
        { host: gateway.hostname, port: gateway.port, method: incoming.method, headers },
        (response) => {
          answer.writeHead(response.statusCode ?? 502, response.headers);
          response.pipe(answer);
        },
      );
      forwarded.path = incoming.url.slice('/accounts'.length);
      incoming.pipe(forwarded);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const { id, address, link } = await userWithLink('prefixed');
      const { port } = proxy.address() as AddressInfo;
      const page = await open(`http://127.0.0.1:${port}/accounts/activate${new URL(link).search}`);
      await submit(page, 'prefixed-pass-1');
      await expectText(
        page.getByRole('status'),
        'Your password is set and your account is active. You can now sign in.',
      );
      expect(await userStatus(id)).toBe('active');
      expect((await login(address, 'prefixed-pass-1')).body.access_token).toEqual(expect.any(String));
    } finally {
      proxy.closeAllConnections();
      proxy.close();
    }
  });

  it("follows the browser's Accept-Language when the link names no language, and the link's lang over it", async () => {
    const { link } = await userWithLink('browser');
    const withoutLang = new URL(link);
    withoutLang.searchParams.delete('lang');
    await context.close();
    context = await browser.newContext({ locale: 'zh-CN' });
    const chinese = await open(withoutLang.toString());
    expect(await attribute(chinese, 'html', 'lang')).toBe('zh-CN');
    expect(await chinese.getByLabel('新密码').count()).toBe(1);
    const english = await open(link);
    expect(await attribute(english, 'html', 'lang')).toBe('en');
    expect(await english.getByLabel('New password').count()).toBe(1);
  });

  it('says the link has no token and hides the form when opened without one', async () => {
    const page = await open(stack.url('/activate'));
    await expectText(page.getByRole('alert'), 'This link has no token. Open the link from your e-mail again.');
    expect(await page.locator('#form').isHidden()).toBe(true);
  });
});
