// What an outside client has: HTTP to the gateway, the mail that reached its SMTP server, the events on
// NATS, and the operator CLI for setup-only steps. No app code, no database.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

import {
  ApiClient,
  CallOptions,
  CaughtMail,
  Cli,
  freshIp,
  newOrg as newOrgOf,
  raiseLimit as raiseLimitOf,
  repositoryRoot,
  setRateLimit as setRateLimitOf,
  uniqueEmail as uniqueAddress,
  waitFor,
} from '@acct/testing';
import { connect, MsgHdrs, NatsConnection, StringCodec, Subscription } from 'nats';

import { STACK_FILE, StackInfo } from './stack';

// The HTTP-level helpers and types are shared with tests/e2e (libs/testing/src/api-client.ts).
export {
  type Answer,
  type Bootstrap,
  type CallOptions,
  expectProblem,
  freshIp,
  jwtPart,
  type Problem,
  type Quota,
  type QuotaReport,
  type TokenSet,
  type User,
} from '@acct/testing';

export const stack: StackInfo = JSON.parse(fs.readFileSync(STACK_FILE, 'utf8')) as StackInfo;

/** The gateway, each request from a client address of its own unless the call names one. */
export const api = new ApiClient(stack.gatewayUrl, { ip: freshIp });
export const gateway = (pathAndQuery: string) => api.url(pathAndQuery);
export const call = <T = Record<string, unknown>>(path: string, options: CallOptions = {}) =>
  api.call<T>(path, options);
export const tokenRequest = (body: Record<string, string>, options: Omit<CallOptions, 'json'> = {}) =>
  api.tokenRequest(body, options);
/** A token set, failing the test with the problem when the gateway refuses. */
export const issue = (body: Record<string, string>) => api.issue(body);

export const uniqueEmail = (label: string) => uniqueAddress(label, 'acceptance.test');

// --- the operator CLI (README "First requests"), for setup only --------------------------------------

/** `npm run cli -- <args> --json` against the suite's stack; its JSON answer. */
export const cli: Cli = <T = Record<string, unknown>>(...args: string[]): T => {
  const result = spawnSync('npm', ['run', '--silent', 'cli', '--', ...args, '--json'], {
    cwd: repositoryRoot,
    env: { ...process.env, ...stack.env },
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`npm run cli -- ${args[0]} failed:\n${result.stderr}`);
  return JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '') as T;
};

/** A fresh org (bootstrap), its client's and its admin's tokens. */
export const newOrg = (label: string, adminPassword?: string) => newOrgOf(api, { cli }, label, adminPassword);

/** Sets an org's tier for a group (operator CLI `set-rate-limit`). */
export const setRateLimit = (orgId: string, group: string, tier: Parameters<typeof setRateLimitOf>[3]) =>
  setRateLimitOf({ cli }, orgId, group, tier);

/** Raises an org's tier for a group (operator CLI), so a spec's many calls are not its subject. */
export const raiseLimit = (orgId: string, group: string, scope: 'per-ip' | 'per-token' = 'per-token') =>
  raiseLimitOf({ cli }, orgId, group, scope);

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
