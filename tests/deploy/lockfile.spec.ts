/**
 * Reproducible installs: `npm ci` accepts package-lock.json on a fresh clone, on any platform. npm has
 * left other platforms' optional binaries (swc, buf, resolver bindings) out of lock files it wrote, and
 * `npm ci` then refuses the lock as out of sync; the Dockerfile, `npm run up` and `npm test` all
 * install with `npm ci`.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const repoRoot = join(__dirname, '..', '..');

interface LockEntry {
  version?: string;
  optionalDependencies?: Record<string, string>;
  dependencies?: Record<string, string>;
}
interface Lock {
  packages: Record<string, LockEntry>;
}

const readLock = (): Lock => JSON.parse(readFileSync(join(repoRoot, 'package-lock.json'), 'utf8')) as Lock;

/** Where Node would find `name` from the package at `from` (node_modules/a/node_modules/b, …). */
const resolves = (lock: Lock, from: string, name: string): boolean => {
  for (let dir = from; ; dir = dir.replace(/\/?node_modules\/(@[^/]+\/)?[^/]+$/, '')) {
    if (lock.packages[`${dir ? `${dir}/` : ''}node_modules/${name}`]) return true;
    if (!dir) return false;
  }
};

/** `npm ci --dry-run` on a copy of package.json and the given lock, in an empty folder. */
const npmCiDryRun = (lock: string) => {
  const dir = mkdtempSync(join(tmpdir(), 'acct-npm-ci-'));
  try {
    copyFileSync(join(repoRoot, 'package.json'), join(dir, 'package.json'));
    writeFileSync(join(dir, 'package-lock.json'), lock);
    const result = spawnSync('npm', ['ci', '--dry-run', '--ignore-scripts', '--no-audit', '--no-fund'], {
      cwd: dir,
      encoding: 'utf8',
    });
    return { status: result.status, output: `${result.stdout}${result.stderr}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

describe('package-lock.json', () => {
  it("records every package's optional dependencies, whatever platform they are for", () => {
    const lock = readLock();
    const missing = Object.entries(lock.packages).flatMap(([path, entry]) =>
      Object.keys(entry.optionalDependencies ?? {})
        .filter((name) => !resolves(lock, path, name))
        .map((name) => `${path || '(root)'} -> ${name}`),
    );
    expect(missing).toEqual([]);
  });

  it('npm ci accepts it on a fresh clone', () => {
    const { status, output } = npmCiDryRun(readFileSync(join(repoRoot, 'package-lock.json'), 'utf8'));
    expect([status, output.match(/npm error .*/g) ?? []]).toEqual([0, []]);
  }, 120_000);

  it('npm ci refuses a lock that lacks another platform binary (what this guards against)', () => {
    const lock = readLock();
    const [binding] = Object.keys(lock.packages).filter((path) => /node_modules\/@swc\/core-darwin-arm64$/.test(path));
    expect(binding).toBeDefined();
    delete lock.packages[binding];
    const { status, output } = npmCiDryRun(JSON.stringify(lock, null, 2));
    expect(status).not.toBe(0);
    expect(output).toMatch(/npm ci` can only install packages when your package.json and package-lock.json/);
  }, 120_000);
});
