import { randomBytes } from 'node:crypto';

import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { Algorithm, hash, Options, verify } from '@node-rs/argon2';

import { IDENTITY_CONFIG, IdentityConfig } from '../config';

/** `Algorithm.Argon2id`: the package declares a const enum, which has no run-time value under SWC. */
const ARGON2ID = 2 as Algorithm;

export type Argon2Settings = Pick<IdentityConfig, 'ARGON2_MEMORY_KIB' | 'ARGON2_ITERATIONS' | 'ARGON2_PARALLELISM'>;

/**
 * argon2id password hashes (PHC strings). `verifyOrBurn` costs the same whether or not there is a
 * hash to check against, so a login for an unknown e-mail takes as long as one with a wrong password.
 */
@Injectable()
export class PasswordHasher implements OnModuleInit {
  private readonly logger = new Logger(PasswordHasher.name);
  private readonly options: Options;
  private dummyHash?: Promise<string>;

  constructor(@Inject(IDENTITY_CONFIG) settings: Argon2Settings) {
    this.options = {
      algorithm: ARGON2ID,
      memoryCost: settings.ARGON2_MEMORY_KIB,
      timeCost: settings.ARGON2_ITERATIONS,
      parallelism: settings.ARGON2_PARALLELISM,
    };
  }

  /** Computes the stand-in hash at start-up rather than on the first unknown login. */
  async onModuleInit() {
    await this.dummy();
  }

  hash(password: string): Promise<string> {
    return hash(password, this.options);
  }

  /** Whether `password` matches `passwordHash`; with no hash, burns the same work and says no. */
  async verifyOrBurn(passwordHash: string | null, password: string): Promise<boolean> {
    if (passwordHash === null) {
      await this.check(await this.dummy(), password);
      return false;
    }
    return this.check(passwordHash, password);
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
    this.dummyHash ??= hash(randomBytes(32).toString('base64url'), this.options);
    return this.dummyHash;
  }
}
