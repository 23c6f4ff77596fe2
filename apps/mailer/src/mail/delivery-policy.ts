/** How the mailer retries: exponential back-off with jitter, capped, for at most `maxAgeMs`. */
export interface RetryPolicy {
  /** Delay before the first retry (before jitter). */
  baseMs: number;
  /** Longest delay between two attempts. */
  maxMs: number;
  /** Age of an event (from its `occurred_at`) after which a failed mail is given up as undeliverable. */
  maxAgeMs: number;
}

/** What one failed attempt says about the next: refused for good, or worth another try later. */
export interface FailureVerdict {
  permanent: boolean;
  /** The SMTP reply code, when the server answered. */
  smtpCode?: number;
  /** Nodemailer's error code (`EENVELOPE`, `ECONNECTION`, …) or the error's name. */
  code: string;
  /** The server's reply or the error message (never the message itself). */
  detail: string;
}

interface SmtpError {
  code?: unknown;
  responseCode?: unknown;
  response?: unknown;
  command?: unknown;
  message?: unknown;
  name?: unknown;
}

/**
 * Classifies a failed attempt. Permanent is a refusal of this message or its recipient that the same
 * message would get again (RFC 5321 5yz, except 503, a session out of step, and 530, authentication
 * required), in reply to the recipient or the data, or an address nodemailer will not send to at all.
 * Everything else is transient: 4yz, connections dropped, refused or timed out, and 5yz replies about
 * the session (authentication, greeting) or the sender (`MAIL FROM`: every mail has the same one),
 * which are the mailer's configuration rather than the message and heal when it is fixed.
 */
export function classifyFailure(error: unknown): FailureVerdict {
  const smtp = (typeof error === 'object' && error !== null ? error : {}) as SmtpError;
  const code = typeof smtp.code === 'string' ? smtp.code : typeof smtp.name === 'string' ? smtp.name : 'Error';
  const smtpCode = typeof smtp.responseCode === 'number' ? smtp.responseCode : undefined;
  const detail = String(smtp.response ?? smtp.message ?? error).slice(0, 500);
  const aboutTheMessage = (code === 'EENVELOPE' && smtp.command !== 'MAIL FROM') || code === 'EMESSAGE';
  const refused = smtpCode !== undefined && smtpCode >= 500 && smtpCode < 600 && smtpCode !== 503 && smtpCode !== 530;
  // Without a reply, nodemailer refused the address or the message itself (command `API`).
  const refusedByClient = smtpCode === undefined && smtp.command === 'API';
  return { permanent: aboutTheMessage && (refused || refusedByClient), smtpCode, code, detail };
}

/**
 * The delay before attempt `attempt + 1` after `attempt` failures (1, 2, …): `baseMs · 2^(attempt-1)`,
 * capped at `maxMs`, then jittered into its upper half: each delay is longer than the one before until
 * the cap, and mails refused together do not come back together. `random` is in [0, 1).
 */
export function retryDelayMs(attempt: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const exponential = policy.baseMs * 2 ** Math.min(Math.max(attempt, 1) - 1, 52);
  const ceiling = Math.min(policy.maxMs, exponential);
  return Math.max(1, Math.round(ceiling / 2 + (ceiling / 2) * random()));
}

/** Whether an event that occurred at `occurredAt` is too old to be retried at `now`. */
export function tooOldToRetry(occurredAt: string, now: number, policy: RetryPolicy): boolean {
  const occurred = Date.parse(occurredAt);
  return Number.isFinite(occurred) && now - occurred >= policy.maxAgeMs;
}
