#!/usr/bin/env node
// The browser the end-to-end tests drive (tests/e2e/activation-page.e2e.spec.ts): Debian's `chromium`
// package, driven by playwright-core. Playwright's own browser download cannot run here, so the test
// command installs the distribution's package when it is missing. Runnable on its own too:
// `node tools/browser.mjs`.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

export const CHROMIUM = '/usr/bin/chromium';

const apt = (args) =>
  spawnSync('apt-get', args, {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  }).status === 0;

/**
 * Installs Debian's chromium with apt-get when `/usr/bin/chromium` is missing (`apt-get update` only if
 * the first try fails: the package lists may be missing or stale). Never fails the caller: if it cannot
 * install (not root, no apt-get), it says so, and the browser tests then fail naming the missing binary.
 */
export function ensureBrowser() {
  if (fs.existsSync(CHROMIUM)) return true;
  const root = process.getuid?.() === 0;
  const hasApt = spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status === 0;
  if (!root || !hasApt) {
    console.error(
      `✖ ${CHROMIUM} is missing and cannot be installed here (${root ? 'no apt-get' : 'not root'}): ` +
        'install Debian\'s "chromium" package (apt-get install chromium); the browser tests will fail without it.',
    );
    return false;
  }
  console.log(`› installing Debian's chromium for the browser tests (apt-get install -y chromium)`);
  // Waits for another apt-get (an unattended upgrade) rather than failing on its lock.
  const install = ['-o', 'DPkg::Lock::Timeout=300', 'install', '-y', 'chromium'];
  const installed = apt(install) || (apt(['update']) && apt(install));
  if (!installed || !fs.existsSync(CHROMIUM)) {
    console.error(`✖ apt-get could not install chromium: the browser tests will fail without ${CHROMIUM}.`);
    return false;
  }
  return true;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exit(ensureBrowser() ? 0 : 1);
