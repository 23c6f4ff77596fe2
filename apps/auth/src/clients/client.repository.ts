import { Inject, Injectable } from '@nestjs/common';

import { PrismaService } from '../prisma/prisma.service';
import { ClientCache, ClientLookups } from './client-cache';

export type ClientType = 'confidential' | 'public';

/** A registered OAuth client (no Prisma type leaves this file). */
export interface OAuthClient {
  id: string;
  orgId: string;
  name: string;
  type: ClientType;
  /** Null for a public client: it has no secret. */
  secretHash: string | null;
  grantTypes: string[];
  redirectUris: string[];
  scopes: string[];
  roles: string[];
}

/** What `list-clients` shows: everything but the secret's hash. */
export type ClientSummary = Omit<OAuthClient, 'secretHash'> & { createdAt: Date };

export type NewOAuthClient = OAuthClient;

const BOOTSTRAP = 'bootstrap';

const fields = {
  id: true,
  orgId: true,
  name: true,
  type: true,
  secretHash: true,
  grantTypes: true,
  redirectUris: true,
  scopes: true,
  roles: true,
} as const;

const asClient = <T extends { type: string }>(row: T | null) =>
  row ? { ...row, type: row.type === 'public' ? ('public' as const) : ('confidential' as const) } : null;

/** `clients`. */
@Injectable()
export class ClientRepository {
  constructor(
    private readonly prisma: PrismaService,
    @Inject(ClientCache) private readonly cache: ClientLookups,
  ) {}

  /**
   * Client ids are global: a client authenticates before anyone knows its org. From memory when read
   * within the last CLIENT_CACHE_TTL_MS and not changed since (ClientCache).
   */
  findForAuthentication(clientId: string): Promise<OAuthClient | null> {
    return this.cache.get(clientId, () => this.findFresh(clientId));
  }

  /** The client as stored now (for changes to it). */
  async findFresh(clientId: string): Promise<OAuthClient | null> {
    return asClient(await this.prisma.client.findUnique({ where: { id: clientId }, select: fields }));
  }

  async create(client: NewOAuthClient): Promise<void> {
    await this.prisma.client.create({ data: client });
  }

  /**
   * Creates the org's bootstrap client unless it has one already (ON CONFLICT DO NOTHING on the
   * (org, purpose) key, so concurrent calls create one). Returns whether this call created it.
   */
  async createBootstrapIfAbsent(client: NewOAuthClient): Promise<boolean> {
    const { count } = await this.prisma.client.createMany({
      data: [{ ...client, purpose: BOOTSTRAP }],
      skipDuplicates: true,
    });
    return count === 1;
  }

  async findBootstrap(orgId: string): Promise<OAuthClient | null> {
    return asClient(
      await this.prisma.client.findUnique({ where: { orgId_purpose: { orgId, purpose: BOOTSTRAP } }, select: fields }),
    );
  }

  /** False when the client is gone (deleted since it was read). */
  async replaceSecret(orgId: string, clientId: string, secretHash: string): Promise<boolean> {
    const { count } = await this.prisma.client.updateMany({ where: { id: clientId, orgId }, data: { secretHash } });
    await this.cache.changed(clientId);
    return count === 1;
  }

  /** The org's clients, oldest first. */
  async list(orgId: string): Promise<ClientSummary[]> {
    const { secretHash: _secretHash, ...summary } = fields;
    const rows = await this.prisma.client.findMany({
      where: { orgId },
      select: { ...summary, createdAt: true },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    });
    return rows.map((row) => asClient(row)!);
  }

  /** Whether a client was deleted. */
  async delete(clientId: string): Promise<boolean> {
    const { count } = await this.prisma.client.deleteMany({ where: { id: clientId } });
    await this.cache.changed(clientId);
    return count === 1;
  }
}
