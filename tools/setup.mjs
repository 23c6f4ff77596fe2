#!/usr/bin/env node
// `npm run setup`: what `npm run up` does before it starts anything (dependencies when missing,
// generated code, a build in dist/, Postgres/Redis/NATS, migrated databases), for running the
// processes yourself. Safe to repeat.
import { ensureDependencies, onSupportedNode } from './lib.mjs';
import { APPS, prepare } from './stack.mjs';

ensureDependencies();
await onSupportedNode();

await prepare();

console.log(`
✔ ready. Run each process from the repository root, e.g. in its own terminal:
${APPS.map((app) => `  node dist/apps/${app}/src/main.js 2>&1 | node tools/log-format.mjs`).join('\n')}
with, unless S3_ENDPOINT / SMTP_URL point at your own servers:
  node tools/dev-servers/object-storage.mjs
  node tools/dev-servers/smtp-catcher.mjs
Or all of them at once: npm run up`);
