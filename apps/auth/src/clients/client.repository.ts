import { Injectable } from '@nestjs/common';

import { PrismaService } from '../prisma/prisma.service';

/** A registered OAuth client (no Prisma type leaves this file). */
export interface OAuthClient {
  id: string;
  orgId: string;
  name: string;
  secretHash: string;
  grantTypes: string[];
  scopes: string[];
  roles: string[];
}

export type NewOAuthClient = OAuthClient;

const BOOTSTRAP = 'bootstrap';

const fields = {
  id: true,
  orgId: true,
  name: true,
  secretHash: true,
  grantTypes: true,
  scopes: true,
  roles: true,
} as const;

/** `clients`. */
@Injectable()
export class ClientRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Client ids are global: a client authenticates before anyone knows its org. */
  findForAuthentication(clientId: string): Promise<OAuthClient | null> {
    return this.prisma.client.findUnique({ where: { id: clientId }, select: fields });
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

  findBootstrap(orgId: string): Promise<OAuthClient | null> {
    return this.prisma.client.findUnique({ where: { orgId_purpose: { orgId, purpose: BOOTSTRAP } }, select: fields });
  }

  async replaceSecret(orgId: string, clientId: string, secretHash: string): Promise<void> {
    const { count } = await this.prisma.client.updateMany({ where: { id: clientId, orgId }, data: { secretHash } });
    if (count !== 1) throw new Error(`client ${clientId} of org ${orgId} not found`);
  }
}
