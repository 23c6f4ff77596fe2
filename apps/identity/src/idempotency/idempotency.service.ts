import { Clock } from '@acct/clock';
import { DomainError, validationFailed } from '@acct/problem';
import { Injectable, Logger } from '@nestjs/common';

import { newId } from '../ids';
import { Db } from '../prisma/transactions';
import { IdempotencyRepository, KeyRef } from './idempotency.repository';
import {
  CLAIM_LEASE_MS,
  decide,
  IDEMPOTENCY_WINDOW_MS,
  idempotencyKeyProblem,
  isStoredFailure,
  StoredOutcome,
} from './idempotency-rules';

export interface IdempotentCall extends KeyRef {
  /** Identifies the request: the same key with another fingerprint is refused. */
  fingerprint: string;
}

/** How one operation's success is stored and read back. */
export interface OutcomeCodec<T> {
  /** The status the success answers with (201 for a creation). */
  successStatus: number;
  encode(value: T): unknown;
  /** Reads a stored success back; throws if it is not one. */
  decode(body: unknown): T;
}

/** The held key, handed to the work so it can complete the key inside its own transaction. */
export interface Claim<T> {
  complete(value: T, db: Db): Promise<void>;
}

/** For work done without an idempotency key: completing is a no-op. */
export const NO_CLAIM: Claim<never> = { complete: () => Promise.resolve() };

export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';

const MAX_CLAIM_ATTEMPTS = 3;

/** The first request is still running: the client may ask again in a second (for its stored answer). */
const inUse = () =>
  new DomainError('idempotency_key_in_use', 'A request with this Idempotency-Key is still being processed.', {
    retryAfter: 1,
  });

/**
 * Contract §3 Idempotency-Key: the key is claimed atomically before the work; the first request's
 * outcome (success or 4xx) is stored and answered again, marked replayed, for 24 hours.
 */
@Injectable()
export class IdempotencyService {
  private readonly logger = new Logger(IdempotencyService.name);

  constructor(
    private readonly keys: IdempotencyRepository,
    private readonly clock: Clock,
  ) {}

  /** Throws `validation_failed` when `key` is not a valid Idempotency-Key. */
  private assertValidKey(key: string): void {
    const problem = idempotencyKeyProblem(key);
    if (problem) throw validationFailed([{ field: 'Idempotency-Key', message: problem }]);
  }

  async run<T>(
    call: IdempotentCall,
    codec: OutcomeCodec<T>,
    work: (claim: Claim<T>) => Promise<T>,
  ): Promise<{ value: T; replayed: boolean }> {
    this.assertValidKey(call.key);
    const acquired = await this.acquire(call);
    if (acquired.kind === 'replay') return { value: replay(acquired.outcome, codec), replayed: true };
    const claim = new HeldClaim(this.keys, this.clock, call, acquired.claimToken, codec);
    try {
      const value = await work(claim);
      if (!claim.completed) await claim.complete(value, undefined);
      return { value, replayed: false };
    } catch (error) {
      await this.settleFailure(call, acquired.claimToken, error);
      throw error;
    }
  }

  private async acquire(
    call: IdempotentCall,
  ): Promise<{ kind: 'claimed'; claimToken: string } | { kind: 'replay'; outcome: StoredOutcome }> {
    for (let attempt = 0; attempt < MAX_CLAIM_ATTEMPTS; attempt += 1) {
      const now = this.clock.date();
      const claimToken = newId();
      const lockedUntil = new Date(now.getTime() + CLAIM_LEASE_MS);
      const expiresAt = new Date(now.getTime() + IDEMPOTENCY_WINDOW_MS);
      if (
        await this.keys.insertClaim(call, { fingerprint: call.fingerprint, claimToken, now, lockedUntil, expiresAt })
      ) {
        return { kind: 'claimed', claimToken };
      }
      const existing = await this.keys.find(call);
      if (!existing) continue; // deleted in between: claim again
      const decision = decide(existing, call.fingerprint, now);
      switch (decision.action) {
        case 'expired':
          await this.keys.deleteIfExpired(call, now);
          continue;
        case 'take_over':
          if (await this.keys.takeOver(call, existing.claimToken, claimToken, lockedUntil)) {
            this.logger.warn('took over an abandoned idempotency key');
            return { kind: 'claimed', claimToken };
          }
          continue;
        case 'reused':
          throw new DomainError(
            'idempotency_key_reused',
            'This Idempotency-Key was already used for a different request; use a new key.',
          );
        case 'in_use':
          throw inUse();
        case 'replay':
          return { kind: 'replay', outcome: decision.outcome };
      }
    }
    throw inUse();
  }

  /** A 4xx is stored and answered again; anything else releases the key so a retry can proceed. */
  private async settleFailure(call: IdempotentCall, claimToken: string, error: unknown): Promise<void> {
    try {
      if (isStoredFailure(error)) {
        await this.keys.complete(
          call,
          claimToken,
          { status: error.status, body: error.toPayload() },
          this.clock.date(),
        );
      } else {
        await this.keys.release(call, claimToken);
      }
    } catch (storeError) {
      this.logger.warn(`could not settle an idempotency key: ${String(storeError)}`);
      await this.keys.release(call, claimToken).catch(() => undefined);
    }
  }
}

class HeldClaim<T> implements Claim<T> {
  completed = false;

  constructor(
    private readonly keys: IdempotencyRepository,
    private readonly clock: Clock,
    private readonly call: IdempotentCall,
    private readonly claimToken: string,
    private readonly codec: OutcomeCodec<T>,
  ) {}

  async complete(value: T, db: Db | undefined): Promise<void> {
    const outcome = { status: this.codec.successStatus, body: this.codec.encode(value) };
    if (!(await this.keys.complete(this.call, this.claimToken, outcome, this.clock.date(), db))) {
      // Our claim was taken over after its lease ran out: give way (the transaction rolls back).
      throw inUse();
    }
    this.completed = true;
  }
}

/** The first request's answer again: its value, or its error marked `Idempotent-Replayed: true`. */
function replay<T>(outcome: StoredOutcome, codec: OutcomeCodec<T>): T {
  if (outcome.status < 400) return codec.decode(outcome.body);
  const error = DomainError.fromPayload(outcome.body);
  if (!error) throw new Error('a stored idempotent outcome is not readable');
  throw new DomainError(error.code, error.detail, {
    ...error.options,
    headers: { ...error.options.headers, [IDEMPOTENT_REPLAYED_HEADER]: 'true' },
  });
}
