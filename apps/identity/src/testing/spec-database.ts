import path from 'node:path';

import { createSpecDatabase as createDatabase, SpecDatabase } from '@acct/testing';

export type { SpecDatabase };

export const REPOSITORY_ROOT = path.resolve(__dirname, '../../../..');

/** A fresh identity database for one spec file, on the real migrations, dropped by `drop()`. */
export const createSpecDatabase = (): Promise<SpecDatabase> => createDatabase('identity');
