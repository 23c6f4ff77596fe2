#!/usr/bin/env node
// Generated code: Prisma clients for each service (not checked in) and the gRPC contracts from
// proto/ (checked in). `--check` fails when the checked-in contracts are not what proto/ generates.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { bin, root, run } from './lib.mjs';

const CONTRACTS = path.join(root, 'libs/contracts/src/generated');

function generateContracts(outDir) {
  fs.rmSync(outDir, { recursive: true, force: true });
  const template = fs
    .readFileSync(path.join(root, 'buf.gen.yaml'), 'utf8')
    .replace('out: libs/contracts/src/generated', `out: ${outDir}`);
  const config = path.join(os.tmpdir(), `buf.gen.${process.pid}.yaml`);
  fs.writeFileSync(config, template);
  try {
    run(bin('buf'), ['generate', '--template', config]);
  } finally {
    fs.rmSync(config, { force: true });
  }
}

function listFiles(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { recursive: true })
    .filter((entry) => fs.statSync(path.join(dir, entry)).isFile())
    .sort();
}

const check = process.argv.includes('--check');
run(bin('buf'), ['lint']);
if (check) {
  const fresh = fs.mkdtempSync(path.join(os.tmpdir(), 'contracts-'));
  generateContracts(fresh);
  const stale = [...new Set([...listFiles(fresh), ...listFiles(CONTRACTS)])].filter((file) => {
    const a = path.join(fresh, file);
    const b = path.join(CONTRACTS, file);
    return !fs.existsSync(a) || !fs.existsSync(b) || fs.readFileSync(a, 'utf8') !== fs.readFileSync(b, 'utf8');
  });
  fs.rmSync(fresh, { recursive: true, force: true });
  if (stale.length > 0) {
    console.error(`✖ generated contracts are out of date (${stale.join(', ')}); run: npm run generate`);
    process.exit(1);
  }
  console.log('✓ generated gRPC contracts match proto/');
} else {
  // Generated aside, then only what changed is written: the checked-in files never vanish or get
  // rewritten under a test run or a build that is reading them.
  const fresh = fs.mkdtempSync(path.join(os.tmpdir(), 'contracts-'));
  generateContracts(fresh);
  fs.mkdirSync(CONTRACTS, { recursive: true });
  for (const file of listFiles(CONTRACTS)) {
    if (!fs.existsSync(path.join(fresh, file))) fs.rmSync(path.join(CONTRACTS, file));
  }
  const folders = fs
    .readdirSync(CONTRACTS, { recursive: true })
    .map((entry) => path.join(CONTRACTS, entry))
    .filter((entry) => fs.statSync(entry).isDirectory());
  for (const folder of folders.sort().reverse()) {
    if (fs.readdirSync(folder).length === 0) fs.rmdirSync(folder);
  }
  for (const file of listFiles(fresh)) {
    const content = fs.readFileSync(path.join(fresh, file));
    const target = path.join(CONTRACTS, file);
    if (fs.existsSync(target) && fs.readFileSync(target).equals(content)) continue;
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, content);
  }
  fs.rmSync(fresh, { recursive: true, force: true });
}
run(process.execPath, [path.join(root, 'tools/prisma.mjs'), 'generate']);
