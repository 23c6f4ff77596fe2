import { METRICS_REGISTRY, ReadinessCheck } from '@acct/observability';
import {
  DynamicModule,
  Global,
  Inject,
  Injectable,
  Logger,
  Module,
  OnModuleDestroy,
  OnModuleInit,
} from '@nestjs/common';
import { Gauge, Registry } from 'prom-client';

import { Revocations } from './revocations';

/** The settings a process needs for revocations (`revocationEnv` of @acct/config). */
export interface RevocationConfig {
  REDIS_URL: string;
  REDIS_KEY_PREFIX: string;
  NATS_URL: string;
  REVOCATION_RESYNC_MS: number;
  /** Only auth, which writes session and subject entries, knows it; 7200 s otherwise. */
  ACCESS_TOKEN_TTL_SECONDS?: number;
}

const REVOCATION_CONFIG = Symbol('REVOCATION_CONFIG');

/** Not ready until the set was read from Redis once. */
@Injectable()
export class RevocationsReadiness implements ReadinessCheck {
  readonly name = 'revocations';

  constructor(private readonly revocations: Revocations) {}

  check(): Promise<void> {
    return this.revocations.loaded
      ? Promise.resolve()
      : Promise.reject(new Error('the revocation list was not read from Redis yet'));
  }
}

/** Starts the set (a first full read) before the process serves, stops it on shutdown. */
@Injectable()
class RevocationsLifecycle implements OnModuleInit, OnModuleDestroy {
  constructor(@Inject(Revocations) private readonly revocations: Revocations) {}

  onModuleInit() {
    return this.revocations.start();
  }

  onModuleDestroy() {
    return this.revocations.stop();
  }
}

/**
 * How long ago the process's set last caught up from Redis, read at scrape time (-1 before its first
 * read): the alert for a process that may accept tokens revoked while it was cut off.
 */
function exposeSyncAge(revocations: Revocations, registry: Registry): void {
  new Gauge({
    name: 'revocations_sync_age_seconds',
    help: "Seconds since this process's revocation list last caught up from Redis (-1: never read yet).",
    registers: [registry],
    collect(this: Gauge) {
      const ago = revocations.caughtUpAgoMs();
      this.set(ago === undefined ? -1 : ago / 1000);
    },
  });
}

/**
 * Provides this process's `Revocations` (inject it by its class) and its readiness check. `config`
 * is the token of the process's validated config; the process's metrics registry, where there is one,
 * gets `revocations_sync_age_seconds`.
 */
@Global()
@Module({})
export class RevocationModule {
  static forRoot(options: { configToken: symbol | string; name: string }): DynamicModule {
    return {
      module: RevocationModule,
      providers: [
        { provide: REVOCATION_CONFIG, useExisting: options.configToken },
        {
          provide: Revocations,
          inject: [REVOCATION_CONFIG, { token: METRICS_REGISTRY, optional: true }],
          useFactory: (config: RevocationConfig, registry?: Registry) => {
            const revocations = new Revocations({
              redisUrl: config.REDIS_URL,
              keyPrefix: config.REDIS_KEY_PREFIX,
              natsUrl: config.NATS_URL,
              name: options.name,
              resyncIntervalMs: config.REVOCATION_RESYNC_MS,
              maxTokenLifetimeSeconds: config.ACCESS_TOKEN_TTL_SECONDS,
              logger: new Logger('revocations'),
            });
            if (registry) exposeSyncAge(revocations, registry);
            return revocations;
          },
        },
        RevocationsLifecycle,
        RevocationsReadiness,
      ],
      exports: [Revocations, RevocationsReadiness],
    };
  }
}
