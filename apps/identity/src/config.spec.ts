import { ConfigError } from '@acct/config';

import { loadIdentityConfig } from './config';

describe('identity configuration', () => {
  it('refuses less argon2 memory than its lanes need, naming the variable', () => {
    const load = () => loadIdentityConfig({ ARGON2_MEMORY_KIB: '16', ARGON2_PARALLELISM: '4' });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(/ARGON2_MEMORY_KIB: must be at least 8 × ARGON2_PARALLELISM \(32\)/);
    expect(loadIdentityConfig({ ARGON2_MEMORY_KIB: '32', ARGON2_PARALLELISM: '4' })).toMatchObject({
      ARGON2_MEMORY_KIB: 32,
      ARGON2_PARALLELISM: 4,
    });
  });
});
