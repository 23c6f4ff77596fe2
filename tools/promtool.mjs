#!/usr/bin/env node
// Prometheus's `promtool`, which the tests use to check the alert rules (docs/alerts.rules.yml) and every
// process's /metrics (tests/e2e/prometheus.e2e.spec.ts): Debian's `prometheus` package ships it. The test
// command installs the package when promtool is missing, the way tools/browser.mjs installs chromium.
// Runnable on its own too: `node tools/promtool.mjs`.
import { fileURLToPath } from 'node:url';

import { ensureDebianPackage } from './lib.mjs';

export const PROMTOOL = '/usr/bin/promtool';

export const ensurePromtool = () =>
  ensureDebianPackage({ binary: PROMTOOL, pkg: 'prometheus', what: 'the alert rules and /metrics tests' });

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exit(ensurePromtool() ? 0 : 1);
