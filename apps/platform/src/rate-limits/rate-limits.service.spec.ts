import { RateLimitTier, STANDARD_TIERS } from '@acct/limits';
import { DomainError } from '@acct/problem';

import { RateLimitsRepository } from './rate-limits.repository';
import { RateLimitsService } from './rate-limits.service';

/** An in-memory repository: each org's plan and overrides, and the overrides written. */
function repositoryWith(plans: Record<string, string> = {}, overrides: Record<string, RateLimitTier[]> = {}) {
  const written: Array<{ orgId: string; tier: RateLimitTier }> = [];
  const repository = {
    planOf: (orgId: string) => Promise.resolve(plans[orgId]),
    overridesOf: (orgId: string) => Promise.resolve(overrides[orgId] ?? []),
    setOverride: (orgId: string, tier: RateLimitTier) => {
      written.push({ orgId, tier });
      return Promise.resolve();
    },
  };
  return { repository: repository as unknown as RateLimitsRepository, written };
}

const fieldsOf = async (attempt: Promise<unknown>) => {
  const error = await attempt.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(DomainError);
  const domainError = error as DomainError;
  return { code: domainError.code, fields: (domainError.options.errors ?? []).map((one) => one.field) };
};

describe('RateLimitsService', () => {
  describe('tiersOf', () => {
    it('holds a request without an org (no valid token) to the standard tiers', async () => {
      const { repository } = repositoryWith();
      await expect(new RateLimitsService(repository).tiersOf(undefined)).resolves.toEqual(STANDARD_TIERS);
    });

    it('replaces only the groups the org overrides, keeping every other standard tier in order', async () => {
      const override: RateLimitTier = { group: 'users.write', ratePerMinute: 600, burst: 20, scope: 'per-ip' };
      const { repository } = repositoryWith({}, { 'org-1': [override] });
      const tiers = await new RateLimitsService(repository).tiersOf('org-1');
      expect(tiers.map((tier) => tier.group)).toEqual(STANDARD_TIERS.map((tier) => tier.group));
      expect(tiers.find((tier) => tier.group === 'users.write')).toEqual(override);
      expect(tiers.filter((tier) => tier.group !== 'users.write')).toEqual(
        STANDARD_TIERS.filter((tier) => tier.group !== 'users.write'),
      );
    });

    it("does not let one org's override reach another org", async () => {
      const override: RateLimitTier = { group: 'system.read', ratePerMinute: 1, burst: 1, scope: 'per-token' };
      const { repository } = repositoryWith({}, { 'org-1': [override] });
      await expect(new RateLimitsService(repository).tiersOf('org-2')).resolves.toEqual(STANDARD_TIERS);
    });

    it('falls back to the standard tiers for a plan the service does not know', async () => {
      const { repository } = repositoryWith({ 'org-1': 'enterprise-2031' });
      await expect(new RateLimitsService(repository).tiersOf('org-1')).resolves.toEqual(STANDARD_TIERS);
    });
  });

  describe('setOverride', () => {
    it('stores a valid tier for the org', async () => {
      const { repository, written } = repositoryWith();
      const tier: RateLimitTier = { group: 'users.read', ratePerMinute: 60_000, burst: 10, scope: 'per-token' };
      await new RateLimitsService(repository).setOverride('org-1', tier);
      expect(written).toEqual([{ orgId: 'org-1', tier }]);
    });

    it('refuses an unknown group, a rate or burst that is not a positive integer and an unknown scope, naming each field, and stores nothing', async () => {
      const { repository, written } = repositoryWith();
      const tier = { group: 'everything', ratePerMinute: 0.5, burst: 0, scope: 'per-org' } as unknown as RateLimitTier;
      await expect(fieldsOf(new RateLimitsService(repository).setOverride('org-1', tier))).resolves.toEqual({
        code: 'validation_failed',
        fields: ['group', 'rate_per_minute', 'burst', 'scope'],
      });
      expect(written).toEqual([]);
    });

    it('refuses an override of the auth group, whose requests name no org, and stores nothing', async () => {
      const { repository, written } = repositoryWith();
      const tier: RateLimitTier = { group: 'auth', ratePerMinute: 600, burst: 20, scope: 'per-ip' };
      await expect(fieldsOf(new RateLimitsService(repository).setOverride('org-1', tier))).resolves.toEqual({
        code: 'validation_failed',
        fields: ['group'],
      });
      expect(written).toEqual([]);
    });

    it('refuses a rate below one per minute', async () => {
      const { repository, written } = repositoryWith();
      const tier: RateLimitTier = { group: 'default', ratePerMinute: 0, burst: 5, scope: 'per-ip' };
      await expect(fieldsOf(new RateLimitsService(repository).setOverride('org-1', tier))).resolves.toEqual({
        code: 'validation_failed',
        fields: ['rate_per_minute'],
      });
      expect(written).toEqual([]);
    });

    it('refuses a tier whose bucket holds less than one request (it would refuse every request for good)', async () => {
      const { repository, written } = repositoryWith();
      const tier: RateLimitTier = { group: 'users.read', ratePerMinute: 1, burst: 1, scope: 'per-token' };
      await expect(fieldsOf(new RateLimitsService(repository).setOverride('org-1', tier))).resolves.toEqual({
        code: 'validation_failed',
        fields: ['burst'],
      });
      // A minute's rate of one, with a burst of 60, is a bucket of one: the least that admits anything.
      await new RateLimitsService(repository).setOverride('org-1', { ...tier, burst: 60 });
      expect(written).toEqual([{ orgId: 'org-1', tier: { ...tier, burst: 60 } }]);
    });

    it('refuses a rate or burst beyond a 32-bit integer, which no tier can store, naming each field', async () => {
      const { repository, written } = repositoryWith();
      const tier: RateLimitTier = { group: 'default', ratePerMinute: 2 ** 31, burst: 1e11, scope: 'per-ip' };
      await expect(fieldsOf(new RateLimitsService(repository).setOverride('org-1', tier))).resolves.toEqual({
        code: 'validation_failed',
        fields: ['rate_per_minute', 'burst'],
      });
      expect(written).toEqual([]);
    });

    it('refuses a tier without an org', async () => {
      const { repository, written } = repositoryWith();
      const tier: RateLimitTier = { group: 'default', ratePerMinute: 60, burst: 5, scope: 'per-ip' };
      await expect(fieldsOf(new RateLimitsService(repository).setOverride('', tier))).resolves.toEqual({
        code: 'validation_failed',
        fields: [],
      });
      expect(written).toEqual([]);
    });
  });
});
