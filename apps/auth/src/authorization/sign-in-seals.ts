import { createHmac, timingSafeEqual } from 'node:crypto';

import { Clock } from '@acct/clock';
import { Inject, Injectable } from '@nestjs/common';

import { AUTH_CONFIG, AuthConfig } from '../config';
import { VerifiedUser } from '../identity/identity.client';
import { deriveKey } from '../keys/derived-key';

/** How long the login page's TOTP step may follow its password step. */
export const MFA_TICKET_TTL_MS = 5 * 60 * 1000;
/** A CSRF nonce from the login page's cookie: 32 random bytes, base64url. */
const NONCE = /^[A-Za-z0-9_-]{43}$/;

interface TicketBody {
  /** The normalised username the password was checked for (the lockout's key). */
  username: string;
  user: VerifiedUser;
  /** The authorization request it belongs to (requestFingerprint). */
  request: string;
  expiresAt: number;
}

const equal = (a: string, b: string) => {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
};

/**
 * What the login page carries between its steps, authenticated with HMAC-SHA256 under a key derived
 * (HKDF) from AUTH_KEY_ENCRYPTION_KEY, so any auth instance accepts what another issued, and the
 * gateway holds no secret:
 * - the CSRF token of the form: a signed double-submit token, HMAC(nonce of the page's cookie,
 *   authorization request), so a form only works with the cookie of the browser that loaded it and
 *   for the request it was loaded for;
 * - the MFA ticket: proof that the password step succeeded for an account that needs a TOTP code,
 *   so the second step need not carry the password again. It reveals nothing secret (the browser
 *   knows whom it signs in as) and is worth nothing without a valid, unused code; the code step goes
 *   through the lockouts like any login.
 */
@Injectable()
export class SignInSeals {
  private readonly key: Buffer;

  constructor(
    private readonly clock: Clock,
    @Inject(AUTH_CONFIG) config: AuthConfig,
  ) {
    this.key = deriveKey(config.AUTH_KEY_ENCRYPTION_KEY, 'auth:sign-in-seals');
  }

  /** The form's CSRF token for this cookie nonce and request; empty for a malformed nonce. */
  csrfToken(nonce: string, request: string): string {
    return NONCE.test(nonce) ? this.mac(`csrf.${nonce}.${request}`) : '';
  }

  csrfTokenMatches(nonce: string, request: string, token: string): boolean {
    const expected = this.csrfToken(nonce, request);
    return expected !== '' && equal(token, expected);
  }

  /**
   * A ticket for the code step of a sign-in whose password was checked at `checkedAt` (now, unless the
   * ticket renews an earlier one: it keeps that one's deadline, so an empty code cannot stretch the step).
   */
  mfaTicket(username: string, user: VerifiedUser, request: string, checkedAt = this.clock.now()): string {
    const body: TicketBody = { username, user, request, expiresAt: checkedAt + MFA_TICKET_TTL_MS };
    const encoded = Buffer.from(JSON.stringify(body)).toString('base64url');
    return `${encoded}.${this.mac(`mfa.${encoded}`)}`;
  }

  /**
   * The ticket's username and user, and when its password step was (`checkedAt`, the ticket's
   * issue), when it is genuine, unexpired and for `request`.
   */
  openMfaTicket(
    ticket: string,
    request: string,
  ): (Pick<TicketBody, 'username' | 'user'> & { checkedAt: number }) | undefined {
    const [encoded = '', mac = ''] = ticket.split('.');
    if (!equal(mac, this.mac(`mfa.${encoded}`))) return undefined;
    const body = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8')) as TicketBody;
    if (body.request !== request || body.expiresAt <= this.clock.now()) return undefined;
    return { username: body.username, user: body.user, checkedAt: body.expiresAt - MFA_TICKET_TTL_MS };
  }

  private mac(data: string): string {
    return createHmac('sha256', this.key).update(data).digest('base64url');
  }
}
