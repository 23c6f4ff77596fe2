import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { repositoryRoot } from '@acct/testing';

const script = path.join(repositoryRoot, 'tools/lint/folder-cycles.mjs');

/** Runs the folder-cycle check as lint does: its exit status and what it printed. */
function folderCycles(cwd: string, ...projects: string[]) {
  const result = spawnSync(process.execPath, [script, ...projects], { cwd, encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

/** Writes `files` (path → content) under a fresh temporary folder; its path. */
function tree(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folder-cycles-'));
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
  return dir;
}

describe('the folder-cycle lint (tools/lint/folder-cycles.mjs)', () => {
  const made: string[] = [];
  const fixture = (files: Record<string, string>) => {
    const dir = tree(files);
    made.push(dir);
    return dir;
  };

  afterAll(() => {
    for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('fails and names the cycle when two feature folders import each other through different files', () => {
    // No file cycle (eslint's import-x/no-cycle sees none): tokens/grant → login/check, login/steps → tokens/issuer.
    const dir = fixture({
      'apps/auth/src/tokens/grant.ts': "import { check } from '../login/check';\nexport const grant = check;\n",
      'apps/auth/src/tokens/issuer.ts': 'export const issue = 1;\n',
      'apps/auth/src/login/check.ts': 'export const check = 1;\n',
      'apps/auth/src/login/steps.ts': "import { issue } from '../tokens/issuer';\nexport const steps = issue;\n",
    });
    const { status, output } = folderCycles(dir, 'apps/auth');
    expect(status).toBe(1);
    expect(output).toContain('apps/auth/src: folder import cycle tokens/ → login/ → tokens/');
  });

  it('names a cycle through three folders, and follows imports from nested files', () => {
    const dir = fixture({
      'apps/identity/src/activation/set.ts': "import { hash } from '../passwords/hasher';\nexport const set = hash;\n",
      'apps/identity/src/passwords/hasher.ts':
        "import { rules } from '../users/rules/email';\nexport const hash = rules;\n",
      'apps/identity/src/users/rules/email.ts': 'export const rules = 1;\n',
      'apps/identity/src/users/create.ts':
        "import { token } from '../activation/token';\nexport const create = token;\n",
      'apps/identity/src/activation/token.ts': 'export const token = 1;\n',
    });
    const { status, output } = folderCycles(dir, 'apps/identity');
    expect(status).toBe(1);
    expect(output).toContain('activation/ → passwords/ → users/ → activation/');
  });

  it('passes layered folders, and ignores specs and the root files that wire everything', () => {
    const dir = fixture({
      'apps/gateway/src/http/problem.ts': 'export const problem = 1;\n',
      'apps/gateway/src/rate-limits/hook.ts':
        "import { problem } from '../http/problem';\nexport const hook = problem;\n",
      // A spec may drive the lower layer through the upper one; main.ts imports every folder.
      'apps/gateway/src/http/problem.spec.ts':
        "import { hook } from '../rate-limits/hook';\nexport const used = hook;\n",
      'apps/gateway/src/main.ts': "import { hook } from './rate-limits/hook';\nexport const main = hook;\n",
    });
    expect(folderCycles(dir, 'apps/gateway')).toEqual({ status: 0, output: '' });
  });

  it('passes on this repository: no app has a folder cycle', () => {
    const { status, output } = folderCycles(repositoryRoot);
    expect(output).toBe('');
    expect(status).toBe(0);
  });
});
