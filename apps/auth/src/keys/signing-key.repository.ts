import { Injectable } from '@nestjs/common';
import type { JWK } from 'jose';

import { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../prisma/prisma.service';

/** A signing key as stored: the private key only in its encrypted form. */
export interface StoredSigningKey {
  kid: string;
  algorithm: string;
  encryptedPrivateKey: string;
  publicJwk: JWK;
  createdAt: Date;
  retiredAt: Date | null;
}

export type NewSigningKey = Omit<StoredSigningKey, 'retiredAt'>;

/**
 * `signing_keys`. Every change to which key is active happens under one transaction-scoped advisory
 * lock, so auth instances starting or rotating at the same moment never leave two active keys.
 */
@Injectable()
export class SigningKeyRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Keys that verify tokens at `at`: the active ones, and those retired after `retiredSince`. */
  async findPublished(retiredSince: Date): Promise<StoredSigningKey[]> {
    const rows = await this.prisma.signingKey.findMany({
      where: { OR: [{ retiredAt: null }, { retiredAt: { gt: retiredSince } }] },
      orderBy: { createdAt: 'desc' },
    });
    return rows.map(toStored);
  }

  /** Inserts the key `create` makes unless an active key exists already. Returns whether it did. */
  ensureActive(create: () => Promise<NewSigningKey>): Promise<boolean> {
    return this.underKeyLock(async (tx) => {
      if (await tx.signingKey.findFirst({ where: { retiredAt: null }, select: { kid: true } })) return false;
      await tx.signingKey.create({ data: toRow(await create()) });
      return true;
    });
  }

  /**
   * Makes `key` the only active key; the previous ones are retired at `retiredAt`, or with `withdraw`
   * deleted, retired ones still published included: they verify nothing from then on. Answers the
   * kids deleted.
   */
  replaceActive(key: NewSigningKey, retiredAt: Date, withdraw = false): Promise<string[]> {
    return this.underKeyLock(async (tx) => {
      const withdrawn = withdraw ? await tx.signingKey.findMany({ select: { kid: true } }) : [];
      if (withdraw) await tx.signingKey.deleteMany({});
      else await tx.signingKey.updateMany({ where: { retiredAt: null }, data: { retiredAt } });
      await tx.signingKey.create({ data: toRow(key) });
      return withdrawn.map((row) => row.kid);
    });
  }

  private underKeyLock<T>(work: (tx: Prisma.TransactionClient) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext('auth'), hashtext('signing_keys'))`;
      return work(tx);
    });
  }
}

const toRow = (key: NewSigningKey) => ({
  kid: key.kid,
  algorithm: key.algorithm,
  privateKeyPem: key.encryptedPrivateKey,
  publicJwk: key.publicJwk as unknown as Prisma.InputJsonObject,
  createdAt: key.createdAt,
});

function toStored(row: {
  kid: string;
  algorithm: string;
  privateKeyPem: string;
  publicJwk: Prisma.JsonValue;
  createdAt: Date;
  retiredAt: Date | null;
}): StoredSigningKey {
  return {
    kid: row.kid,
    algorithm: row.algorithm,
    encryptedPrivateKey: row.privateKeyPem,
    publicJwk: row.publicJwk as unknown as JWK,
    createdAt: row.createdAt,
    retiredAt: row.retiredAt,
  };
}
