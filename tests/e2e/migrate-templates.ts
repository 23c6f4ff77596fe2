import { execFileSync } from 'node:child_process';
import path from 'node:path';

import { databaseUrl, SERVICES_WITH_DATABASES, templateDatabase } from '@acct/testing';

/** Migrates one template database per service; every test stack clones them. */
export default function migrateTemplates() {
  const root = path.resolve(__dirname, '../..');
  const env = { ...process.env };
  for (const service of SERVICES_WITH_DATABASES) {
    env[`${service.toUpperCase()}_DATABASE_URL`] = databaseUrl(templateDatabase(service));
  }
  execFileSync(process.execPath, [path.join(root, 'tools/prisma.mjs'), 'deploy'], { cwd: root, env, stdio: 'ignore' });
}
