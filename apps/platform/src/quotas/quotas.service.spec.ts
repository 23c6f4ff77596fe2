import { Caller } from '@acct/access-token';
import { DomainError } from '@acct/problem';

import { ApiUsageReader } from './api-usage.reader';
import { QuotasRepository } from './quotas.repository';
import { QuotasService } from './quotas.service';

const caller = (scopes: string[]): Caller => ({
  subject: 'user-1',
  kind: 'user',
  orgId: 'org-1',
  clientId: 'web',
  scopes: new Set(scopes),
  roles: ['admin'],
  tokenId: 'jti',
  expiresAt: Date.now() + 60_000,
});

describe('QuotasService', () => {
  const repository = {
    stateOf: () =>
      Promise.resolve({
        plan: null,
        overrides: [{ dimension: 'api', name: 'Users', limit: 7 }],
        usage: [{ dimension: 'api', name: 'Users', used: 3 }],
      }),
  } as unknown as QuotasRepository;
  const today = jest.fn(() => Promise.resolve(42));
  const apiUsage = { today } as unknown as ApiUsageReader;
  const service = new QuotasService(repository, apiUsage);
  beforeEach(() => today.mockClear());

  it('answers every quota of the caller’s org to a system:read token, overrides and usage applied', async () => {
    const { orgId, quotas } = await service.quotasFor(caller(['system:read']), '');
    expect(orgId).toBe('org-1');
    expect(quotas).toHaveLength(6);
    expect(quotas).toContainEqual({ dimension: 'api', name: 'Users', unit: 'count', limit: 7, used: 3 });
    expect(quotas).toContainEqual({
      dimension: 'api',
      name: 'API requests',
      unit: 'req/day',
      limit: 100_000,
      used: 42,
    });
  });

  it('shows a users:write token without system:read the Users quota only (what identity asks for)', async () => {
    const { quotas } = await service.quotasFor(caller(['users:write']), 'api');
    expect(quotas).toEqual([{ dimension: 'api', name: 'Users', unit: 'count', limit: 7, used: 3 }]);
  });

  it('answers the one quota a name asks for, without reading the day’s API count', async () => {
    const { quotas } = await service.quotasFor(caller(['system:read', 'users:write']), 'api', 'Users');
    expect(quotas).toEqual([{ dimension: 'api', name: 'Users', unit: 'count', limit: 7, used: 3 }]);
    expect(today).not.toHaveBeenCalled();
    await service.quotasFor(caller(['system:read']), 'api');
    expect(today).toHaveBeenCalledWith('org-1');
  });

  it("answers one quota's limit (the override, else the plan's) without reading any usage", async () => {
    expect(await service.limitOf('org-1', { dimension: 'api', name: 'Users' })).toBe(7);
    expect(await service.limitOf('org-1', { dimension: 'api', name: 'API requests' })).toBe(100_000);
    expect(today).not.toHaveBeenCalled();
  });

  it('refuses any other token with insufficient_scope naming system:read', async () => {
    const error = await service.quotasFor(caller(['users:read']), '').catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toMatchObject({ code: 'insufficient_scope' });
    expect((error as DomainError).options.headers?.['WWW-Authenticate']).toContain('scope="system:read"');
  });

  it('refuses an unknown dimension', async () => {
    const error = await service.quotasFor(caller(['system:read']), 'disk').catch((failure: unknown) => failure);
    expect(error).toMatchObject({ code: 'validation_failed' });
  });
});
