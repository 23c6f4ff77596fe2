import { DomainError } from '@acct/problem';
import { createLocalJWKSet, errors, JSONWebKeySet, JWTPayload, jwtVerify } from 'jose';
import { LRUCache } from 'lru-cache';

import { Caller } from './caller';
import { assertNotRevoked, RevocationCheck } from './revocation-check';

/** RFC 9068 access tokens, signed with ECDSA P-256 only: no other algorithm is ever accepted. */
export const ACCESS_TOKEN_TYPE = 'at+jwt';
export const SIGNING_ALGORITHM = 'ES256';

export interface VerifierOptions {
  issuer: string;
  audience: string;
  /** Where the current public keys come from (the auth service). */
  fetchKeys: () => Promise<JSONWebKeySet>;
  /** Keys are refetched on an unknown `kid` at most this often (default 1 s). */
  refetchIntervalMs?: number;
  /**
   * A key set older than this is read again in the background (default KEY_SET_MAX_AGE_MS), so a key
   * auth stopped publishing is refused even when no token names a new key.
   */
  keySetMaxAgeMs?: number;
  now?: () => number;
  /** Consulted for every token that is otherwise valid (in memory; see revocation-check.ts). */
  revocations?: RevocationCheck;
  /** How many verified tokens are remembered (least recently used dropped first); 0 turns it off. */
  cacheSize?: number;
}

/** The verifier's default bound on remembered tokens (about 1 KiB each). */
export const VERIFIED_TOKEN_CACHE_SIZE = 10_000;
/** How often an unknown `kid` may refetch the keys, unless the options say otherwise. */
const REFETCH_INTERVAL_MS = 1000;
/**
 * How old the key set may get before a verification reads it again (in the background: no request
 * waits for it, and an auth that does not answer leaves the set as it was). Only a token naming an
 * unknown key made it read again, so a retired key auth no longer published, the one of a rotation
 * made because it may have leaked, kept verifying tokens until the next rotation.
 */
export const KEY_SET_MAX_AGE_MS = 60_000;
/**
 * At most this many verifications wait for a refetch due later; past it a token naming an unknown key
 * is refused at once (a flood of forged kids holds no more than this).
 */
const MAX_WAITING_FOR_KEYS = 1000;

/** What a successful verification leaves behind, for the same token string. */
interface Verified {
  caller: Caller;
  kid: string;
  /** `exp` in milliseconds: the entry is never used at or after it. */
  expiresAt: number;
  claims: Pick<AccessTokenClaims, 'jti' | 'sid' | 'sub' | 'org_id' | 'iat'>;
}

export interface AccessTokenClaims extends JWTPayload {
  scope: string;
  org_id: string;
  client_id: string;
  roles?: string[];
  kind?: 'user' | 'client';
  /** The refresh family (session) the token was issued from; absent for client_credentials. */
  sid?: string;
}

const invalidToken = (description: string) =>
  new DomainError('unauthenticated', description, {
    headers: { 'WWW-Authenticate': `Bearer error="invalid_token", error_description="${description}"` },
  });

/**
 * Verifies access tokens locally against the auth service's JWKS: cached, refreshed when a token
 * names a key it does not know (throttled, so forged `kid`s cannot make it hammer the auth service:
 * within the interval such a token waits for the one refetch due at its end, so a key published after
 * the last fetch, a rotation's, is learnt and its tokens accepted, never refused for the throttle).
 *
 * A token that verified is remembered by its exact string (bounded LRU) until its `exp`, so the same
 * token's next request skips the signature and claim checks. The revocation check is never skipped:
 * it runs on every request, cached or not, so a revoked token is refused as fast as before; and an
 * entry whose signing key has left the key set is not used. The key set is read again once it is
 * older than KEY_SET_MAX_AGE_MS, so a key auth retired and stopped publishing is refused within that.
 */
export class AccessTokenVerifier {
  private keys?: ReturnType<typeof createLocalJWKSet>;
  private knownKids = new Set<string>();
  /** Keys auth withdrew (`withdrawKeys`): never known again, whatever a key set read says. */
  private readonly withdrawn = new Set<string>();
  private lastFetch = 0;
  /** When a read of a stale key set last began (a failed one is not retried before the max age again). */
  private lastStaleRead = 0;
  private fetching?: Promise<void>;
  /** The refetch due at the end of the current interval, shared by every token waiting for it. */
  private scheduled?: Promise<void>;
  private waiting = 0;
  private readonly verified?: LRUCache<string, Verified>;

  constructor(private readonly options: VerifierOptions) {
    const max = options.cacheSize ?? VERIFIED_TOKEN_CACHE_SIZE;
    if (max > 0) this.verified = new LRUCache<string, Verified>({ max });
  }

  /**
   * `waitForKeys: false`: a token naming a key not in the set at hand is refused at once, without
   * reading the keys again, for a caller that must not wait for the auth service (a route that takes
   * no token).
   *
   * `revoked: true`: a token that is valid but revoked is verified all the same, for revocation itself
   * (a retry must store the revocation again: this process may know it without Redis having it).
   */
  async verify(
    token: string,
    { waitForKeys = true, revoked = false }: { waitForKeys?: boolean; revoked?: boolean } = {},
  ): Promise<Caller> {
    this.readStaleKeySet();
    const revocations = revoked ? undefined : this.options.revocations;
    const cached = this.verified?.get(token);
    if (cached) {
      if (cached.expiresAt > this.now() && this.knownKids.has(cached.kid)) {
        assertNotRevoked(revocations, cached.claims);
        return cached.caller;
      }
      this.verified!.delete(token);
    }
    const kid = this.kidOf(token);
    if (!this.knownKids.has(kid) && waitForKeys) await this.refresh();
    if (!this.keys || !this.knownKids.has(kid)) throw invalidToken('The token is signed with an unknown key.');
    try {
      const { payload } = await jwtVerify<AccessTokenClaims>(token, this.keys, {
        algorithms: [SIGNING_ALGORITHM],
        typ: ACCESS_TOKEN_TYPE,
        issuer: this.options.issuer,
        audience: this.options.audience,
        requiredClaims: ['sub', 'exp', 'iat', 'jti', 'scope', 'org_id', 'client_id'],
        currentDate: this.options.now ? new Date(this.options.now()) : undefined,
        clockTolerance: 5,
      });
      assertNotRevoked(revocations, payload);
      const caller = toCaller(payload);
      this.verified?.set(token, {
        caller,
        kid,
        expiresAt: payload.exp! * 1000,
        claims: { jti: payload.jti, sid: payload.sid, sub: payload.sub, org_id: payload.org_id, iat: payload.iat },
      });
      return caller;
    } catch (error) {
      if (error instanceof errors.JWTExpired) throw invalidToken('The token has expired.');
      if (error instanceof DomainError) throw error;
      throw invalidToken('The token is invalid.');
    }
  }

  /**
   * Refuses every token signed with one of `kids` from now on, remembered ones included: auth withdrew
   * those keys (they may have leaked, and whoever holds one signs any claims). A key set read later
   * does not bring them back, though an auth that read its keys just before the withdrawal may still
   * publish them for a moment.
   */
  withdrawKeys(kids: Iterable<string>): void {
    for (const kid of kids) {
      this.withdrawn.add(kid);
      this.knownKids.delete(kid);
    }
  }

  private now(): number {
    return this.options.now ? this.options.now() : Date.now();
  }

  private kidOf(token: string): string {
    const [header] = token.split('.');
    try {
      const { kid, alg } = JSON.parse(Buffer.from(header ?? '', 'base64url').toString('utf8')) as {
        kid?: unknown;
        alg?: unknown;
      };
      if (alg !== SIGNING_ALGORITHM) throw invalidToken('The token is not signed with an accepted algorithm.');
      if (typeof kid === 'string' && kid.length > 0) return kid;
    } catch (error) {
      if (error instanceof DomainError) throw error;
    }
    throw invalidToken('The token is malformed.');
  }

  /**
   * Fetches the keys now when none were fetched yet or the interval since the last fetch is over;
   * otherwise waits for the one fetch due when it is (unless MAX_WAITING_FOR_KEYS already wait).
   */
  private async refresh(): Promise<void> {
    const wait = this.keys ? this.lastFetch + (this.options.refetchIntervalMs ?? REFETCH_INTERVAL_MS) - Date.now() : 0;
    if (wait <= 0) return this.fetch();
    if (this.waiting >= MAX_WAITING_FOR_KEYS) return;
    this.waiting += 1;
    try {
      this.scheduled ??= new Promise<void>((resolve) => setTimeout(resolve, wait).unref()).then(() => {
        this.scheduled = undefined;
        return this.fetch();
      });
      await this.scheduled;
    } finally {
      this.waiting -= 1;
    }
  }

  /** Starts reading the key set again when it is older than its max age; the caller does not wait. */
  private readStaleKeySet(): void {
    if (!this.keys || this.fetching) return;
    const now = Date.now();
    const maxAge = this.options.keySetMaxAgeMs ?? KEY_SET_MAX_AGE_MS;
    if (now - Math.max(this.lastFetch, this.lastStaleRead) < maxAge) return;
    this.lastStaleRead = now;
    // The keys it has verify meanwhile; a failed read leaves them, and is tried again a max age later.
    this.fetch().catch(() => undefined);
  }

  /** One fetch at a time: concurrent callers share it. */
  private fetch(): Promise<void> {
    this.fetching ??= this.options
      .fetchKeys()
      .then((set) => {
        this.keys = createLocalJWKSet(set);
        this.knownKids = new Set(
          set.keys.map((key) => key.kid).filter((kid): kid is string => !!kid && !this.withdrawn.has(kid)),
        );
        this.lastFetch = Date.now();
      })
      .finally(() => (this.fetching = undefined));
    return this.fetching;
  }
}

function toCaller(claims: AccessTokenClaims): Caller {
  const scopes = new Set(claims.scope.split(' ').filter(Boolean));
  // Shared by every request with the same token (the cache): nobody may change it.
  return Object.freeze({
    subject: claims.sub!,
    kind: claims.kind === 'client' ? 'client' : 'user',
    orgId: claims.org_id,
    clientId: claims.client_id,
    scopes,
    roles: Array.isArray(claims.roles) ? claims.roles.filter((role) => typeof role === 'string') : [],
    tokenId: claims.jti!,
    expiresAt: claims.exp! * 1000,
  });
}
