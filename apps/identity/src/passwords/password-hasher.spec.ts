import { Logger } from '@nestjs/common';

import { PasswordHasher } from './password-hasher';

/** Fixtures: argon2id PHC strings produced by @node-rs/argon2 2.2.1. */
const NODE_RS_HASHES = {
  standard: '$argon2id$v=19$m=19456,t=2,p=1$pzwuUSDN3mBN5R/VbBLHvA$hFol3R8lsWxcqw7qHa7lGmoziS0X25cq0UlzOgim5e4',
  otherParameters: '$argon2id$v=19$m=8192,t=3,p=2$QNzR7LZ9Cj3F0JfxQ/7yJA$QETmcSmQoo/IdejoepghgOpuI602zFnNtSnlPEGBAIk',
};

describe('PasswordHasher', () => {
  const hasher = new PasswordHasher({ ARGON2_MEMORY_KIB: 19_456, ARGON2_ITERATIONS: 2, ARGON2_PARALLELISM: 1 });

  it('hashes with argon2id and the configured parameters, salted', async () => {
    const first = await hasher.hash('correct horse battery');
    expect(first).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(await hasher.hash('correct horse battery')).not.toBe(first);
  });

  it('verifies the right password only', async () => {
    const stored = await hasher.hash('correct horse battery');
    expect(await hasher.verifyOrBurn(stored, 'correct horse battery')).toBe(true);
    expect(await hasher.verifyOrBurn(stored, 'Correct horse battery')).toBe(false);
  });

  it('says no, after the same work, when there is no hash', async () => {
    expect(await hasher.verifyOrBurn(null, 'anything at all')).toBe(false);
    expect(await hasher.verifyOrBurn(null, '')).toBe(false);
  });

  it('says no to an unreadable stored hash instead of failing, and logs it', async () => {
    const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    try {
      expect(await hasher.verifyOrBurn('not a phc string', 'x')).toBe(false);
      expect(logged).toHaveBeenCalledWith(expect.stringContaining('unreadable password hash'));
    } finally {
      logged.mockRestore();
    }
  });

  it('still verifies hashes made by @node-rs/argon2, the library it replaced (same parameters)', async () => {
    // Made with @node-rs/argon2 2.2 (argon2id, m=19456 t=2 p=1 and m=8192 t=3 p=2) before it was removed.
    const stored = [
      ['correct horse battery staple', NODE_RS_HASHES.standard],
      ['ünïcødé pässwörd 🔑', NODE_RS_HASHES.otherParameters],
    ] as const;
    for (const [password, legacy] of stored) {
      expect(await hasher.verifyOrBurn(legacy, password)).toBe(true);
      expect(await hasher.verifyOrBurn(legacy, `${password}!`)).toBe(false);
    }
  });

  it('uses other parameters when configured', async () => {
    const cheap = new PasswordHasher({ ARGON2_MEMORY_KIB: 8192, ARGON2_ITERATIONS: 3, ARGON2_PARALLELISM: 2 });
    expect(await cheap.hash('x'.repeat(8))).toMatch(/^\$argon2id\$v=19\$m=8192,t=3,p=2\$/);
  });
});
