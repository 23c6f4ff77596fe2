// The HTTP-level helpers both end-to-end suites use: `tests/e2e` (apps started by TestStack) and `e2e/`
// (the black box, the stack as `npm run up` starts it). Pure HTTP against a gateway's URL, plus the
// operator CLI as a function each suite supplies (`stack.cli`, `npm run cli`): no app code here, so the
// black box stays a black box.
import { randomBytes, randomInt } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

import { repositoryRoot } from './stack';

// --- what the public interface answers -----------------------------------------------------------------

/** `npm run cli -- bootstrap --json`. */
export interface Bootstrap {
  org_id: string;
  admin_user_id: string;
  client_id: string;
  client_secret: string | null;
}

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

/** problem+json (contract §1); `error` / `error_description` on the OAuth endpoints. */
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

/** An entry of GET /v2/system/quota. */
export interface Quota {
  dimension: string;
  name: string;
  used: number;
  limit: number;
  unit: string;
}

export interface QuotaReport {
  org_id: string;
  quotas: Quota[];
}

/** GET /v2/system/health. */
export interface HealthReport {
  status: string;
  version: string;
  region: string;
  checks: Array<{ component: string; status: string; latency_ms: number }>;
  uptime_seconds: number;
}

/** The version the health report must name: the repository's package.json. */
export const packageVersion = (
  JSON.parse(fs.readFileSync(path.join(repositoryRoot, 'package.json'), 'utf8')) as { version: string }
).version;

// --- requests -------------------------------------------------------------------------------------------

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
  /** Sent as it is, bytes included (set content-type in headers). */
  raw?: string | Buffer;
  headers?: Record<string, string>;
  /** The client's address (X-Forwarded-For; only a stack that trusts the caller as a proxy reads it). */
  ip?: string;
}

/** A client address of its own (a private range), so per-IP buckets and lockouts start fresh. */
export const freshIp = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;

/** An e-mail address nobody has used yet. */
export const uniqueEmail = (label: string, domain = 'example.test') =>
  `${label}-${randomBytes(5).toString('hex')}@${domain}`;

/** A client of one gateway. `ip` names each request's client address unless the call names one. */
export class ApiClient {
  constructor(
    readonly baseUrl: string,
    private readonly defaults: { ip?: () => string } = {},
  ) {}

  url(pathAndQuery: string): string {
    return `${this.baseUrl}${pathAndQuery}`;
  }

  async call<T = Record<string, unknown>>(pathAndQuery: string, options: CallOptions = {}): Promise<Answer<T>> {
    const headers: Record<string, string> = {};
    const ip = options.ip ?? this.defaults.ip?.();
    if (ip) headers['x-forwarded-for'] = ip;
    Object.assign(headers, options.headers);
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    let body: string | Buffer | undefined;
    if (options.json !== undefined) {
      headers['content-type'] ??= 'application/json';
      body = JSON.stringify(options.json);
    } else if (options.form) {
      headers['content-type'] ??= 'application/x-www-form-urlencoded';
      body = new URLSearchParams(options.form).toString();
    } else if (options.raw !== undefined) {
      body = options.raw;
    }
    const response = await fetch(this.url(pathAndQuery), {
      method: options.method ?? (body === undefined ? 'GET' : 'POST'),
      headers,
      body,
    });
    const text = await response.text();
    // A HEAD answer carries a JSON content type and no content.
    const isJson = /json/.test(response.headers.get('content-type') ?? '') && text !== '';
    return {
      status: response.status,
      headers: response.headers,
      body: (isJson ? JSON.parse(text) : undefined) as T,
      text,
    };
  }

  /** POST /v2/auth/token with `body` as JSON, unless `options` carries a form or a raw body instead. */
  tokenRequest(body: Record<string, string>, options: Omit<CallOptions, 'json'> = {}) {
    return this.call<TokenSet & Problem>('/v2/auth/token', {
      ...(options.form || options.raw !== undefined ? {} : { json: body }),
      ...options,
    });
  }

  /** A token set, failing the test with the problem when the gateway refuses. */
  async issue(body: Record<string, string>, options: Omit<CallOptions, 'json'> = {}): Promise<TokenSet> {
    const answer = await this.tokenRequest(body, options);
    expect({ status: answer.status, body: answer.body }).toEqual({ status: 200, body: expect.anything() });
    return answer.body;
  }

  /** The password grant's token set. */
  passwordToken(username: string, password: string, options: Omit<CallOptions, 'json'> = {}) {
    return this.issue({ grant_type: 'password', username, password }, options);
  }

  /** The client_credentials grant's token set, for the org's bootstrap client. */
  clientToken(org: Pick<Bootstrap, 'client_id' | 'client_secret'>, options: Omit<CallOptions, 'json'> = {}) {
    return this.issue(
      { grant_type: 'client_credentials', client_id: org.client_id, client_secret: org.client_secret ?? '' },
      options,
    );
  }

  /** POST /v2/users. */
  createUser(token: string, json: unknown, options: Omit<CallOptions, 'json' | 'token'> = {}) {
    return this.call<User & Problem>('/v2/users', { ...options, token, json });
  }
}

// --- assertions -----------------------------------------------------------------------------------------

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

/** A JWT's header (0) or claims (1), unverified. */
export function jwtPart(token: string, part: 0 | 1): Record<string, unknown> {
  const segment = token.split('.')[part] ?? '';
  return JSON.parse(Buffer.from(segment, 'base64url').toString('utf8')) as Record<string, unknown>;
}

// --- the operator CLI (README "First requests"), for setup ----------------------------------------------

/** The operator CLI as a suite runs it against its stack: the command's JSON answer. */
export type Cli = <T = Record<string, unknown>>(...args: string[]) => T;
/** Whoever runs the CLI against the stack: a TestStack, or the acceptance suite's `npm run cli`. */
export interface Operator {
  cli: Cli;
}

/** `bootstrap`: an org, its admin and its first client. */
export const bootstrapOrg = (operator: Operator, org: string, adminEmail: string, adminPassword: string) =>
  operator.cli<Bootstrap>('bootstrap', '--org', org, '--email', adminEmail, '--password', adminPassword);

/** `set-rate-limit`: an org's tier for one endpoint group. */
export function setRateLimit(
  operator: Operator,
  orgId: string,
  group: string,
  tier: { ratePerMinute: number; burst: number; scope?: 'per-ip' | 'per-token' },
): void {
  operator.cli(
    'set-rate-limit',
    '--org-id',
    orgId,
    '--group',
    group,
    '--rate-per-minute',
    String(tier.ratePerMinute),
    '--burst',
    String(tier.burst),
    '--scope',
    tier.scope ?? 'per-token',
  );
}

/** Raises an org's tier for a group, so a spec's many calls are not its subject. */
export const raiseLimit = (
  operator: Operator,
  orgId: string,
  group: string,
  scope: 'per-ip' | 'per-token' = 'per-token',
) => setRateLimit(operator, orgId, group, { ratePerMinute: 60_000, burst: 10, scope });

/** A fresh org (bootstrap) with its client's and its admin's tokens. */
export async function newOrg(api: ApiClient, operator: Operator, label: string, adminPassword = 'admin-password-1') {
  const name = `${label}-${randomBytes(4).toString('hex')}`;
  const adminEmail = `admin@${name}.test`;
  const org = bootstrapOrg(operator, name, adminEmail, adminPassword);
  const client = await api.clientToken(org);
  const admin = await api.passwordToken(adminEmail, adminPassword);
  return { ...org, name, adminEmail, adminPassword, clientToken: client.access_token, admin };
}
