import { createHash, randomBytes, randomUUID } from 'node:crypto';

import { Clock } from '@acct/clock';
import { Revocations } from '@acct/revocation';
import { Injectable, Logger } from '@nestjs/common';

import { OAuthErrors } from '../oauth/oauth-errors';
import { RefreshTokenService } from '../refresh/refresh-token.service';
import { AuthorizationCodeRepository, Issuance, StoredAuthorizationCode } from './authorization-code.repository';
import { verifierMatches } from './pkce';

/** Contract §6: a code lives 60 s. */
export const AUTHORIZATION_CODE_TTL_MS = 60_000;
/** Used codes are kept this long past their expiry, so that a late replay still revokes what they issued. */
const KEEP_USED_MS = 24 * 60 * 60 * 1000;

/** What a code was issued for; the exchange must present the same client, redirect URI and verifier. */
export type CodeGrant = Omit<StoredAuthorizationCode, 'expiresAt'>;

/** Who exchanges a code: the authenticated client, the redirect URI and the PKCE verifier it sends. */
export interface Exchange {
  clientId: string;
  redirectUri: string;
  codeVerifier: string;
}

/** A claimed code: its grant, the ids the tokens it issues must carry, and when its sign-in was (ms). */
export type Redemption = CodeGrant & Issuance & { codeHash: string; signedInAt: number };

const hashCode = (code: string) => createHash('sha256').update(code, 'utf8').digest('hex');

/**
 * Authorization codes (contract §6): 256 random bits, stored as SHA-256, single use, 60 s, bound to
 * the client, redirect URI, S256 challenge, user and scope; a code issued before the user's sessions
 * were ended (contract §6–7) is refused. The first exchange attempt uses the code
 * up, whatever its outcome; any later one is a replay: refused, and the refresh family the code's
 * exchange started is revoked (RFC 6749 §4.1.2).
 */
@Injectable()
export class AuthorizationCodes {
  private readonly logger = new Logger(AuthorizationCodes.name);

  constructor(
    private readonly codes: AuthorizationCodeRepository,
    private readonly refreshTokens: RefreshTokenService,
    private readonly revocations: Revocations,
    private readonly clock: Clock,
  ) {}

  /**
   * A code for a sign-in whose password was checked at `signedInAt` (ms): it counts as issued then, so
   * the user's sessions ended after that (while the sign-in ran) refuse it at its exchange.
   */
  async issue(grant: CodeGrant, signedInAt: number): Promise<string> {
    const code = randomBytes(32).toString('base64url');
    const now = this.clock.now();
    await this.codes.purgeExpired(new Date(now - KEEP_USED_MS));
    await this.codes.insert({
      ...grant,
      codeHash: hashCode(code),
      createdAt: new Date(signedInAt),
      expiresAt: new Date(now + AUTHORIZATION_CODE_TTL_MS),
    });
    return code;
  }

  /** Uses the code up for this exchange; `invalid_grant` unless everything it is bound to matches. */
  async redeem(code: string, exchange: Exchange): Promise<Redemption> {
    const codeHash = hashCode(code);
    const now = this.clock.now();
    const issuance: Issuance = { familyId: randomUUID(), accessTokenJti: randomUUID() };
    const claimed = await this.codes.claim(codeHash, new Date(now), issuance);
    if (!claimed) {
      const replayed = await this.codes.markReplayed(codeHash, new Date(now));
      if (replayed) await this.revoke(replayed);
      throw OAuthErrors.badAuthorizationCode();
    }
    // Issued before the user's sessions were ended (password set or reset, disabled, deleted): the
    // sign-in it stands for is ended too, like the refresh families and access tokens of that time.
    const signedInAt = claimed.createdAt.getTime();
    const bound =
      claimed.expiresAt.getTime() > now &&
      !this.revocations.set.subjectRevokedAfter(claimed.orgId, claimed.userId, signedInAt) &&
      claimed.clientId === exchange.clientId &&
      claimed.redirectUri === exchange.redirectUri &&
      verifierMatches(exchange.codeVerifier, claimed.codeChallenge);
    if (!bound) throw OAuthErrors.badAuthorizationCode();
    const { expiresAt: _expiresAt, createdAt: _createdAt, ...grant } = claimed;
    return { ...grant, ...issuance, codeHash, signedInAt };
  }

  /**
   * Called once the exchange's tokens exist: when the user's sessions were ended after the sign-in
   * (that revocation found no family of this exchange yet) or a replay came in meanwhile (it may have
   * found nothing to revoke yet), revokes them here and refuses the exchange.
   */
  async confirm(redemption: Redemption): Promise<void> {
    if (this.revocations.set.subjectRevokedAfter(redemption.orgId, redemption.userId, redemption.signedInAt)) {
      await this.refreshTokens.revokeFamily(redemption.familyId);
      throw OAuthErrors.badAuthorizationCode();
    }
    if (!(await this.codes.wasReplayed(redemption.codeHash))) return;
    await this.revoke(redemption);
    throw OAuthErrors.badAuthorizationCode();
  }

  private async revoke(issued: Issuance): Promise<void> {
    const revoked = await this.refreshTokens.revokeFamily(issued.familyId);
    this.logger.warn(
      `authorization code used again; revoked ${revoked} refresh tokens of family ${issued.familyId} ` +
        `(access token ${issued.accessTokenJti})`,
    );
  }
}
