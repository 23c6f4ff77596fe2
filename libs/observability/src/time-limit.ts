/**
 * Waiting with a bound, for the probes, checks and refreshes of every process. Both helpers clear
 * their timer as soon as the race is decided, so it never outlives the wait or holds a process open.
 */

/** `work`, or a rejection with `message` once `ms` have passed. */
export function withTimeout<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** `work`'s value, or `fallback` once `ms` have passed (`work` goes on; its outcome is not awaited). */
export function valueWithin<T, F>(work: Promise<T>, ms: number, fallback: F): Promise<T | F> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<F>((resolve) => {
    timer = setTimeout(() => resolve(fallback), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
