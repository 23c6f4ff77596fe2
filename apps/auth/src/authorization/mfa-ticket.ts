import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

import { Clock } from '@acct/clock';
import { Inject, Injectable } from '@nestjs/common';

import { AUTH_CONFIG, AuthConfig } from '../config';
import { VerifiedUser } from '../tokens/identity.client';

/** How long the login page's TOTP step may follow its password step. */
export const MFA_TICKET_TTL_MS = 5 * 60 * 1000;

interface TicketBody {
  /** The normalised username the password was checked for (the lockout's key). */
  username: string;
  user: VerifiedUser;
  /** The authorization request it belongs to (see AuthorizationService). */
  request: string;
  expiresAt: number;
}

/**
 * The login page's proof that the password step succeeded for an account that needs a TOTP code, so
 * the second step need not carry the password again. Stateless and shared by every auth instance:
 * the body, authenticated with HMAC-SHA256 under a key derived from AUTH_KEY_ENCRYPTION_KEY. It
 * reveals nothing secret (the browser already knows who it signs in as) and is worth nothing
 * without a valid, unused code; the code step goes through the lockouts like any login.
 */
@Injectable()
export class MfaTickets {
  private readonly key: Buffer;

  constructor(
    private readonly clock: Clock,
    @Inject(AUTH_CONFIG) config: AuthConfig,
  ) {
    this.key = Buffer.from(
      hkdfSync('sha256', Buffer.from(config.AUTH_KEY_ENCRYPTION_KEY, 'base64'), '', 'auth:mfa-ticket', 32),
    );
  }

  issue(username: string, user: VerifiedUser, request: string): string {
    const body: TicketBody = { username, user, request, expiresAt: this.clock.now() + MFA_TICKET_TTL_MS };
    const encoded = Buffer.from(JSON.stringify(body)).toString('base64url');
    return `${encoded}.${this.mac(encoded)}`;
  }

  /** The ticket's username and user, when it is genuine, unexpired and for `request`. */
  open(ticket: string, request: string): Pick<TicketBody, 'username' | 'user'> | undefined {
    const [encoded = '', mac = ''] = ticket.split('.');
    const expected = Buffer.from(this.mac(encoded));
    if (mac.length !== expected.length || !timingSafeEqual(Buffer.from(mac), expected)) return undefined;
    const body = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8')) as TicketBody;
    if (body.request !== request || body.expiresAt <= this.clock.now()) return undefined;
    return { username: body.username, user: body.user };
  }

  private mac(encoded: string): string {
    return createHmac('sha256', this.key).update(encoded).digest('base64url');
  }
}
