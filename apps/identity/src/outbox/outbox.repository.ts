import { randomUUID } from 'node:crypto';

import { Caller } from '@acct/access-token';
import { EventData, EventType } from '@acct/events';
import { currentRequestId } from '@acct/observability';
import { Injectable } from '@nestjs/common';

import { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../prisma/prisma.service';
import { Db } from '../prisma/transactions';

export interface OutboxRow {
  id: string;
  type: string;
  payload: Prisma.JsonValue;
}

const HAS_PENDING = 'SELECT EXISTS (SELECT 1 FROM outbox_events WHERE published_at IS NULL) AS pending';

@Injectable()
export class OutboxRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Writes an event in the caller's transaction: it exists exactly when the change it describes does.
   * `data` is typed by the event's schema in @acct/events (the one its consumers parse). `actor` is
   * the caller whose request caused it (auth's admin-action audit records it as `actor_id`).
   */
  async append<Type extends EventType>(
    db: Db,
    type: Type,
    data: EventData<Type>,
    occurredAt: Date,
    actor?: Pick<Caller, 'subject'>,
  ): Promise<string> {
    const id = randomUUID();
    // The request id travels with the event, so the consumers' log lines about it carry it too.
    const requestId = currentRequestId();
    const payload = {
      id,
      type,
      version: 1,
      occurred_at: occurredAt.toISOString(),
      ...(requestId ? { request_id: requestId } : {}),
      ...(actor?.subject ? { actor_id: actor.subject } : {}),
      data,
    };
    await db.outboxEvent.create({ data: { id, type, payload, createdAt: occurredAt } });
    return id;
  }

  /**
   * Makes this transaction the only one publishing until it ends: the relays of other instances wait
   * for it instead of taking the batch after its (SKIP LOCKED) and publishing both at once, which
   * would put the stream out of the order the events happened in (a user's deletion before its
   * creation, for the platform's Users count).
   */
  async lockForPublishing(db: Prisma.TransactionClient): Promise<void> {
    await db.$executeRaw`SELECT pg_advisory_xact_lock(hashtext('identity-outbox-relay'))`;
  }

  /**
   * The oldest unpublished events, locked for this relay (other instances skip them). An event whose
   * user was deleted since comes without its one-time token: its link died with the user (the
   * deletion took its tokens), and the mailer sends no mail without one, which would have brought a
   * dead link to an address that no longer has an account (the broker away while an admin deleted
   * a user created by mistake). The event itself stays, for its other consumers (the audit).
   */
  lockBatch(db: Prisma.TransactionClient, limit: number): Promise<OutboxRow[]> {
    return db.$queryRaw<OutboxRow[]>`
      SELECT id, type,
        CASE WHEN (payload->'data') ?| array['activation_token', 'token']
              AND NOT EXISTS (SELECT 1 FROM users WHERE users.id = (payload->'data'->>'user_id')::uuid)
          THEN jsonb_set(payload, '{data}', (payload->'data') - 'activation_token' - 'token')
          ELSE payload
        END AS payload
      FROM outbox_events
      WHERE published_at IS NULL
      ORDER BY created_at
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED`;
  }

  /**
   * Marks events published and drops one-time secrets from the stored copy: once the broker has the
   * event, the database need not keep the activation token.
   */
  async markPublished(db: Prisma.TransactionClient, ids: string[], at: Date): Promise<void> {
    await db.$executeRaw`
      UPDATE outbox_events
      SET published_at = ${at},
          payload = jsonb_set(payload, '{data}', (payload->'data') - 'activation_token' - 'token')
      WHERE id = ANY(${ids}::uuid[])`;
  }

  /**
   * Whether any event awaits publishing: one indexed read outside a transaction (on the pool, without
   * Prisma's runtime), the relay's look while it is idle, five times a second.
   */
  async hasPending(): Promise<boolean> {
    const [row] = await this.prisma.direct.query<{ pending: boolean }>(HAS_PENDING, []);
    return row?.pending === true;
  }

  /** Deletes up to `batch` events published at or before `before` (OutboxPruner); answers how many. */
  async prunePublished(before: Date, batch: number): Promise<number> {
    return this.prisma.$executeRaw`
      DELETE FROM outbox_events WHERE ctid = ANY(ARRAY(
        SELECT ctid FROM outbox_events WHERE published_at <= ${before} LIMIT ${batch}))`;
  }

  backlog(): Promise<number> {
    return this.prisma.outboxEvent.count({ where: { publishedAt: null } });
  }
}
