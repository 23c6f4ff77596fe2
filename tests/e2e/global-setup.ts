import { execFileSync } from 'node:child_process';
import path from 'node:path';

// Jest applies no module aliases to a global setup, so the lib is imported by path.
import { databaseUrl, SERVICES_WITH_DATABASES, templateDatabase } from '../../libs/testing/src/databases';

/** Migrates one template database per service; every test stack clones them. */
export default function globalSetup() {
  const root = path.resolve(__dirname, '../..');
  const env = { ...process.env };
  for (const service of SERVICES_WITH_DATABASES) {
    env[`${service.toUpperCase()}_DATABASE_URL`] = databaseUrl(templateDatabase(service));
  }
  execFileSync(process.execPath, [path.join(root, 'tools/prisma.mjs'), 'deploy'], { cwd: root, env, stdio: 'ignore' });
}
