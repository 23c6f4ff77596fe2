import { ACCESS_TOKEN_TYPE, SIGNING_ALGORITHM } from '@acct/access-token';
import { Clock } from '@acct/clock';
import { ReadinessCheck, valueWithin } from '@acct/observability';
import { DomainError } from '@acct/problem';
import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { createSigner } from 'fast-jwt';
import { calculateJwkThumbprint, exportJWK, exportPKCS8, generateKeyPair, JWK } from 'jose';

import { AUTH_CONFIG, AuthConfig } from '../config';
import { KeyEncryption } from './key-encryption';
import { NewSigningKey, SigningKeyRepository, StoredSigningKey } from './signing-key.repository';

/** A retired key stays published this long after the last token it may have signed expires. */
export const RETIRED_KEY_MARGIN_MS = 60_000;
/** GetJwks rereads the keys when its copy is older than this, so a rotation elsewhere shows at once. */
const JWKS_MAX_AGE_MS = 1000;

/** A public key as published in the JWKS (RFC 7517), EC P-256 only. */
export interface PublishedKey {
  kty: string;
  kid: string;
  use: 'sig';
  alg: typeof SIGNING_ALGORITHM;
  crv: string;
  x: string;
  y: string;
}

/** What a rotation did: the key that signs from now on, and the keys it withdrew (none unless asked). */
export interface Rotation {
  kid: string;
  withdrawn: string[];
}

/** The active key, named by `kid`: signs an access token (`typ: at+jwt`) of the given claims, synchronously. */
export interface Signer {
  kid: string;
  sign(claims: Record<string, unknown>): string;
}

/**
 * The ES256 keys that sign access tokens. Exactly one key is active (it signs); after a rotation the
 * previous one stays published until every token it signed has expired. Keys are cached and reread
 * on an interval, so every instance follows a rotation made by another. Private keys never leave
 * this class (and are never logged); they are stored encrypted.
 */
@Injectable()
export class SigningKeyService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(SigningKeyService.name);
  private readonly encryption: KeyEncryption;
  private signer?: Signer;
  private published: PublishedKey[] = [];
  private loadedAt = 0;
  private loading?: Promise<void>;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly repository: SigningKeyRepository,
    private readonly clock: Clock,
    @Inject(AUTH_CONFIG) private readonly config: AuthConfig,
  ) {
    this.encryption = new KeyEncryption(config.AUTH_KEY_ENCRYPTION_KEY, config.AUTH_KEY_ENCRYPTION_KEY_PREVIOUS);
  }

  /** Makes sure a key exists before the first call; a database that is down is retried on the interval. */
  async onModuleInit() {
    await this.reload().catch((error: unknown) => this.logger.warn(`signing keys not loaded yet: ${describe(error)}`));
    this.timer = setInterval(
      () =>
        void this.reload().catch((error: unknown) => this.logger.warn(`signing keys not reloaded: ${describe(error)}`)),
      this.config.SIGNING_KEY_RELOAD_MS,
    );
    this.timer.unref();
  }

  onModuleDestroy() {
    clearInterval(this.timer);
  }

  get ready(): boolean {
    return this.signer !== undefined;
  }

  /** The key to sign with now. */
  async currentSigner(): Promise<Signer> {
    if (!this.signer) await this.reload().catch((error: unknown) => this.logger.warn(describe(error)));
    if (!this.signer) throw unavailable();
    return this.signer;
  }

  /** The public keys that verify tokens issued now or still within their lifetime. */
  async publishedKeys(): Promise<PublishedKey[]> {
    if (Date.now() - this.loadedAt > JWKS_MAX_AGE_MS) {
      // A slightly stale set beats none while the database is away.
      await this.reload().catch((error: unknown) => {
        this.logger.warn(`signing keys not reloaded: ${describe(error)}`);
        if (this.published.length === 0) throw unavailable();
      });
    }
    return this.published;
  }

  /**
   * A new key takes over signing; the previous one is retired now and stays published until the tokens
   * it signed have expired, so nobody is signed out. With `withdrawPrevious` (the old private key may
   * have leaked: whoever holds it can sign any claims, for any user and org, while it is published) the
   * previous keys are withdrawn at once instead: every token they signed is refused from then on (each
   * verifier as soon as the caller announces `withdrawn`, else within a minute, as it reads the key set
   * again), and clients refresh. Answers the new key's kid and the kids withdrawn.
   */
  async rotate({ withdrawPrevious = false }: { withdrawPrevious?: boolean } = {}): Promise<Rotation> {
    // The instances sign with the active key, so it is under their AUTH_KEY_ENCRYPTION_KEY: one this
    // process cannot decrypt means it holds another (a typo), and the new key would be one no instance
    // can sign with. Refused, changing nothing; a withdrawal (after the key was changed) goes on.
    if (!withdrawPrevious) await this.reload();
    const key = await this.generate();
    const withdrawn = await this.repository.replaceActive(key, new Date(this.clock.now()), withdrawPrevious);
    this.logger.log(
      `signing key rotated; ${key.kid} now signs${withdrawPrevious ? ', the previous keys withdrawn' : ''}`,
    );
    await this.reloadAfterChange();
    return { kid: key.kid, withdrawn };
  }

  /** Rereads the keys after a change made elsewhere, or by `rotate`. */
  async reloadAfterChange(): Promise<void> {
    // A read that began before the change would bring back the old key: let it end, then read again.
    await this.loading?.catch(() => undefined);
    await this.reload();
  }

  /** Rereads the keys (creating the first one if there is none); concurrent callers share one read. */
  reload(): Promise<void> {
    this.loading ??= this.load().finally(() => (this.loading = undefined));
    return this.loading;
  }

  private async load() {
    let keys = await this.repository.findPublished(this.publishedSince());
    if (!keys.some((key) => key.retiredAt === null)) {
      if (await this.repository.ensureActive(() => this.generate())) this.logger.log('created the first signing key');
      keys = await this.repository.findPublished(this.publishedSince());
    }
    const active = keys.find((key) => key.retiredAt === null);
    if (!active) throw new Error('no active signing key');
    // Published as stored, whether or not this instance can sign with the active key: a key withdrawn
    // or expired elsewhere leaves this instance's key set too.
    this.published = keys.map((key) => publish(key.publicJwk, key.kid));
    this.loadedAt = Date.now();
    // The key is decrypted and its signer made once, not on every reread. Only the active key signs:
    // one made under another AUTH_KEY_ENCRYPTION_KEY leaves this instance without a signer (unready,
    // 503), as it would start, rather than signing on with a key retired or withdrawn since.
    if (this.signer?.kid !== active.kid) {
      this.signer = undefined;
      this.signer = this.signerOf(active);
    }
  }

  /** Tokens live ACCESS_TOKEN_TTL_SECONDS; a key retired before this instant signed none still valid. */
  private publishedSince(): Date {
    return new Date(this.clock.now() - this.config.ACCESS_TOKEN_TTL_SECONDS * 1000 - RETIRED_KEY_MARGIN_MS);
  }

  /**
   * fast-jwt signs with node:crypto on the calling thread. jose (which makes the keys and verifies)
   * signs through libuv's thread pool, and that hop cost auth as much CPU as the ES256 signature itself
   * (README, Benchmarks). The claims are given in full (`iat` and `exp` too): fast-jwt adds none of its own.
   */
  private signerOf(key: StoredSigningKey): Signer {
    const sign = createSigner({
      key: this.encryption.decrypt(key.encryptedPrivateKey, key.kid),
      algorithm: SIGNING_ALGORITHM,
      kid: key.kid,
      header: { alg: SIGNING_ALGORITHM, typ: ACCESS_TOKEN_TYPE },
    });
    return { kid: key.kid, sign };
  }

  private async generate(): Promise<NewSigningKey> {
    const { privateKey, publicKey } = await generateKeyPair(SIGNING_ALGORITHM, { extractable: true });
    const jwk = await exportJWK(publicKey);
    // RFC 7638 thumbprint: a kid that names the key itself.
    const kid = await calculateJwkThumbprint(jwk, 'sha256');
    return {
      kid,
      algorithm: SIGNING_ALGORITHM,
      encryptedPrivateKey: this.encryption.encrypt(await exportPKCS8(privateKey), kid),
      publicJwk: publish(jwk, kid),
      createdAt: new Date(this.clock.now()),
    };
  }
}

function publish(jwk: JWK, kid: string): PublishedKey {
  return {
    kty: jwk.kty ?? 'EC',
    kid,
    use: 'sig',
    alg: SIGNING_ALGORITHM,
    crv: jwk.crv ?? 'P-256',
    x: jwk.x ?? '',
    y: jwk.y ?? '',
  };
}

const unavailable = () =>
  new DomainError('service_unavailable', 'The signing keys are unavailable; retry shortly.', { retryAfter: 1 });

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** How long a readiness probe waits for the keys it asked for (under the probes' 3 s timeout, k8s/base). */
const READINESS_RELOAD_WAIT_MS = 1000;

/**
 * Ready once a signing key is loaded: before that no token can be issued. Until then the probe itself
 * asks for the keys: an unready instance gets no calls that would (a token grant, the JWKS), so after
 * a database outage at its start it stayed unready until the next reload (SIGNING_KEY_RELOAD_MS, 30 s)
 * although the database was back.
 */
@Injectable()
export class SigningKeyReadiness implements ReadinessCheck {
  readonly name = 'signing_keys';
  constructor(private readonly keys: SigningKeyService) {}

  async check(): Promise<void> {
    if (!this.keys.ready) {
      await valueWithin(
        this.keys.reload().catch(() => undefined),
        READINESS_RELOAD_WAIT_MS,
        undefined,
      );
    }
    if (!this.keys.ready) throw new Error('no signing key loaded');
  }
}
