#!/usr/bin/env node
// The browser the end-to-end tests drive (tests/e2e/activation-page.e2e.spec.ts): Debian's `chromium`
// package, driven by playwright-core. Playwright's own browser download cannot run here, so the test
// command installs the distribution's package when it is missing. Runnable on its own too:
// `node tools/browser.mjs`.
import { fileURLToPath } from 'node:url';

import { ensureDebianPackage } from './lib.mjs';

export const CHROMIUM = '/usr/bin/chromium';

/**
 * Installs Debian's chromium with apt-get when `/usr/bin/chromium` is missing. Never fails the caller: if
 * it cannot install (not root, no apt-get), it says so, and the browser tests then fail naming the
 * missing binary.
 */
export const ensureBrowser = () =>
  ensureDebianPackage({ binary: CHROMIUM, pkg: 'chromium', what: 'the browser tests', recommends: true });

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exit(ensureBrowser() ? 0 : 1);
