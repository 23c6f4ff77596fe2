import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';

/*
 * Gives back the memory a burst of load left behind, once the process is idle again.
 *
 * Under load V8 grows its young generation (up to `--max-semi-space-size`) and the old generation's
 * committed pages; the larger young generation is what keeps garbage collection cheap per request.
 * V8 shrinks them only in a GC that aims to reduce memory, and its own memory reducer does not start
 * in a server that keeps timers running (it keeps judging the allocation rate "high"). So this watches
 * the event loop's utilisation once per `intervalMs`: after a sample at or above `busyAbove` (a load)
 * followed by `idleSamples` samples in a row below `idleBelow`, it runs one compacting, memory-reducing
 * GC (V8's "last resort" flavour: what the isolate does under memory pressure), then waits for the
 * next load. An idle process is never collected twice; a busy one never at all.
 *
 * A collection is not a load: the sample that holds it is not judged, and that sample also holds what
 * V8 finishes on the main thread after the collection returns (measured: 60–90 ms after a 400 ms
 * collection of a 210 MB heap, which, left in the next sample, read as a new load and collected again
 * every few intervals).
 */

/** When a sample is load, when it is idle, and how many idle ones in a row end a load. */
export interface IdleMemoryReducerOptions {
  intervalMs: number;
  /** Event-loop utilisation (0..1) of a sample that counts as load. */
  busyAbove: number;
  /** Utilisation below which a sample counts as idle. */
  idleBelow: number;
  /** Idle samples in a row, after a load, before the collection. */
  idleSamples: number;
}

export const IDLE_MEMORY_REDUCER_DEFAULTS: IdleMemoryReducerOptions = {
  intervalMs: 1000,
  busyAbove: 0.2,
  idleBelow: 0.05,
  idleSamples: 2,
};

/** The state machine alone: fed one utilisation sample at a time, says when to collect. */
export class IdleMemoryReducer {
  private loaded = false;
  private idleInARow = 0;
  private justCollected = false;
  /** Samples after the one holding a collection that are not judged while they read as a load. */
  private finishing = 0;

  /** `collect` answers how long the collection took (ms), when it knows. */
  constructor(
    private readonly collect: () => number | void,
    private readonly options: IdleMemoryReducerOptions = IDLE_MEMORY_REDUCER_DEFAULTS,
  ) {}

  /** One sample of the event loop's utilisation since the last one; collects when a load has ended. */
  sample(utilization: number): void {
    if (this.justCollected) {
      this.justCollected = false;
      return;
    }
    // V8 may finish a long collection over several more samples (a large heap on a slow host): each
    // reads as a load, and judged so it collected again two samples later. Its finishing takes less
    // than the collection itself, so as many samples as the collection took intervals are not judged
    // while they read as a load; the first that does not ends that.
    if (this.finishing > 0) {
      this.finishing -= 1;
      if (utilization >= this.options.busyAbove) return;
      this.finishing = 0;
    }
    if (utilization >= this.options.busyAbove) {
      this.loaded = true;
      this.idleInARow = 0;
      return;
    }
    if (!this.loaded) return;
    this.idleInARow = utilization < this.options.idleBelow ? this.idleInARow + 1 : 0;
    if (this.idleInARow < this.options.idleSamples) return;
    this.loaded = false;
    this.idleInARow = 0;
    this.justCollected = true;
    this.finishing = Math.ceil((this.collect() ?? 0) / this.options.intervalMs);
  }
}

type GcFunction = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

/**
 * V8's `gc` function without putting it on the global object: exposed for a moment, taken from a
 * fresh context (Node's documented way, `v8.setFlagsFromString`), and the flag put back.
 */
function memoryReducingGc(): () => void {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as GcFunction;
  v8.setFlagsFromString('--no-expose-gc');
  return () => gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
}

/**
 * Starts the reducer on this process's event loop (its timer does not keep the process alive).
 * `onCollected` hears of each collection with the RSS before and after, in bytes.
 */
export function reduceMemoryWhenIdle(
  onCollected?: (rssBefore: number, rssAfter: number) => void,
  options: IdleMemoryReducerOptions = IDLE_MEMORY_REDUCER_DEFAULTS,
): { stop(): void } {
  const gc = memoryReducingGc();
  const reducer = new IdleMemoryReducer(() => {
    const before = process.memoryUsage.rss();
    const started = performance.now();
    gc();
    const tookMs = performance.now() - started;
    onCollected?.(before, process.memoryUsage.rss());
    return tookMs;
  }, options);
  // A chain of timeouts, not an interval: each sample spans at least a whole interval (a late interval
  // fires again at once and samples a window of a few microseconds), and the one after a collection
  // spans the collection, V8's finishing it and a whole interval.
  let last = performance.eventLoopUtilization();
  let timer: NodeJS.Timeout | undefined;
  const next = () => {
    timer = setTimeout(() => {
      const now = performance.eventLoopUtilization();
      reducer.sample(performance.eventLoopUtilization(now, last).utilization);
      last = now;
      if (timer) next();
    }, options.intervalMs);
    timer.unref();
  };
  next();
  return {
    stop: () => {
      clearTimeout(timer);
      timer = undefined;
    },
  };
}
