import { AuthConfig } from '../config';
import { KeyEncryption } from '../keys/key-encryption';
import { TotpSecrets } from '../mfa/totp-secrets';
import { PrismaService } from '../prisma/prisma.service';

/** TOTP factors read and resealed per round trip. */
const BATCH = 500;

export interface ResealReport {
  /** Values moved under the current key (those already under it are left alone). */
  signingKeys: number;
  totpSecrets: number;
  /** What neither AUTH_KEY_ENCRYPTION_KEY nor AUTH_KEY_ENCRYPTION_KEY_PREVIOUS decrypts. */
  unreadable: string[];
}

/**
 * Moves every secret auth keeps encrypted at rest (private signing keys, TOTP secrets) under the
 * current AUTH_KEY_ENCRYPTION_KEY, reading them under AUTH_KEY_ENCRYPTION_KEY_PREVIOUS: the step of a
 * key change after which the previous key can be dropped (docs/runbook.md). A value is replaced only
 * while it is still the one read, so it runs beside serving instances: one they wrote meanwhile (an
 * enrolment, a rotation) is under the current key already. Run again, it changes nothing.
 */
export class SecretResealer {
  private readonly keys: KeyEncryption;
  private readonly totp: TotpSecrets;

  constructor(
    private readonly prisma: PrismaService,
    config: AuthConfig,
  ) {
    this.keys = new KeyEncryption(config.AUTH_KEY_ENCRYPTION_KEY, config.AUTH_KEY_ENCRYPTION_KEY_PREVIOUS);
    this.totp = new TotpSecrets(config);
  }

  async resealAll(): Promise<ResealReport> {
    const report: ResealReport = { signingKeys: 0, totpSecrets: 0, unreadable: [] };
    const keys = await this.prisma.signingKey.findMany({ select: { kid: true, privateKeyPem: true } });
    for (const { kid, privateKeyPem } of keys) {
      const resealed = attempt(() => this.keys.reseal(privateKeyPem, kid), `signing key ${kid}`, report);
      if (resealed === undefined) continue;
      const { count } = await this.prisma.signingKey.updateMany({
        where: { kid, privateKeyPem },
        data: { privateKeyPem: resealed },
      });
      report.signingKeys += count;
    }
    for (let after = ''; ;) {
      const factors = await this.prisma.mfaTotp.findMany({
        where: after ? { userId: { gt: after } } : {},
        select: { userId: true, secret: true },
        orderBy: { userId: 'asc' },
        take: BATCH,
      });
      for (const { userId, secret } of factors) {
        const resealed = attempt(() => this.totp.reseal(secret, userId), `the TOTP secret of user ${userId}`, report);
        if (resealed === undefined) continue;
        const { count } = await this.prisma.mfaTotp.updateMany({
          where: { userId, secret },
          data: { secret: resealed },
        });
        report.totpSecrets += count;
      }
      if (factors.length < BATCH) return report;
      after = factors[factors.length - 1].userId;
    }
  }
}

/** `reseal`'s answer, or undefined with `what` noted as unreadable. */
function attempt(reseal: () => string | undefined, what: string, report: ResealReport): string | undefined {
  try {
    return reseal();
  } catch {
    report.unreadable.push(what);
    return undefined;
  }
}
