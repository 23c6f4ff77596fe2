import type Redis from 'ioredis';

import { inWriteBatches, parseBatch, Revocation } from './revocation';

/** The stream's key (under the client's REDIS_KEY_PREFIX). */
export const REVOCATION_STREAM = 'revocations';

/** Stream ids before this one are older than every entry: a full read starts here. */
export const FIRST_ID = '0-0';

const PAGE = 1000;

export interface LogPage {
  revocations: Revocation[];
  /** The id of the last stream entry read: the next incremental read starts after it. */
  lastId: string;
}

/**
 * The revocations in Redis: a stream, one entry per revoking call. The stream id (Redis time plus a
 * sequence) is the version a reader has caught up to, so a resync reads only what is newer. Entries
 * are trimmed (MINID) once older than the longest-lived token they can affect; readers also drop each
 * revocation at its own `expiresAt`.
 */
export class RedisRevocationLog {
  constructor(
    private readonly redis: Redis,
    /** How long after it is written an entry can still matter (ms). */
    private readonly retentionMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** One entry per WRITE_BATCH revocations, all in one transaction; answers the last entry's id. */
  async append(revocations: readonly Revocation[]): Promise<string> {
    const minId = `${Math.max(0, this.now() - this.retentionMs)}-0`;
    const transaction = this.redis.multi();
    for (const batch of inWriteBatches(revocations)) {
      transaction.xadd(REVOCATION_STREAM, 'MINID', '~', minId, '*', 'e', JSON.stringify(batch));
    }
    const results = (await transaction.exec()) ?? [];
    for (const [error] of results) if (error) throw error;
    const [, id] = results.at(-1) ?? [];
    return typeof id === 'string' ? id : '';
  }

  /** Everything after `afterId` (exclusive); FIRST_ID for the whole stream. */
  async readAfter(afterId: string): Promise<LogPage> {
    const revocations: Revocation[] = [];
    let lastId = afterId;
    for (;;) {
      const start = lastId === FIRST_ID ? '-' : `(${lastId}`;
      const entries = await this.redis.xrange(REVOCATION_STREAM, start, '+', 'COUNT', PAGE);
      for (const [id, fields] of entries) {
        lastId = id;
        const batch = fields[0] === 'e' ? parseBatch(fields[1] ?? '') : undefined;
        if (batch) revocations.push(...batch);
      }
      if (entries.length < PAGE) return { revocations, lastId };
    }
  }
}
