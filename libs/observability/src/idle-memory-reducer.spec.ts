import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

import { IdleMemoryReducer, reduceMemoryWhenIdle } from './idle-memory-reducer';

const options = { intervalMs: 1000, busyAbove: 0.2, idleBelow: 0.05, idleSamples: 2 };

/** A reducer fed samples one by one; `collected` holds the 1-based numbers of the samples it collected at. */
function reducerCounting() {
  const collected: number[] = [];
  let step = 0;
  const reducer = new IdleMemoryReducer(() => collected.push(step), options);
  const feed = (...samples: number[]) => {
    for (const sample of samples) {
      step += 1;
      reducer.sample(sample);
    }
  };
  return { feed, collected };
}

describe('IdleMemoryReducer', () => {
  it('collects once when a load is followed by enough idle samples in a row', () => {
    const { feed, collected } = reducerCounting();
    feed(0.9, 0.8, 0.01, 0.02, 0.01, 0.01, 0.0);
    expect(collected).toEqual([4]);
  });

  it('never collects a process that was never loaded', () => {
    const { feed, collected } = reducerCounting();
    feed(0.01, 0.0, 0.02, 0.1, 0.01, 0.0, 0.0);
    expect(collected).toEqual([]);
  });

  it('never collects while the load goes on', () => {
    const { feed, collected } = reducerCounting();
    feed(0.5, 0.6, 0.7, 0.3, 0.9, 0.25);
    expect(collected).toEqual([]);
  });

  it('starts counting idle samples again after a sample that is neither idle nor a load', () => {
    const { feed, collected } = reducerCounting();
    feed(0.9, 0.01, 0.1, 0.01, 0.01);
    expect(collected).toEqual([5]);
  });

  it('does not judge the sample right after a collection, which holds V8 finishing that collection', () => {
    const { feed, collected } = reducerCounting();
    feed(0.9, 0.0, 0.0, 0.9, 0.0, 0.0, 0.0, 0.9, 0.0, 0.0);
    expect(collected).toEqual([3, 10]);
  });

  it('does not judge as a load the samples V8 spends finishing a collection that took several intervals', () => {
    // On a slow host a collection of a large heap took 2.5 intervals, and V8 finished it over the next
    // two: read as a load, they collected again two samples later, and again after that one.
    const collected: number[] = [];
    let step = 0;
    const reducer = new IdleMemoryReducer(() => {
      collected.push(step);
      return 2.5 * options.intervalMs;
    }, options);
    for (const sample of [0.9, 0.0, 0.0, 0.9, 0.9, 0.5, 0.0, 0.0, 0.0, 0.9, 0.0, 0.0]) {
      step += 1;
      reducer.sample(sample);
    }
    // Collected at 3; 4 holds the collection, 5 and 6 V8 finishing it (at most 3 intervals, as long as
    // the collection itself, rounded up); 7–9 idle; the load at 10 is judged again.
    expect(collected).toEqual([3, 12]);
  });

  it('collects again only after a new load', () => {
    const { feed, collected } = reducerCounting();
    feed(0.9, 0.0, 0.0, 0.0, 0.0, 0.0, 0.5, 0.0, 0.0);
    expect(collected).toEqual([3, 9]);
  });
});

const REPOSITORY_ROOT = path.resolve(__dirname, '../../..');

/**
 * A fresh Node process that holds a 200 MB heap (so one memory-reducing collection takes hundreds of
 * milliseconds, several sampling intervals), blocks its event loop for three intervals, then idles for
 * two seconds past its first collection, and prints what the reducer reported. A process of its own,
 * not the jest worker: a worker's heap and neighbours make its own collections and pauses.
 */
const CHILD = `
const { reduceMemoryWhenIdle } = require(${JSON.stringify(path.join(__dirname, 'idle-memory-reducer.ts'))});
const retained = Array.from({ length: 3_000_000 }, (_, i) => ({ i, s: String(i) }));
const reports = [];
const reducer = reduceMemoryWhenIdle((before, after) => reports.push([before, after]), {
  intervalMs: 100, busyAbove: 0.6, idleBelow: 0.3, idleSamples: 2,
});
setTimeout(() => {
  const until = Date.now() + 350;
  while (Date.now() < until) {}
}, 50);
(async () => {
  const deadline = Date.now() + 20_000;
  while (reports.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  await new Promise((r) => setTimeout(r, 2_000));
  reducer.stop();
  console.log(JSON.stringify({ reports, retained: retained.length, gc: typeof globalThis.gc }));
})();
`;

describe('reduceMemoryWhenIdle', () => {
  it('collects with V8 once after a load, however long its collection takes, and reports the RSS before and after', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['-r', path.join(REPOSITORY_ROOT, 'tools/run-ts.cjs'), '-e', CHILD],
      { cwd: REPOSITORY_ROOT },
    );
    const { reports, gc } = JSON.parse(stdout) as { reports: [number, number][]; gc: string };
    // One load, then idle: exactly one collection, though it takes several intervals (were the sample
    // that holds it judged, it would read as a load and collect again two intervals later).
    expect(reports).toHaveLength(1);
    const [[before, after]] = reports as [[number, number]];
    expect(before).toBeGreaterThan(100 * 1024 * 1024);
    expect(after).toBeGreaterThan(0);
    expect(gc).toBe('undefined');
  }, 30_000);

  it('leaves no gc function on the global object', () => {
    const reducer = reduceMemoryWhenIdle();
    reducer.stop();
    expect((globalThis as { gc?: unknown }).gc).toBeUndefined();
  });
});
