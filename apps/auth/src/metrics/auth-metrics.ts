import { METRICS_REGISTRY } from '@acct/observability';
import { Inject, Injectable } from '@nestjs/common';
import { Counter, Registry } from 'prom-client';

/** The login page's sign-in (GET /v2/auth/authorize), counted and audited like a grant. */
export const AUTHORIZE = 'authorize';

/** The grant types the metric names; anything else is `other`, so a client cannot grow its label set. */
const GRANT_TYPES = new Set(['password', 'client_credentials', 'refresh_token', 'authorization_code', AUTHORIZE]);

export type LockScope = 'pair' | 'account';

/**
 * Login metrics on the ops port's `/metrics`: every token request by grant and outcome (`success` or
 * the error code: invalid_grant, mfa_required, login_locked, …), and every lock as it starts.
 */
@Injectable()
export class AuthMetrics {
  private readonly attempts: Counter<'grant_type' | 'outcome'>;
  private readonly lockouts: Counter<'scope'>;

  constructor(@Inject(METRICS_REGISTRY) registry: Registry) {
    this.attempts = new Counter({
      name: 'auth_login_attempts_total',
      help: 'Token requests by grant type and outcome (success or the error code).',
      labelNames: ['grant_type', 'outcome'],
      registers: [registry],
    });
    this.lockouts = new Counter({
      name: 'auth_lockouts_total',
      help: 'Login locks started: pair = one (username, IP), account = the account-wide ceiling.',
      labelNames: ['scope'],
      registers: [registry],
    });
  }

  loginAttempt(grantType: string, outcome: string): void {
    this.attempts.inc({ grant_type: GRANT_TYPES.has(grantType) ? grantType : 'other', outcome });
  }

  lockStarted(scope: LockScope): void {
    this.lockouts.inc({ scope });
  }
}
