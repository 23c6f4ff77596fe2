// Small helpers shared by the project's scripts (setup, generate, test, up).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

let commandStdout = 1;
/** Shows the output of later commands on stderr: for a script whose stdout carries data (`up --json`). */
export function commandOutputToStderr() {
  commandStdout = 2;
}

/** Runs a command in the repository, output shown; exits the script when it fails. */
export function run(command, args, { env = {}, allowFailure = false } = {}) {
  const result = spawnSync(command, args, {
    cwd: root,
    stdio: ['inherit', commandStdout, 'inherit'],
    env: { ...process.env, ...env },
  });
  if (result.status !== 0 && !allowFailure) {
    console.error(`\n✖ ${command} ${args.join(' ')} failed (exit ${result.status ?? result.signal})`);
    process.exit(result.status || 1);
  }
  return result.status ?? 1;
}

export const bin = (name) => path.join(root, 'node_modules', '.bin', name);

/**
 * Installs the locked dependencies when node_modules is missing or older than the lock file. `npm install`
 * rather than `npm ci`: npm leaves other platforms' optional packages (swc, buf, nx binaries) out of
 * the lock file, and `npm ci` then refuses the lock as out of sync; `npm install` installs exactly the
 * locked versions.
 */
export function ensureDependencies() {
  const marker = path.join(root, 'node_modules', '.package-lock.json');
  const lock = path.join(root, 'package-lock.json');
  if (fs.existsSync(marker) && fs.statSync(marker).mtimeMs >= fs.statSync(lock).mtimeMs) return;
  console.log('› installing dependencies (npm install, locked versions)');
  run('npm', ['install', '--no-audit', '--no-fund']);
}

export const step = (title) => console.log(`\n› ${title}`);
