#!/usr/bin/env node
// `node bench/run.mjs` (or `npm run bench`): runs the TypeScript driver bench/run.ts from source.
// Environment: BENCH_DURATION (seconds per scenario, default 10), BENCH_WARMUP (default 2),
// BENCH_CONNECTIONS (default 10). See bench/README.md.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const child = spawn(process.execPath, ['-r', './tools/run-ts.cjs', 'bench/run.ts'], { cwd: root, stdio: 'inherit' });

// The driver stops the stack and the baseline on a signal; pass it on and wait for it to finish.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => child.kill(signal));
}
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
