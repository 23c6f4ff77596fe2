import { RateLimitTier, STANDARD_TIERS } from '@acct/limits';

import { PlatformBackend } from '../backends/backends.module';
import { GatewayConfig } from '../config';
import { NO_QUOTA } from './api-usage';
import { TierCache } from './tier-cache';

const ORG = '3f0e4c1a-5b8e-4c33-9a53-1f2b3c4d5e6f';
const tiers = (rate: number): RateLimitTier[] => [{ ...STANDARD_TIERS[0], ratePerMinute: rate }];

/** The platform as the cache calls it: each answer is resolved (or never) by the test. */
class ScriptedPlatform {
  calls = 0;
  private answers: Array<(rate: number, apiRequestsPerDay: number) => void> = [];

  call(): Promise<{ tiers: RateLimitTier[]; apiRequestsPerDay: number }> {
    this.calls += 1;
    return new Promise((resolve, reject) =>
      this.answers.push((rate, apiRequestsPerDay) =>
        rate < 0 ? reject(new Error('platform unreachable')) : resolve({ tiers: tiers(rate), apiRequestsPerDay }),
      ),
    );
  }

  /** Answers the oldest call with tiers at `rate` (a negative rate: the call fails). */
  answer(rate: number, apiRequestsPerDay = 100_000) {
    this.answers.shift()?.(rate, apiRequestsPerDay);
  }
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('TierCache', () => {
  const TTL_MS = 60_000;
  const config = { RATE_LIMIT_TIERS_TTL_MS: TTL_MS, RATE_LIMIT_TIERS_REFRESH_WAIT_MS: 50 } as GatewayConfig;
  let platform: ScriptedPlatform;
  let cache: TierCache;
  // The cache's clock is the test's: a loaded CI machine cannot make an entry older than the test says.
  let now: number;
  const advance = (ms: number) => (now += ms);

  beforeEach(() => {
    now = 1_700_000_000_000;
    jest.spyOn(Date, 'now').mockImplementation(() => now);
    platform = new ScriptedPlatform();
    cache = new TierCache(platform as unknown as PlatformBackend, config);
  });

  afterEach(() => jest.restoreAllMocks());

  it('waits for the first answer about an org, and serves it from memory until it expires', async () => {
    const first = cache.tiersOf(ORG);
    platform.answer(600);
    expect((await first)[0].ratePerMinute).toBe(600);
    expect((await cache.tiersOf(ORG))[0].ratePerMinute).toBe(600);
    expect(platform.calls).toBe(1);
  });

  it('refreshes tiers in the background in the second half of their TTL, so no request waits', async () => {
    const first = cache.tiersOf(ORG);
    platform.answer(600);
    await first;
    advance(TTL_MS / 2 + 1); // past half the TTL, not expired
    // The platform has not answered the refresh: the request is decided at once with the tiers in memory.
    expect((await cache.tiersOf(ORG))[0].ratePerMinute).toBe(600);
    expect(platform.calls).toBe(2);
    platform.answer(900);
    await settle();
    expect((await cache.tiersOf(ORG))[0].ratePerMinute).toBe(900);
    expect(platform.calls).toBe(2);
  });

  it('takes a prompt refresh of expired tiers at once', async () => {
    const first = cache.tiersOf(ORG);
    platform.answer(600);
    await first;
    advance(TTL_MS + 1);
    const refreshed = cache.tiersOf(ORG);
    platform.answer(900);
    expect((await refreshed)[0].ratePerMinute).toBe(900);
  });

  it('decides with the last known tiers when the refresh is slow, and uses the refresh once it arrives', async () => {
    const first = cache.tiersOf(ORG);
    platform.answer(600);
    await first;
    advance(TTL_MS + 1);
    // The platform does not answer (yet): the request is still decided, with what was known.
    expect((await cache.tiersOf(ORG))[0].ratePerMinute).toBe(600);
    // Requests meanwhile share the one refresh in flight.
    await cache.tiersOf(ORG);
    expect(platform.calls).toBe(2);
    platform.answer(900);
    await settle();
    expect((await cache.tiersOf(ORG))[0].ratePerMinute).toBe(900);
  });

  it("carries the org's daily API requests quota with its tiers, refreshed with them", async () => {
    const first = cache.limitsOf(ORG);
    platform.answer(600, 5);
    expect(await first).toMatchObject({ apiRequestsPerDay: 5 });
    advance(TTL_MS + 1);
    const refreshed = cache.limitsOf(ORG);
    platform.answer(600, 7);
    expect(await refreshed).toMatchObject({ apiRequestsPerDay: 7 });
  });

  it('enforces no daily quota on an org it never heard of while the platform is unreachable, and the last known one on another', async () => {
    const unknown = cache.limitsOf('never-seen');
    platform.answer(-1);
    expect(await unknown).toEqual({ tiers: STANDARD_TIERS, apiRequestsPerDay: NO_QUOTA });
    const known = cache.limitsOf(ORG);
    platform.answer(600, 5);
    await known;
    advance(TTL_MS + 1);
    const stale = cache.limitsOf(ORG);
    platform.answer(-1);
    expect(await stale).toMatchObject({ apiRequestsPerDay: 5 });
  });

  it('holds an org it never heard of to the standard tiers once the platform failed to answer, so later requests wait for nothing', async () => {
    const first = cache.limitsOf('never-seen');
    platform.answer(-1); // the first call fails (unreachable, or past its deadline)
    expect(await first).toEqual({ tiers: STANDARD_TIERS, apiRequestsPerDay: NO_QUOTA });
    // The platform now hangs: no request waits for it, and one fetch at a time retries behind them.
    expect(await cache.limitsOf('never-seen')).toEqual({ tiers: STANDARD_TIERS, apiRequestsPerDay: NO_QUOTA });
    expect(await cache.limitsOf('never-seen')).toEqual({ tiers: STANDARD_TIERS, apiRequestsPerDay: NO_QUOTA });
    expect(platform.calls).toBe(2);
    // The platform is back: its answer replaces the standard tiers.
    platform.answer(900, 5);
    await settle();
    expect(await cache.limitsOf('never-seen')).toMatchObject({ apiRequestsPerDay: 5 });
  });

  it('decides at once with what it knows for as long as the platform stays unreachable, past the TTL too', async () => {
    /** `limits`, if it is decided without waiting for the platform. */
    const atOnce = <T>(limits: Promise<T>) =>
      Promise.race([
        limits,
        settle().then(() => {
          throw new Error('the request waited for the platform');
        }),
      ]);
    const known = cache.limitsOf(ORG);
    platform.answer(600, 5);
    await known;
    const unknown = cache.limitsOf('never-seen');
    platform.answer(-1);
    await unknown;
    advance(TTL_MS + 1);
    const stale = cache.limitsOf(ORG);
    platform.answer(-1); // the refresh fails (unreachable, or past its deadline)
    expect(await stale).toMatchObject({ apiRequestsPerDay: 5 });
    // The platform now hangs, and stays away past another TTL: no request waits for it any more.
    advance(TTL_MS + 1);
    expect(await atOnce(cache.limitsOf(ORG))).toMatchObject({ apiRequestsPerDay: 5 });
    expect(await atOnce(cache.limitsOf('never-seen'))).toEqual({ tiers: STANDARD_TIERS, apiRequestsPerDay: NO_QUOTA });
    // One fetch at a time retries behind the requests; the platform's answer, once in, replaces what was known.
    expect(await atOnce(cache.limitsOf(ORG))).toMatchObject({ apiRequestsPerDay: 5 });
    expect(platform.calls).toBe(5);
    platform.answer(900, 7);
    await settle();
    expect(await atOnce(cache.limitsOf(ORG))).toMatchObject({ apiRequestsPerDay: 7 });
  });

  it('holds a request that names no org (health, a token request) to the standard tiers at once, asking the platform nothing', async () => {
    // The platform answers no org with the standard plan's tiers, which the gateway has in code: asked,
    // a hung platform held the first such request (a health probe of a gateway just started) for the
    // whole gRPC deadline, and one each time that answer expired for RATE_LIMIT_TIERS_REFRESH_WAIT_MS.
    const answered = await Promise.race([
      cache.limitsOf(undefined),
      new Promise((resolve) => setTimeout(() => resolve('still waiting'), 20)),
    ]);
    expect(answered).toEqual({ tiers: [...STANDARD_TIERS], apiRequestsPerDay: NO_QUOTA });
    advance(2 * TTL_MS);
    expect(await cache.tiersOf(undefined)).toEqual([...STANDARD_TIERS]);
    expect(platform.calls).toBe(0);
  });

  it('forgets the orgs no request has named for an hour, so a long-running gateway holds the orgs in use', async () => {
    const instant = {
      calls: 0,
      call: () => ((instant.calls += 1), Promise.resolve({ tiers: tiers(600), apiRequestsPerDay: 1 })),
    };
    cache = new TierCache(instant as unknown as PlatformBackend, config);
    // 20,000 orgs over five and a half hours, a new one every second, and ORG in every one of them.
    for (let n = 0; n < 20_000; n += 1) {
      await cache.limitsOf(`org-${n}`);
      await cache.limitsOf(ORG);
      advance(1000);
    }
    // The last hour's 3,600 orgs, twice that at most between two looks for idle ones.
    expect(cache.size).toBeLessThanOrEqual(2 * 3601);
    const calls = instant.calls;
    await cache.limitsOf(ORG);
    await cache.limitsOf('org-19999');
    expect(instant.calls).toBe(calls); // in use: still known
    await cache.limitsOf('org-0');
    expect(instant.calls).toBe(calls + 1); // idle for hours: fetched anew
  });
});
