import { DomainError } from '@acct/problem';

import { quietNestLogs } from '../test-support/quiet-logs';
import { IdentityClient, IdentityGrpc } from './identity.client';
import { ServiceToken } from './service-token';

describe('IdentityClient with auth’s own token', () => {
  let issued: number;
  const serviceToken = {
    get: () => Promise.resolve(`token-${issued}`),
    forget: () => (issued += 1),
  } as unknown as ServiceToken;

  /** An identity that refuses `refused` as its verifier does (unknown key, revoked…), else answers. */
  const identityRefusing = (refused: Set<string>, tokens: string[]) =>
    ({
      call: (_method: string, _request: unknown, { accessToken }: { accessToken: string }) => {
        tokens.push(accessToken);
        if (refused.has(accessToken)) {
          return Promise.reject(new DomainError('unauthenticated', 'The token is signed with an unknown key.'));
        }
        return Promise.resolve({ key: 'user:u-1', userId: 'u-1', orgId: 'o-1' });
      },
    }) as unknown as IdentityGrpc;

  beforeAll(() => quietNestLogs());
  beforeEach(() => (issued = 1));

  it('replaces a token identity refuses and asks once more: a login after a key withdrawal goes on', async () => {
    const tokens: string[] = [];
    const client = new IdentityClient(identityRefusing(new Set(['token-1']), tokens), serviceToken);
    await expect(client.resolveLoginKey('a@b.test')).resolves.toEqual({ key: 'user:u-1', userId: 'u-1', orgId: 'o-1' });
    expect(tokens).toEqual(['token-1', 'token-2']);
  });

  it('asks only once more: a refused new token is an internal error', async () => {
    const tokens: string[] = [];
    const client = new IdentityClient(identityRefusing(new Set(['token-1', 'token-2']), tokens), serviceToken);
    await expect(client.resolveLoginKey('a@b.test')).rejects.toMatchObject({ code: 'internal_error' });
    expect(tokens).toEqual(['token-1', 'token-2']);
  });
});
