#!/usr/bin/env node
// Operator CLI (contract §0). Each service runs its own part against its own database:
//   npm run cli -- bootstrap --org <name> --email <admin e-mail> --password <pw> [--rotate-secret] [--json]
//   npm run cli -- create-client --org-id <uuid> --name <name> --scopes "<scopes>" [--roles <role>] [--json]
//   npm run cli -- rotate-signing-key [--json]
//   npm run cli -- set-quota --org-id <uuid> --dimension <d> --name <quota name> --limit <n>
//   npm run cli -- set-rate-limit --org-id <uuid> --group <group> --rate-per-minute <n> --burst <n> --scope per-ip|per-token
import { spawnSync } from 'node:child_process';
import path from 'node:path';

import { root } from './lib.mjs';

function service(name, args) {
  const result = spawnSync(
    process.execPath,
    ['-r', path.join(root, 'tools/run-ts.cjs'), `apps/${name}/src/cli.ts`, ...args],
    {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { LOG_LEVEL: 'warn', ...process.env },
    },
  );
  if (result.status !== 0) {
    process.stderr.write(result.stderr);
    process.exit(result.status || 1);
  }
  const line = result.stdout.trim().split('\n').at(-1) ?? '';
  return JSON.parse(line);
}

const [command, ...rest] = process.argv.slice(2);
const json = rest.includes('--json');
const args = rest.filter((arg) => arg !== '--json');
const option = (name) => {
  const index = args.indexOf(`--${name}`);
  return index >= 0 ? args[index + 1] : undefined;
};

function print(result, text) {
  console.log(json ? JSON.stringify(result) : text(result));
}

switch (command) {
  case 'bootstrap': {
    const identityArgs = [
      'bootstrap',
      '--org',
      option('org'),
      '--email',
      option('email'),
      '--password',
      option('password'),
    ];
    if (identityArgs.includes(undefined)) {
      console.error(
        'usage: npm run cli -- bootstrap --org <name> --email <admin e-mail> --password <pw> [--rotate-secret] [--json]',
      );
      process.exit(2);
    }
    const { org_id, admin_user_id } = service('identity', identityArgs);
    const client = service('auth', [
      'ensure-bootstrap-client',
      '--org-id',
      org_id,
      ...(args.includes('--rotate-secret') ? ['--rotate-secret'] : []),
    ]);
    print({ org_id, admin_user_id, client_id: client.client_id, client_secret: client.client_secret }, (r) =>
      [
        `org_id         ${r.org_id}`,
        `admin_user_id  ${r.admin_user_id}`,
        `client_id      ${r.client_id}`,
        `client_secret  ${r.client_secret ?? '(unchanged; only a hash is kept — use --rotate-secret for a new one)'}`,
      ].join('\n'),
    );
    break;
  }
  case 'create-client':
    print(
      service('auth', ['create-client', ...args]),
      (r) => `client_id      ${r.client_id}\nclient_secret  ${r.client_secret}`,
    );
    break;
  case 'set-rate-limit':
    print(service('platform', ['set-rate-limit', ...args]), (r) => JSON.stringify(r.tiers, null, 2));
    break;
  case 'set-quota':
    print(service('platform', ['set-quota', ...args]), (r) => `${r.dimension} / ${r.name}: limit ${r.limit}`);
    break;
  case 'rotate-signing-key':
    print(service('auth', ['rotate-signing-key']), (r) => `new signing key ${r.kid}`);
    break;
  default:
    console.error('usage: npm run cli -- bootstrap|create-client|rotate-signing-key …');
    process.exit(2);
}
