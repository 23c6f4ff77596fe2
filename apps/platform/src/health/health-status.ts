/** A probe's latest result. */
export interface ComponentResult {
  component: string;
  status: 'up' | 'down';
  latencyMs: number;
  /** A failing critical component makes the whole service `down`; others make it `degraded`. */
  critical: boolean;
  error?: string;
}

export type OverallStatus = 'healthy' | 'degraded' | 'down';

/**
 * Contract §5: `down` when the database or a backend service is unreachable, `degraded` when the
 * cache, object storage or message bus fails, `healthy` otherwise.
 */
export function overallStatus(results: readonly ComponentResult[]): OverallStatus {
  const failing = results.filter((result) => result.status === 'down');
  if (failing.some((result) => result.critical)) return 'down';
  return failing.length > 0 ? 'degraded' : 'healthy';
}
