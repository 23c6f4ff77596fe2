import { announceOnce, Revocations } from '@acct/revocation';
import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { LRUCache } from 'lru-cache';

import { AUTH_CONFIG, AuthConfig } from '../config';
import type { OAuthClient } from './client.repository';

/** The notice topic (on the revocations' NATS connection) that drops a client from every cache. */
export const CLIENT_NOTICE_TOPIC = 'clients';
const MAX_CLIENTS = 1000;

/** How the client repository reads clients for authentication and reports changes to them. */
export interface ClientLookups {
  get(clientId: string, load: () => Promise<OAuthClient | null>): Promise<OAuthClient | null>;
  /** After a change is committed. */
  changed(clientId: string): void | Promise<void>;
}

/**
 * Registered clients as token requests read them, kept in memory for CLIENT_CACHE_TTL_MS (1 s): a
 * client's token requests mostly cost no database read. A change (secret rotated, client deleted)
 * drops the entry in this process at once and in every other auth process on a NATS notice (the
 * revocations' connection), within milliseconds; when a notice is lost, the TTL bounds the staleness,
 * as the revocations' 1 s. A read that began before a change never stores what it read.
 */
@Injectable()
export class ClientCache implements OnModuleInit, ClientLookups {
  private readonly entries: LRUCache<string, OAuthClient>;
  /** Bumped by every change: a read that saw another generation stores nothing. */
  private generation = 0;

  constructor(
    private readonly revocations: Revocations,
    @Inject(AUTH_CONFIG) config: AuthConfig,
  ) {
    this.entries = new LRUCache<string, OAuthClient>({ max: MAX_CLIENTS, ttl: config.CLIENT_CACHE_TTL_MS });
  }

  onModuleInit() {
    void this.revocations.onNotice(CLIENT_NOTICE_TOPIC, (clientId) => this.forget(clientId));
  }

  /** The client from memory, else from `load` (stored for next time when found). */
  async get(clientId: string, load: () => Promise<OAuthClient | null>): Promise<OAuthClient | null> {
    const cached = this.entries.get(clientId);
    if (cached) return cached;
    const generation = this.generation;
    const client = await load();
    if (client && generation === this.generation) this.entries.set(clientId, Object.freeze(client));
    return client;
  }

  /** After a change is committed: here at once, everywhere else by the notice. */
  changed(clientId: string): void {
    this.forget(clientId);
    this.revocations.announce(CLIENT_NOTICE_TOPIC, clientId);
  }

  private forget(clientId: string): void {
    this.generation += 1;
    this.entries.delete(clientId);
  }
}

/**
 * For the operator CLI, which changes clients in the database directly: no cache; a change is
 * announced to the running auth processes' caches (their TTL covers a notice NATS could not take).
 */
export function cliClientLookups(
  config: Pick<AuthConfig, 'NATS_URL' | 'REDIS_KEY_PREFIX'>,
  warn: (message: string) => void,
): ClientLookups {
  return {
    get: (_clientId, load) => load(),
    changed: (clientId) =>
      announceOnce(
        { natsUrl: config.NATS_URL, keyPrefix: config.REDIS_KEY_PREFIX, name: 'auth-cli' },
        CLIENT_NOTICE_TOPIC,
        clientId,
      ).catch((error: Error) =>
        warn(
          `running auth processes not told of the change (${error.message}); they notice within CLIENT_CACHE_TTL_MS`,
        ),
      ),
  };
}
