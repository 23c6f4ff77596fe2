import { randomBytes } from 'node:crypto';

import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { argon2id, hash, HashOptions, needsRehash, verify } from 'argon2';

import { IDENTITY_CONFIG, IdentityConfig } from '../config';

export type Argon2Settings = Pick<IdentityConfig, 'ARGON2_MEMORY_KIB' | 'ARGON2_ITERATIONS' | 'ARGON2_PARALLELISM'>;

/**
 * argon2id password hashes (PHC strings; the `argon2` package: 16-byte salt, 32-byte hash, the same
 * format as the `@node-rs/argon2` hashes stored before, which still verify). `verifyOrBurn` costs the
 * same whether or not there is a hash to check against, so a login for an unknown e-mail takes as long
 * as one with a wrong password.
 */
@Injectable()
export class PasswordHasher implements OnModuleInit {
  private readonly logger = new Logger(PasswordHasher.name);
  private readonly options: HashOptions & { raw?: false };
  private dummyHash?: Promise<string>;

  constructor(@Inject(IDENTITY_CONFIG) settings: Argon2Settings) {
    this.options = {
      type: argon2id,
      memoryCost: settings.ARGON2_MEMORY_KIB,
      timeCost: settings.ARGON2_ITERATIONS,
      parallelism: settings.ARGON2_PARALLELISM,
    };
  }

  /** Computes the stand-in hash at start-up rather than on the first unknown login. */
  async onModuleInit() {
    await this.dummy();
  }

  async hash(password: string): Promise<string> {
    return canonicalPhc(await hash(password, this.options));
  }

  /** Whether `password` matches `passwordHash`; with no hash, burns the same work and says no. */
  async verifyOrBurn(passwordHash: string | null, password: string): Promise<boolean> {
    if (passwordHash === null) {
      await this.check(await this.dummy(), password);
      return false;
    }
    return this.check(passwordHash, password);
  }

  /**
   * Whether a stored hash was made otherwise than `hash` would make it now (another argon2 variant, or
   * other costs: ARGON2_* changed since, or a hash of the library used before): rehashed at its next
   * correct check, so every password reaches the configured cost and costs a wrong password's check
   * what it costs an unknown username's (the dummy hash has the configured cost).
   */
  isOutdated(passwordHash: string): boolean {
    if (!passwordHash.startsWith('$argon2id$')) return true;
    try {
      return needsRehash(passwordHash, {
        memoryCost: this.options.memoryCost,
        timeCost: this.options.timeCost,
        parallelism: this.options.parallelism,
      });
    } catch {
      return true;
    }
  }

  private async check(passwordHash: string, password: string): Promise<boolean> {
    try {
      return await verify(passwordHash, password);
    } catch (error) {
      this.logger.error(`unreadable password hash: ${error instanceof Error ? error.message : String(error)}`);
      return false;
    }
  }

  /** A hash of a random secret nobody knows, made once with the current parameters. */
  private dummy(): Promise<string> {
    this.dummyHash ??= this.hash(randomBytes(32).toString('base64url'));
    return this.dummyHash;
  }
}

/**
 * The PHC string with its parameters in the reference order `m=…,t=…,p=…` (the `argon2` package
 * writes them sorted by name, `m,p,t`, which the reference implementation's decoder and other
 * libraries refuse), so stored hashes read exactly as those written before and stay portable.
 */
export function canonicalPhc(phc: string): string {
  return phc.replace(/\$((?:[mpt]=\d+,){2}[mpt]=\d+)\$/, (_whole, params: string) => {
    const byName = new Map(params.split(',').map((param) => param.split('=') as [string, string]));
    return `$m=${byName.get('m')},t=${byName.get('t')},p=${byName.get('p')}$`;
  });
}
