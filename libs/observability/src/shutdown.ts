import type { Logger } from 'pino';

import { stopTracing } from './tracing';

let draining = false;

/** True once the process got SIGTERM/SIGINT: `/readyz` answers 503 from then on. */
export function isDraining(): boolean {
  return draining;
}

export interface ShutdownPlan {
  logger: Logger;
  /** Longest the whole shutdown may take; keep it below Kubernetes' terminationGracePeriodSeconds. */
  graceMs: number;
  /** Stops taking new work (closes the listeners) and resolves once the work in flight is done. */
  drain: () => Promise<void>;
  /** Closes the rest: consumers, relays, connections, the ops port. */
  close: () => Promise<void>;
  exit?: (code: number) => void;
}

/**
 * On SIGTERM or SIGINT: `/readyz` turns 503 at once (Kubernetes stops routing here), then `drain`
 * lets in-flight requests and calls finish while new connections are refused, then `close` stops
 * the rest and the process exits 0. Past `graceMs` it exits 1 with whatever was still running.
 */
export function exitGracefullyOnSignals(plan: ShutdownPlan): void {
  const exit = plan.exit ?? ((code: number) => process.exit(code));
  let started = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (started) return;
    started = true;
    draining = true;
    plan.logger.info({ signal, grace_ms: plan.graceMs }, 'shutting down: draining work in flight');
    const deadline = setTimeout(() => {
      plan.logger.error({ grace_ms: plan.graceMs }, 'shutdown grace period over: exiting with work in flight');
      exit(1);
    }, plan.graceMs);
    void (async () => {
      try {
        await plan.drain();
        plan.logger.info('drained: closing connections');
        await plan.close();
        await stopTracing();
        clearTimeout(deadline);
        plan.logger.info('stopped');
        exit(0);
      } catch (error) {
        clearTimeout(deadline);
        plan.logger.error({ err: error }, 'shutdown failed');
        exit(1);
      }
    })();
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}
