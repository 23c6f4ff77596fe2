import { AccessTokenVerifier, bearerToken, Caller } from '@acct/access-token';
import { STANDARD_TIERS } from '@acct/limits';
import { DomainError } from '@acct/problem';
import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';

import { GATEWAY_VERIFIER } from '../auth/auth.guard';
import type { AuthenticatedRequest } from '../auth/authenticated-request';
import { sendProblem } from '../http/problem';
import { ApiUsageCounter } from './api-usage';
import { RateLimitDecision, RateLimiter } from './rate-limiter';
import { groupOf } from './route-groups';
import { TierCache } from './tier-cache';

export const RATE_LIMITER = Symbol('RATE_LIMITER');
export const API_USAGE = Symbol('API_USAGE');

/**
 * Runs first for every request (Fastify onRequest): finds the endpoint group and the caller, takes a
 * token from the right bucket, sets the rate-limit headers every response carries, and answers 429
 * when the bucket is empty.
 */
@Injectable()
export class RateLimitHook {
  constructor(
    private readonly tiers: TierCache,
    @Inject(RATE_LIMITER) private readonly limiter: RateLimiter,
    @Inject(API_USAGE) private readonly usage: ApiUsageCounter,
    @Inject(GATEWAY_VERIFIER) private readonly verifier: AccessTokenVerifier,
  ) {}

  async handle(request: FastifyRequest, reply: FastifyReply) {
    const group = groupOf(request.method, request.routeOptions.url);
    const caller = await this.callerOf(request);
    const tiers = await this.tiers.tiersOf(caller?.orgId);
    const tier = tiers.find((candidate) => candidate.group === group) ??
      STANDARD_TIERS.find((candidate) => candidate.group === group) ?? { ...STANDARD_TIERS.at(-1)!, group };
    // A per-token group without a valid token is counted per IP (contract §2).
    const key = tier.scope === 'per-token' && caller ? `token:${caller.tokenId}` : `ip:${request.ip}`;
    const decision = await this.limiter.take(tier, key);
    setRateLimitHeaders(reply, tier.group, decision);
    if (caller) this.usage.count(caller.orgId);
    if (!decision.allowed) {
      return sendProblem(
        request,
        reply,
        new DomainError('rate_limited', `Too many requests in the ${tier.group} group; retry later.`, {
          retryAfter: Math.max(1, Math.ceil(decision.msUntilToken / 1000)),
        }),
      );
    }
  }

  /** The caller of a valid bearer token, remembered for the AuthGuard; none for a missing or bad one. */
  private async callerOf(request: FastifyRequest): Promise<Caller | undefined> {
    const token = bearerToken(request.headers.authorization);
    if (!token) return undefined;
    try {
      const caller = await this.verifier.verify(token);
      Object.assign(request as Partial<AuthenticatedRequest>, { caller, accessToken: token });
      return caller;
    } catch {
      return undefined;
    }
  }
}

/** Contract §2's X-RateLimit-* headers, and the IETF draft's RateLimit-Policy / RateLimit beside them. */
export function setRateLimitHeaders(reply: FastifyReply, group: string, decision: RateLimitDecision) {
  const limit = Math.floor(decision.capacity);
  const resetAt = Math.ceil((decision.now + decision.msUntilFull) / 1000);
  const windowSeconds = Math.max(1, Math.ceil(decision.windowMs / 1000));
  void reply
    .header('X-RateLimit-Limit', String(limit))
    .header('X-RateLimit-Remaining', String(decision.remaining))
    .header('X-RateLimit-Reset', String(resetAt))
    .header('RateLimit-Policy', `"${group}";q=${limit};w=${windowSeconds}`)
    .header(
      'RateLimit',
      `"${group}";r=${decision.remaining};t=${Math.max(0, Math.ceil(decision.msUntilToken / 1000))}`,
    );
}
