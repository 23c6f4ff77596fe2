// What an outside client has: HTTP to the gateway, the mail that reached its SMTP server, the events on
// NATS, and the operator CLI for setup-only steps. No app code, no database.
import { spawnSync } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import fs from 'node:fs';

import { CaughtMail, repositoryRoot, waitFor } from '@acct/testing';
import { connect, MsgHdrs, NatsConnection, StringCodec, Subscription } from 'nats';

import { STACK_FILE, StackInfo } from './stack';

export const stack: StackInfo = JSON.parse(fs.readFileSync(STACK_FILE, 'utf8')) as StackInfo;
export const gateway = (pathAndQuery: string) => `${stack.gatewayUrl}${pathAndQuery}`;

export interface Answer<T> {
  status: number;
  headers: Headers;
  /** Parsed JSON when the body is JSON, else undefined. */
  body: T;
  text: string;
}

export interface CallOptions {
  method?: string;
  token?: string;
  /** Sent as JSON (content-type application/json). */
  json?: unknown;
  /** Sent as application/x-www-form-urlencoded. */
  form?: Record<string, string>;
  /** Sent as it is (set content-type in headers). */
  raw?: string;
  headers?: Record<string, string>;
  /** The client's address (X-Forwarded-For; the stack trusts it from 127.0.0.1). */
  ip?: string;
}

export async function call<T = Record<string, unknown>>(path: string, options: CallOptions = {}): Promise<Answer<T>> {
  const headers: Record<string, string> = { 'x-forwarded-for': options.ip ?? freshIp(), ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.json !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = JSON.stringify(options.json);
  } else if (options.form) {
    headers['content-type'] ??= 'application/x-www-form-urlencoded';
    body = new URLSearchParams(options.form).toString();
  } else if (options.raw !== undefined) {
    body = options.raw;
  }
  const response = await fetch(gateway(path), {
    method: options.method ?? (body === undefined ? 'GET' : 'POST'),
    headers,
    body,
  });
  const text = await response.text();
  const isJson = /json/.test(response.headers.get('content-type') ?? '');
  return {
    status: response.status,
    headers: response.headers,
    body: (isJson ? JSON.parse(text) : undefined) as T,
    text,
  };
}

/** A client address of its own (TEST-NET and private ranges), so per-IP buckets and lockouts start fresh. */
export const freshIp = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;

export const uniqueEmail = (label: string) => `${label}-${randomBytes(5).toString('hex')}@acceptance.test`;

// --- problem+json (contract §1) ----------------------------------------------------------------------

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  request_id: string;
  errors?: Array<{ field: string; message: string }>;
  error?: string;
  error_description?: string;
}

/** Asserts the answer is problem+json with every member of contract §1, and returns it. */
export function expectProblem(answer: Answer<unknown>, status: number, code: string): Problem {
  expect({ status: answer.status, text: answer.text }).toEqual({ status, text: expect.any(String) });
  expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const problem = answer.body as Problem;
  expect(problem).toEqual(
    expect.objectContaining({
      type: expect.stringMatching(/^[a-z][a-z0-9+.-]*:\S+$/),
      title: expect.any(String),
      status,
      detail: expect.any(String),
      code,
      request_id: answer.headers.get('x-request-id'),
    }),
  );
  expect(problem.request_id).toMatch(/\S/);
  // Never a stack trace, SQL or an internal address.
  expect(answer.text).not.toMatch(/\s+at \S+ \(|\.ts:\d+|\bSELECT\b|\bINSERT\b|127\.0\.0\.1|localhost/);
  return problem;
}

// --- tokens and users --------------------------------------------------------------------------------

export interface TokenSet {
  access_token: string;
  refresh_token?: string;
  token_type: string;
  expires_in: number;
  scope: string;
}

export interface User {
  id: string;
  email: string;
  display_name: string;
  status: string;
  roles: string[];
  created_at: string;
}

export interface Bootstrap {
  org_id: string;
  admin_user_id: string;
  client_id: string;
  client_secret: string | null;
}

/** POST /v2/auth/token with `body` as JSON, unless `options` carries a form or a raw body instead. */
export const tokenRequest = (body: Record<string, string>, options: Omit<CallOptions, 'json'> = {}) =>
  call<TokenSet & Problem>('/v2/auth/token', {
    ...(options.form || options.raw !== undefined ? {} : { json: body }),
    ...options,
  });

/** A token set, failing the test with the problem when the gateway refuses. */
export async function issue(body: Record<string, string>): Promise<TokenSet> {
  const answer = await tokenRequest(body);
  expect({ status: answer.status, body: answer.body }).toEqual({ status: 200, body: expect.anything() });
  return answer.body;
}

/** The claims of a JWT, unverified (the tokens spec verifies signatures against the JWKS). */
export function jwtPart(token: string, part: 0 | 1): Record<string, unknown> {
  const segment = token.split('.')[part] ?? '';
  return JSON.parse(Buffer.from(segment, 'base64url').toString('utf8')) as Record<string, unknown>;
}

// --- the operator CLI (README "First requests"), for setup only --------------------------------------

/** `npm run cli -- <args> --json` against the suite's stack; its JSON answer. */
export function cli<T = Record<string, unknown>>(...args: string[]): T {
  const result = spawnSync('npm', ['run', '--silent', 'cli', '--', ...args, '--json'], {
    cwd: repositoryRoot,
    env: { ...process.env, ...stack.env },
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`npm run cli -- ${args[0]} failed:\n${result.stderr}`);
  return JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '') as T;
}

/** A fresh org (bootstrap), its client's and its admin's tokens. */
export async function newOrg(label: string, adminPassword = 'admin-password-1') {
  const name = `${label}-${randomBytes(4).toString('hex')}`;
  const adminEmail = `admin@${name}.test`;
  const org = cli<Bootstrap>('bootstrap', '--org', name, '--email', adminEmail, '--password', adminPassword);
  const client = await issue({
    grant_type: 'client_credentials',
    client_id: org.client_id,
    client_secret: org.client_secret!,
  });
  const admin = await issue({ grant_type: 'password', username: adminEmail, password: adminPassword });
  return { ...org, name, adminEmail, adminPassword, clientToken: client.access_token, admin };
}

/** Raises an org's tier for a group (operator CLI), so a spec's many calls are not its subject. */
export function raiseLimit(orgId: string, group: string, scope: 'per-ip' | 'per-token' = 'per-token') {
  cli(
    'set-rate-limit',
    '--org-id',
    orgId,
    '--group',
    group,
    '--rate-per-minute',
    '60000',
    '--burst',
    '10',
    '--scope',
    scope,
  );
}

// --- mail (the suite's SMTP server) ------------------------------------------------------------------

export async function mailTo(address: string): Promise<CaughtMail[]> {
  const response = await fetch(stack.mailboxUrl);
  const messages = (await response.json()) as CaughtMail[];
  return messages.filter((message) => message.to.toLowerCase() === address.toLowerCase());
}

/** The first mail to `address`, waiting for it. */
export async function waitForMail(address: string, timeoutMs = 30_000): Promise<CaughtMail> {
  const mails = await waitFor(
    `an e-mail to ${address}`,
    async () => {
      const found = await mailTo(address);
      return found.length > 0 ? found : undefined;
    },
    { timeoutMs, intervalMs: 200 },
  );
  return mails[0];
}

// --- events (NATS) -----------------------------------------------------------------------------------

export interface Envelope<D = Record<string, unknown>> {
  id: string;
  type: string;
  version: number;
  occurred_at: string;
  data: D;
}

export interface CaughtEvent {
  subject: string;
  msgId: string | undefined;
  envelope: Envelope;
}

/** Every message published on `identity.>` from now on, as a subscriber on the stack's NATS sees it. */
export class EventTap {
  readonly events: CaughtEvent[] = [];

  private constructor(
    readonly connection: NatsConnection,
    private readonly subscription: Subscription,
  ) {
    const codec = StringCodec();
    void (async () => {
      for await (const message of subscription) {
        const headers: MsgHdrs | undefined = message.headers;
        this.events.push({
          subject: message.subject,
          msgId: headers?.get('Nats-Msg-Id'),
          envelope: JSON.parse(codec.decode(message.data)) as Envelope,
        });
      }
    })();
  }

  static async open(subject = 'identity.>'): Promise<EventTap> {
    const connection = await connect({ servers: stack.natsUrl });
    const subscription = connection.subscribe(subject);
    await connection.flush();
    return new EventTap(connection, subscription);
  }

  /** The first event of `type` whose data matches, waiting for it. */
  waitFor(type: string, match: (data: Record<string, unknown>) => boolean, timeoutMs = 30_000): Promise<CaughtEvent> {
    return waitFor(
      `event ${type}`,
      () => this.events.find((event) => event.envelope.type === type && match(event.envelope.data)),
      { timeoutMs, intervalMs: 100 },
    );
  }

  all(type: string, match: (data: Record<string, unknown>) => boolean): CaughtEvent[] {
    return this.events.filter((event) => event.envelope.type === type && match(event.envelope.data));
  }

  async close(): Promise<void> {
    this.subscription.unsubscribe();
    await this.connection.drain();
  }
}
