#!/usr/bin/env node
// `node bench/k8s-memory.mjs`: sets every Deployment's memory request and limit in k8s/base/ (and the
// table in k8s/README.md) from the last `npm run bench` (bench/results/latest.json): the request is the
// largest RSS the process reached under the benchmark's load, rounded up to 16 MiB; the limit twice
// the request, and at least the process's peak since start; and the ProcessMemoryNearLimit alert
// (docs/alerts.rules.yml) at 90% of each limit. tests/deploy checks the manifests and the alert agree.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const APPS = ['identity', 'auth', 'platform', 'gateway', 'mailer'];
const report = JSON.parse(fs.readFileSync(path.join(root, 'bench', 'results', 'latest.json'), 'utf8'));

/** Request and limit (MiB) for one app from its measured memory. */
function sizing(memory) {
  const request = Math.ceil(memory.peak_under_load_mb / 16) * 16;
  const limit = Math.max(request * 2, Math.ceil(memory.lifetime_peak_mb / 16) * 16);
  return { request, limit };
}

const rows = [];
for (const app of APPS) {
  const memory = report.memory?.[app];
  if (!memory?.peak_under_load_mb) throw new Error(`bench/results/latest.json has no memory for ${app}`);
  const { request, limit } = sizing(memory);
  const file = path.join(root, 'k8s', 'base', `${app}.yaml`);
  let text = fs.readFileSync(file, 'utf8');
  const before = text;
  text = text.replace(
    /(# Memory from the measured peak RSS under load \(bench\/results\/latest\.md: )[\d.]+( MiB\))/,
    `$1${memory.peak_under_load_mb}$2`,
  );
  text = text.replace(/(requests:\n(?:\s+cpu: .*\n)?\s+memory: )\d+Mi/, (_whole, head) => `${head}${request}Mi`);
  text = text.replace(/(limits:\n(?:\s+cpu: .*\n)?\s+memory: )\d+Mi/, (_whole, head) => `${head}${limit}Mi`);
  if (text === before) console.warn(`${app}: nothing changed in ${path.relative(root, file)}`);
  fs.writeFileSync(file, text);
  rows.push({ app, peak: memory.peak_under_load_mb, request, limit });
  console.log(`${app}: peak under load ${memory.peak_under_load_mb} MiB → request ${request}Mi, limit ${limit}Mi`);
}

const readme = path.join(root, 'k8s', 'README.md');
const table = [
  '| process  | peak RSS under load | request | limit |',
  '| -------- | ------------------- | ------- | ----- |',
  ...rows.map(
    (row) =>
      `| ${row.app.padEnd(8)} | ${`${row.peak} MiB`.padEnd(19)} | ${`${row.request}Mi`.padEnd(7)} | ${`${row.limit}Mi`.padEnd(5)} |`,
  ),
].join('\n');
const text = fs.readFileSync(readme, 'utf8');
const tablePattern = /\| process +\| peak RSS[^\n]*\n\|[-| ]+\|\n(?:\|[^\n]*\|\n)+/;
if (!tablePattern.test(text)) throw new Error('k8s/README.md: the resources table was not found');
fs.writeFileSync(readme, text.replace(tablePattern, `${table}\n`));

const rulesFile = path.join(root, 'docs', 'alerts.rules.yml');
let rules = fs.readFileSync(rulesFile, 'utf8');
for (const row of rows) {
  const clause = new RegExp(`(process_resident_memory_bytes\\{service="${row.app}"\\}\\) > 0\\.9 \\* )\\d+`);
  if (!clause.test(rules)) throw new Error(`docs/alerts.rules.yml: no ProcessMemoryNearLimit clause for ${row.app}`);
  rules = rules.replace(clause, (_whole, head) => `${head}${row.limit}`);
}
fs.writeFileSync(rulesFile, rules);
