import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * `argon2` ships prebuilt binaries, so an install with its scripts skipped (npm here skips them, and
 * so does `npm ci --ignore-scripts`) still hashes. This lays the package out as such an install does,
 * its published files without the `build/` an install script would compile, and loads it in a fresh
 * process: the binary it loads must be one of `prebuilds/`, and it must hash and verify.
 */
describe('argon2 without install scripts', () => {
  const installed = path.dirname(require.resolve('argon2/package.json'));
  let root: string;

  beforeAll(() => {
    root = mkdtempSync(path.join(tmpdir(), 'argon2-fresh-'));
    const modules = path.join(root, 'node_modules');
    mkdirSync(path.join(modules, '@phc'), { recursive: true });
    cpSync(installed, path.join(modules, 'argon2'), {
      recursive: true,
      filter: (source) => path.relative(installed, source).split(path.sep)[0] !== 'build',
    });
    for (const dependency of ['node-gyp-build', '@phc/format']) {
      symlinkSync(path.dirname(require.resolve(`${dependency}/package.json`)), path.join(modules, dependency));
    }
  });

  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('loads its prebuilt binary and hashes with it', () => {
    const script = `
      const argon2 = require('argon2');
      const binary = require('node-gyp-build').path(require('path').dirname(require.resolve('argon2')));
      argon2.hash('secret', { type: argon2.argon2id, memoryCost: 8192, timeCost: 1, parallelism: 1 })
        .then((hash) => argon2.verify(hash, 'secret').then((ok) => console.log(JSON.stringify({ binary, hash, ok }))));
    `;
    const output = execFileSync(process.execPath, ['-e', script], { cwd: root, encoding: 'utf8' });
    const { binary, hash, ok } = JSON.parse(output) as { binary: string; hash: string; ok: boolean };
    expect(path.relative(path.join(root, 'node_modules', 'argon2'), binary).split(path.sep)[0]).toBe('prebuilds');
    expect(hash).toMatch(/^\$argon2id\$v=19\$m=8192,p=1,t=1\$/);
    expect(ok).toBe(true);
  });
});
