import { apiUsageKey, secondsUntilUtcMidnight, utcDate } from './tiers';

describe('utcDate', () => {
  it('is the UTC day of the instant, to its last millisecond, whichever day was asked before', () => {
    const midnight = Date.UTC(2026, 10, 27);
    expect(utcDate(midnight - 1)).toBe('2026-11-26');
    expect(utcDate(midnight)).toBe('2026-11-27');
    expect(utcDate(midnight - 1)).toBe('2026-11-26');
    expect(utcDate(midnight + 86_400_000 - 1)).toBe('2026-11-27');
    expect(utcDate(midnight + 86_400_000)).toBe('2026-11-28');
    expect(utcDate(-1)).toBe('1969-12-31');
    for (let at = midnight - 3 * 3_600_000; at < midnight + 3 * 3_600_000; at += 1_234_567) {
      expect(utcDate(at)).toBe(new Date(at).toISOString().slice(0, 10));
    }
  });
});

describe('secondsUntilUtcMidnight', () => {
  it('counts whole seconds to the day utcDate names next, at least one', () => {
    const midnight = Date.UTC(2026, 10, 28);
    expect(secondsUntilUtcMidnight(midnight)).toBe(86_400);
    expect(secondsUntilUtcMidnight(midnight - 1)).toBe(1);
    expect(secondsUntilUtcMidnight(midnight - 1_500)).toBe(2);
    expect(secondsUntilUtcMidnight(midnight - 3_600_000)).toBe(3_600);
    expect(utcDate(midnight - 1 + secondsUntilUtcMidnight(midnight - 1) * 1000)).toBe('2026-11-28');
  });
});

describe('apiUsageKey', () => {
  it("names an org's counter of one UTC day, the org id as its Redis Cluster hash tag", () => {
    expect(apiUsageKey('org-1', Date.UTC(2026, 10, 27, 23, 59))).toBe('usage:api:{org-1}:2026-11-27');
    expect(apiUsageKey('org-1', Date.UTC(2026, 10, 28))).toBe('usage:api:{org-1}:2026-11-28');
  });
});
