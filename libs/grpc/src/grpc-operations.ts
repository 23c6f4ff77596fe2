import { ReadinessCheck, withTimeout } from '@acct/observability';
import type { Server, ServerWritableStream, UntypedServiceImplementation } from '@grpc/grpc-js';
import type { PackageDefinition } from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import { HealthImplementation, service as healthService, ServingStatus } from 'grpc-health-check';

/** How long one readiness check may take before the service counts as not serving. */
const CHECK_TIMEOUT_MS = 1000;
/** How often open `Watch` streams see the readiness checks re-run. */
export const HEALTH_WATCH_INTERVAL_MS = 1000;

/** The services a package definition declares (`identity.v1.IdentityService`), not its messages. */
export function servicesOf(definition: PackageDefinition, packageName: string): string[] {
  return Object.entries(definition)
    .filter(([name, entry]) => name.startsWith(`${packageName}.`) && !('format' in entry))
    .map(([name]) => name);
}

/**
 * `grpc.health.v1.Health` per the gRPC health checking protocol, from the official
 * `grpc-health-check` implementation: `Check` and `Watch` for the whole server (`""`) and for each
 * service it serves, `NOT_FOUND` / `SERVICE_UNKNOWN` for any other name. A service is `SERVING` while
 * every readiness check of the process passes (its database is there and fully migrated, …):
 * `Check` re-runs them, open `Watch` streams see them re-run every second; on shutdown every status
 * turns `NOT_SERVING` and the streams end, so they do not hold the graceful drain open.
 */
export class GrpcHealth {
  private readonly implementation = new HealthImplementation();
  private readonly watches = new Set<ServerWritableStream<unknown, unknown>>();
  private services: string[] = [''];
  private published: ServingStatus = 'NOT_SERVING';
  private refreshing?: Promise<void>;
  private timer?: NodeJS.Timeout;
  private stopped = false;

  constructor(private readonly checks: () => readonly ReadinessCheck[]) {}

  /** Adds the health service to a gRPC server serving `services` (fully qualified names). */
  addToServer(server: Pick<Server, 'addService'>, services: readonly string[]): void {
    this.services = ['', ...services];
    for (const service of this.services) this.implementation.setStatus(service, 'NOT_SERVING');
    let handlers: UntypedServiceImplementation = {};
    this.implementation.addToServer({ addService: (_definition, implementation) => (handlers = implementation) });
    const check = handlers.check as (call: unknown, callback: unknown) => void;
    const watch = handlers.watch as (call: ServerWritableStream<unknown, unknown>) => void;
    server.addService(healthService, {
      ...handlers,
      check: (call: unknown, callback: unknown) => void this.refresh().then(() => check(call, callback)),
      watch: (call: ServerWritableStream<unknown, unknown>) => {
        if (this.stopped) return call.end();
        this.watches.add(call);
        call.on('cancelled', () => this.watches.delete(call));
        watch(call);
        this.timer ??= setInterval(() => {
          if (this.watches.size > 0) void this.refresh();
        }, HEALTH_WATCH_INTERVAL_MS).unref();
      },
    });
  }

  /** Runs the readiness checks (a run in progress is joined) and publishes the result. */
  refresh(): Promise<void> {
    this.refreshing ??= this.serving()
      .then((serving) => this.publish(serving ? 'SERVING' : 'NOT_SERVING'))
      .finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  /** Shutdown: `NOT_SERVING` from now on, and every open `Watch` ends. */
  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
    this.publish('NOT_SERVING');
    for (const call of this.watches) call.end();
    this.watches.clear();
  }

  private async serving(): Promise<boolean> {
    const results = await Promise.allSettled(
      this.checks().map((readiness) =>
        withTimeout(readiness.check(), CHECK_TIMEOUT_MS, `readiness check ${readiness.name} timed out`),
      ),
    );
    return results.every((result) => result.status === 'fulfilled');
  }

  private publish(status: ServingStatus) {
    const effective = this.stopped ? 'NOT_SERVING' : status;
    // setStatus sends to every watcher: only changes are published.
    if (effective === this.published) return;
    this.published = effective;
    for (const service of this.services) this.implementation.setStatus(service, effective);
  }
}

/**
 * gRPC server reflection (`grpc.reflection.v1` and `v1alpha`) over everything the server loaded, so
 * `grpcurl` and other generic clients work without the `.proto` files.
 */
export function addReflection(server: Pick<Server, 'addService'>, definition: PackageDefinition): void {
  new ReflectionService(definition).addToServer(server);
}
