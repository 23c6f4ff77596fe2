import { randomUUID } from 'node:crypto';

import { Clock } from '@acct/clock';
import { Inject, Injectable, Logger } from '@nestjs/common';

import { AUTH_CONFIG, AuthConfig } from '../config';
import { OAuthErrors } from '../oauth/oauth-errors';
import { grantScopes } from '../oauth/scope';
import { generateRefreshToken, hashRefreshToken } from './refresh-token';
import { NewRefreshToken, RefreshTokenRepository, StoredRefreshToken } from './refresh-token.repository';

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
  grant: RefreshGrant;
  /** The scopes for the new access token: the grant's, or the requested subset of them. */
  scopes: string[];
}

type Attempt = { outcome: 'refused' } | { outcome: 'reused' } | ({ outcome: 'rotated' } & Rotated);

/**
 * Refresh tokens (interface §5, contract §4): single use with rotation. Every use returns a new token
 * of the same family; the used one keeps working for REFRESH_GRACE_SECONDS after its first use
 * (concurrent tabs, retries); used after that, it is refused and its whole family revoked (RFC 9700
 * reuse detection), so whoever holds the newest token must log in again.
 */
@Injectable()
export class RefreshTokenService {
  private readonly logger = new Logger(RefreshTokenService.name);

  constructor(
    private readonly tokens: RefreshTokenRepository,
    private readonly clock: Clock,
    @Inject(AUTH_CONFIG) private readonly config: AuthConfig,
  ) {}

  /** The first refresh token of a login: a new family (its id chosen by the caller when it must record it). */
  async issue(grant: RefreshGrant, familyId: string = randomUUID()): Promise<string> {
    const { token, row } = this.mint(grant, familyId, null);
    await this.tokens.insertFirst(row);
    return token;
  }

  async rotate(request: RotateRequest): Promise<Rotated> {
    const tokenHash = hashRefreshToken(request.refreshToken);
    const familyId = await this.tokens.familyOf(tokenHash);
    if (!familyId) throw OAuthErrors.badRefreshToken();
    const now = this.clock.now();

    const attempt = await this.tokens.inFamily(familyId, 'shared', async (family): Promise<Attempt> => {
      const current = await family.findByHash(tokenHash);
      if (!current || !this.usable(current, now, request.clientId)) return { outcome: 'refused' };
      // Before anything is written: an unavailable scope leaves the token as it was.
      const scopes = grantScopes(request.scope, current.scopes);
      const firstUse = (await family.claimFirstUse(current.id, new Date(now)))
        ? now
        : // Someone used it first; their update has committed (ours waited for it), so read it again.
          ((await family.findByHash(tokenHash))?.firstUsedAt?.getTime() ?? now);
      if (now - firstUse > this.config.REFRESH_GRACE_SECONDS * 1000) return { outcome: 'reused' };
      const grant = grantOf(current);
      const next = this.mint(grant, familyId, current.id);
      await family.insert(next.row);
      return { outcome: 'rotated', refreshToken: next.token, grant, scopes };
    });

    switch (attempt.outcome) {
      case 'rotated':
        return { refreshToken: attempt.refreshToken, grant: attempt.grant, scopes: attempt.scopes };
      case 'reused': {
        const revoked = await this.revokeFamily(familyId);
        this.logger.warn(
          `refresh token reused after its grace window; revoked ${revoked} tokens of family ${familyId}`,
        );
        throw OAuthErrors.badRefreshToken();
      }
      case 'refused':
        throw OAuthErrors.badRefreshToken();
    }
  }

  /** Revokes every token of a family (an authorization code that issued it was used again); how many. */
  async revokeFamily(familyId: string): Promise<number> {
    return this.tokens.inFamily(familyId, 'exclusive', (family) => family.revokeAll(new Date(this.clock.now())));
  }

  private usable(token: StoredRefreshToken, now: number, clientId: string | undefined): boolean {
    if (token.revokedAt !== null) return false;
    if (token.expiresAt.getTime() <= now) return false;
    return !clientId || clientId === token.clientId;
  }

  private mint(grant: RefreshGrant, familyId: string, parentId: string | null) {
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
      createdAt: new Date(now),
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
