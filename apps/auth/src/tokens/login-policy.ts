/** One password login attempt, as the lockout and MFA rules (and the audit) will see it. */
export interface LoginAttempt {
  /** Trimmed and lower-cased. */
  username: string;
  clientIp: string;
  deviceId: string;
  userAgent: string;
  mfaCode: string;
}

export interface LoggedInUser {
  id: string;
  orgId: string;
  roles: readonly string[];
}

/**
 * A rule around the password check of the password grant. Policies run in order (LOGIN_POLICIES in
 * tokens.module.ts: MFA, the (username, IP) lockout, the account-wide ceiling); any hook may throw a
 * DomainError to refuse the login, and then no later policy's hook runs. The same attempt object is
 * passed to every hook of one login.
 */
export interface LoginPolicy {
  beforePasswordCheck(attempt: LoginAttempt): Promise<void>;
  /** Unknown user or wrong password. */
  afterFailure(attempt: LoginAttempt): Promise<void>;
  /** A correct password of an active account, before any token is issued. */
  afterSuccess(attempt: LoginAttempt, user: LoggedInUser): Promise<void>;
}

/** The ordered `LoginPolicy[]` of the password grant. */
export const LOGIN_POLICIES = Symbol('LOGIN_POLICIES');
