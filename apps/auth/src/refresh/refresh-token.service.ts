import { randomUUID } from 'node:crypto';

import { parseScope } from '@acct/access-token';
import { Clock } from '@acct/clock';
import { Revocations } from '@acct/revocation';
import { Inject, Injectable, Logger } from '@nestjs/common';

import { AUTH_CONFIG, AuthConfig } from '../config';
import { OAuthErrors } from '../oauth/oauth-errors';
import { grantScopes } from '../oauth/scope';
import { generateRefreshToken, hashRefreshToken, isRefreshTokenShaped } from './refresh-token';
import {
  NewRefreshToken,
  RefreshTokenRepository,
  SessionOrigin,
  StoredRefreshToken,
  StoredSession,
} from './refresh-token.repository';

/** What a refresh token stands for: a user's login through a client. */
export interface RefreshGrant {
  userId: string;
  orgId: string;
  clientId: string;
  /** As granted at login; a refresh may narrow the access token's scopes, never these. */
  scopes: readonly string[];
  roles: readonly string[];
}

export interface RotateRequest {
  refreshToken: string;
  /** Optional narrowing of the access token's scope. */
  scope?: string;
  /** When given, the token must have been issued to this client. */
  clientId?: string;
}

export interface Rotated {
  /** The new refresh token (same family). */
  refreshToken: string;
  /** The family: the new access token's `sid`, so revoking the family revokes it too. */
  familyId: string;
  grant: RefreshGrant;
  /** The scopes for the new access token: the grant's, or the requested subset of them. */
  scopes: string[];
}

type Attempt = { outcome: 'refused' } | { outcome: 'reused' } | ({ outcome: 'rotated' } & Omit<Rotated, 'familyId'>);

/**
 * Refresh tokens (interface §5, contract §4): single use with rotation. Every use returns a new token
 * of the same family; the used one keeps working for REFRESH_GRACE_SECONDS after its first use
 * (concurrent tabs, retries); used after that, it is refused and its whole family revoked (RFC 9700
 * reuse detection), so whoever holds the newest token must log in again. Revoking a family also
 * revokes the access tokens issued from it (their `sid`), through the one revocation mechanism.
 */
@Injectable()
export class RefreshTokenService {
  private readonly logger = new Logger(RefreshTokenService.name);

  constructor(
    private readonly tokens: RefreshTokenRepository,
    private readonly clock: Clock,
    private readonly revocations: Revocations,
    @Inject(AUTH_CONFIG) private readonly config: AuthConfig,
  ) {}

  /**
   * The first refresh token of a login: a new family (its id chosen by the caller when it must record
   * it), begun when the login's password was checked (`begunAt`, ms; default now): a revocation of the
   * user's sessions from a later time ends it, however late the login finished (`revokeUser`).
   */
  async issue(
    grant: RefreshGrant,
    familyId: string = randomUUID(),
    origin?: SessionOrigin,
    begunAt?: number,
  ): Promise<string> {
    const { token, row } = this.mint(grant, familyId, null, begunAt);
    await this.tokens.insertFirst({ ...row, origin });
    return token;
  }

  /** The user's live sessions (families) in `orgId`, newest first. */
  sessionsOf(orgId: string, userId: string): Promise<StoredSession[]> {
    return this.tokens.sessionsOf(orgId, userId, new Date(this.clock.now()));
  }

  async rotate(request: RotateRequest): Promise<Rotated> {
    const tokenHash = hashRefreshToken(request.refreshToken);
    const now = this.clock.now();

    // The common case (a token's first use, no narrowing scope that could be refused after the claim):
    // one statement. Anything else, or nothing claimed, takes the full path below, unchanged.
    if (parseScope(request.scope).length === 0) {
      const rotated = await this.rotateFirstUse(tokenHash, now, request.clientId);
      if (rotated) return rotated;
    }

    // One transaction: find the family and lock it (one statement), claim the first use of a usable
    // token (one statement), insert its successor. Only a token used before needs another read.
    const locked = await this.tokens.inFamilyOfToken(tokenHash, 'shared', async (family) => {
      // A first use claimed here is stamped when the family's lock was had, however long that took (as
      // rotateFirstUse's statement does): the grace window starts when the rotation happened.
      const claimedAt = this.clock.now();
      const attempt = async (): Promise<Attempt> => {
        let current = await family.claimFirstUseIfUsable(tokenHash, new Date(claimedAt), request.clientId);
        let firstUse = claimedAt;
        if (!current) {
          // Not usable, or used before (maybe by a concurrent request whose update has committed: ours
          // waited for it); read it as it is now.
          current = await family.findByHash(tokenHash);
          if (!current || !this.usable(current, now, request.clientId)) return { outcome: 'refused' };
          firstUse = current.firstUsedAt?.getTime() ?? now;
        }
        // A use after the grace window is reuse whatever it asks for: judged before the scope, so an
        // unavailable scope cannot turn it into invalid_scope and leave the family alive.
        if (now - firstUse > this.config.REFRESH_GRACE_SECONDS * 1000) return { outcome: 'reused' };
        // An unavailable scope throws, and the transaction's rollback leaves the token as it was.
        const scopes = grantScopes(request.scope, current.scopes);
        const grant = grantOf(current);
        const next = this.mint(grant, family.familyId, current.id);
        await family.insert(next.row);
        return { outcome: 'rotated', refreshToken: next.token, grant, scopes };
      };
      return { familyId: family.familyId, attempt: await attempt() };
    });
    if (!locked) throw OAuthErrors.badRefreshToken();
    const { familyId, attempt } = locked;

    switch (attempt.outcome) {
      case 'rotated':
        return { refreshToken: attempt.refreshToken, familyId, grant: attempt.grant, scopes: attempt.scopes };
      case 'reused': {
        const revoked = await this.revokeInDatabase(familyId);
        this.logger.warn(
          `refresh token reused after its grace window; revoked ${revoked} tokens of family ${familyId}`,
        );
        // The refresh tokens are revoked above whatever happens here; the answer stays invalid_grant. What
        // Redis cannot take now, Revocations stores once it answers.
        await this.revocations
          .revokeSessions([familyId])
          .catch((error: Error) =>
            this.logger.warn(`access tokens of family ${familyId} not stored yet: ${error.message}`),
          );
        throw OAuthErrors.badRefreshToken();
      }
      case 'refused':
        throw OAuthErrors.badRefreshToken();
    }
  }

  private async rotateFirstUse(tokenHash: string, now: number, clientId: string | undefined) {
    const token = generateRefreshToken();
    const claimed = await this.tokens.rotateFirstUse(tokenHash, new Date(now), clientId, {
      id: randomUUID(),
      tokenHash: hashRefreshToken(token),
      expiresAt: new Date(now + this.config.REFRESH_TOKEN_TTL_SECONDS * 1000),
    });
    if (!claimed) return undefined;
    const grant = grantOf(claimed);
    return { refreshToken: token, familyId: claimed.familyId, grant, scopes: grantScopes(undefined, grant.scopes) };
  }

  /**
   * Revokes a family (a session): its refresh tokens in Postgres, then the access tokens issued from
   * it, everywhere. Answers how many refresh tokens were revoked; throws `service_unavailable` when
   * the access tokens' revocation could not be stored (the refresh tokens stay revoked: retry).
   */
  async revokeFamily(familyId: string): Promise<number> {
    const revoked = await this.revokeInDatabase(familyId);
    await this.revocations.revokeSessions([familyId]);
    return revoked;
  }

  /**
   * Ends a session its user or an admin asked to end: as revokeFamily, but the access tokens'
   * revocation is stored first (the entry names the session, so it ends those a rotation issues
   * meanwhile too). When it cannot be, the `503` leaves the session live, and the retry it asks for
   * finds it: revoked first, the retry answered 404 and the revocation never reached Redis. Answers how
   * many refresh tokens were revoked (none: another request ended the session since it was listed).
   */
  async endSession(familyId: string): Promise<number> {
    await this.revocations.revokeSessions([familyId]);
    return this.revokeInDatabase(familyId);
  }

  /**
   * Ends every session of a user of `orgId` begun before `before` (ms): each live family (as
   * revokeFamily) and every access token issued to the user before then. A session begins when its
   * sign-in checked the password, however late its tokens were issued; a later login is left alone,
   * so replaying an old password change ends nothing new. Answers how many families were live.
   */
  async revokeUser(namedOrg: string, namedUser: string, before: number): Promise<number> {
    // Tokens carry both ids in lower case, as identity and auth store them; the subject entry and the
    // sign-in checks against it (subjectRevokedAfter) compare exactly, so an id named in upper case (a
    // caller of RevokeUserTokens) ended the families but no sign-in in flight.
    const orgId = namedOrg.toLowerCase();
    const userId = namedUser.toLowerCase();
    const ended = await this.endSessionsBegunBefore(orgId, userId, before, new Set());
    await this.revocations.revokeSubject(orgId, userId, before);
    // A sign-in checked before `before` whose session was stored after the read above checked the
    // set (PasswordGrant, AuthorizationCodes) before the subject entry was there: it is read now. One
    // that checks the set from now on is refused.
    const late = await this.endSessionsBegunBefore(orgId, userId, before, new Set(ended.sessions));
    return ended.families.length + late.families.length;
  }

  /** revokeUser's families and code exchanges begun before `before`, but those in `known`. */
  private async endSessionsBegunBefore(orgId: string, userId: string, before: number, known: ReadonlySet<string>) {
    const now = new Date(this.clock.now());
    const unknown = (familyId: string) => !known.has(familyId);
    const families = (await this.tokens.liveFamiliesOf(orgId, userId, now, new Date(before))).filter(unknown);
    // The subject entry ends access tokens of seconds before `before`'s; one issued earlier in that
    // same second, or by a refresh after `before` (auth hears of a change late while NATS is away), is
    // ended by its family's entry. A code exchange without a refresh token has no family here, only on
    // its code: its access token (at most ACCESS_TOKEN_TTL_SECONDS old) too.
    const since = new Date(before - this.config.ACCESS_TOKEN_TTL_SECONDS * 1000);
    const exchanged = (await this.tokens.familiesExchangedBy(orgId, userId, since, new Date(before))).filter(unknown);
    const sessions = [...new Set([...families, ...exchanged])];
    // Stored before the families are ended, as endSession does: when Redis cannot store them, the
    // families stay live and the event's redelivery finds them again. Ended first, the redelivery found
    // none, and the entries lived only in this process's memory (lost with it).
    await this.revocations.revokeSessions(sessions);
    for (const familyId of families) await this.revokeInDatabase(familyId);
    return { families, sessions };
  }

  /** A refresh token as stored, by its value (no lock): for revocation and introspection. */
  async find(refreshToken: string): Promise<StoredRefreshToken | undefined> {
    if (!isRefreshTokenShaped(refreshToken)) return undefined;
    return this.tokens.findByHash(hashRefreshToken(refreshToken));
  }

  /** Whether a stored token can still be exchanged now (not revoked, not expired, not used up). */
  isUsable(token: StoredRefreshToken): boolean {
    const now = this.clock.now();
    const usedUp =
      token.firstUsedAt !== null && now - token.firstUsedAt.getTime() > this.config.REFRESH_GRACE_SECONDS * 1000;
    return this.usable(token, now, undefined) && !usedUp;
  }

  /**
   * Until when a stored token can be exchanged (ms), unless revoked first: its expiry, or the end of
   * its grace window once it was used (RFC 7662 `exp`: a used token stops working then, not in 30 days).
   */
  usableUntil(token: StoredRefreshToken): number {
    const expiresAt = token.expiresAt.getTime();
    if (token.firstUsedAt === null) return expiresAt;
    return Math.min(expiresAt, token.firstUsedAt.getTime() + this.config.REFRESH_GRACE_SECONDS * 1000);
  }

  /** The exclusive lock waits for rotations in flight, so the tokens they create are revoked too. */
  private revokeInDatabase(familyId: string): Promise<number> {
    return this.tokens.inFamily(familyId, 'exclusive', (family) => family.revokeAll(new Date(this.clock.now())));
  }

  private usable(token: StoredRefreshToken, now: number, clientId: string | undefined): boolean {
    if (token.revokedAt !== null) return false;
    if (token.expiresAt.getTime() <= now) return false;
    return !clientId || clientId === token.clientId;
  }

  private mint(grant: RefreshGrant, familyId: string, parentId: string | null, createdAt?: number) {
    const token = generateRefreshToken();
    const now = this.clock.now();
    const row: NewRefreshToken = {
      id: randomUUID(),
      familyId,
      parentId,
      tokenHash: hashRefreshToken(token),
      userId: grant.userId,
      orgId: grant.orgId,
      clientId: grant.clientId,
      scopes: [...grant.scopes],
      roles: [...grant.roles],
      createdAt: new Date(createdAt ?? now),
      expiresAt: new Date(now + this.config.REFRESH_TOKEN_TTL_SECONDS * 1000),
    };
    return { token, row };
  }
}

const grantOf = (token: StoredRefreshToken): RefreshGrant => ({
  userId: token.userId,
  orgId: token.orgId,
  clientId: token.clientId,
  scopes: token.scopes,
  roles: token.roles,
});
