import { bucketCapacity, STANDARD_TIERS } from './tiers';
import { BucketDecision, BucketState, takeToken } from './token-bucket';

describe('token bucket', () => {
  const rate = { ratePerMinute: 60, burst: 5 }; // 5 tokens, one a second

  function drain(count: number, start: BucketState | undefined, now: number) {
    let state = start;
    const decisions = [];
    for (let index = 0; index < count; index += 1) {
      const result = takeToken(state, rate, now);
      state = result.state;
      decisions.push(result.decision);
    }
    return { state, decisions };
  }

  it('admits exactly the capacity from a full bucket, then refuses', () => {
    const { decisions } = drain(7, undefined, 0);
    expect(decisions.map((decision) => decision.allowed)).toEqual([true, true, true, true, true, false, false]);
    expect(decisions.map((decision) => decision.remaining)).toEqual([4, 3, 2, 1, 0, 0, 0]);
  });

  it('says when the next token comes and when the bucket is full', () => {
    const { decisions } = drain(6, undefined, 0);
    expect(decisions[5]).toMatchObject({ allowed: false, msUntilToken: 1000, msUntilFull: 5000 });
  });

  it('refills continuously at the rate, never above capacity', () => {
    const { state } = drain(5, undefined, 0);
    expect(takeToken(state, rate, 1500).decision).toMatchObject({ allowed: true, remaining: 0 });
    expect(takeToken(state, rate, 60_000).decision).toMatchObject({ allowed: true, remaining: 4 });
  });

  it('admits a request at the very millisecond its token is due, and says that millisecond, whatever the rate and burst', () => {
    // In tokens, 2/min with burst 59 said 1001 ms (Retry-After 2) for a token due in 1000, and refused at 1000.
    const wrong: string[] = [];
    for (let ratePerMinute = 1; ratePerMinute <= 120; ratePerMinute += 1)
      for (let burst = 1; burst <= 60; burst += 1) {
        if (ratePerMinute * burst < 60) continue;
        const tier = { ratePerMinute, burst };
        let state: BucketState | undefined;
        let decision: BucketDecision;
        let taken = 0;
        for (;;) {
          ({ state, decision } = takeToken(state, tier, 0));
          if (!decision.allowed) break;
          taken += 1;
        }
        // Whole requests admitted; the next is due when the missing part of a token has refilled.
        const missing = 60_000 - (ratePerMinute * burst * 1000 - 60_000 * taken);
        const due = Math.floor((missing + ratePerMinute - 1) / ratePerMinute);
        const next = takeToken(state, tier, due).decision;
        if (taken !== Math.floor((ratePerMinute * burst) / 60) || decision.msUntilToken !== due || !next.allowed)
          wrong.push(`${ratePerMinute}/min burst ${burst}`);
      }
    expect(wrong).toEqual([]);
  });

  it('sizes buckets as rate per second × burst', () => {
    const capacities = Object.fromEntries(STANDARD_TIERS.map((tier) => [tier.group, bucketCapacity(tier)]));
    expect(capacities['users.read']).toBe(300);
    expect(capacities['compute.write']).toBe(10);
    expect(capacities['auth']).toBeCloseTo(10 / 3);
  });

  it('sizes a bucket of a whole number of requests at exactly that number, whatever the rate and burst', () => {
    // (11 / 60) × 300 is 54.99999999999999 in floating point: one request short, and a Limit of 54.
    expect(bucketCapacity({ ratePerMinute: 11, burst: 300 })).toBe(55);
    for (let ratePerMinute = 1; ratePerMinute <= 600; ratePerMinute += 1)
      for (let burst = 1; burst <= 120; burst += 1) {
        if ((ratePerMinute * burst) % 60 !== 0) continue;
        expect([ratePerMinute, burst, bucketCapacity({ ratePerMinute, burst })]).toEqual([
          ratePerMinute,
          burst,
          (ratePerMinute * burst) / 60,
        ]);
      }
  });
});
