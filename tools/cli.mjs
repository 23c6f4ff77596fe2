#!/usr/bin/env node
// Operator CLI (contract §0): `npm run cli -- <command> [options]`, `npm run cli -- --help`.
// Each service runs its own part against its own database (apps/<service>/src/cli.ts, one JSON line
// on stdout). Every command is one entry of COMMANDS below: its options (parsed strictly with
// node:util parseArgs: an unknown option, a missing value or a missing required option is an error
// naming the flag, exit 2), what it runs and how its answer reads. Adding a command = one entry here
// (plus its implementation in the service's cli.ts).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { parseArgs } from 'node:util';

import { root } from './lib.mjs';

/** Exit status of a command line that cannot be understood. */
const USAGE_ERROR = 2;

/** Options every command takes. */
const COMMON = {
  json: { type: 'boolean', help: 'print the answer as one JSON line' },
  help: { type: 'boolean', short: 'h', help: 'show this help' },
};

/** Runs one service's CLI with the given arguments; its JSON answer, or the process exits with its status. */
function service(name, args) {
  const result = spawnSync(
    process.execPath,
    ['-r', path.join(root, 'tools/run-ts.cjs'), `apps/${name}/src/cli.ts`, ...args],
    {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { LOG_LEVEL: 'warn', ...process.env },
      // No cap on the answer: spawnSync's default (1 MiB) killed a service mid-answer, so list-clients
      // of an org with a few thousand clients exited 1 and said nothing.
      maxBuffer: Infinity,
    },
  );
  if (result.error) {
    process.stderr.write(`${result.stderr ?? ''}cli: the ${name} service's CLI failed: ${result.error.message}\n`);
    process.exit(1);
  }
  if (result.status !== 0) {
    process.stderr.write(result.stderr);
    process.exit(result.status || 1);
  }
  const line = result.stdout.trim().split('\n').at(-1) ?? '';
  return JSON.parse(line);
}

/**
 * The command's own options (not --json/--help) as `--name=value` / `--flag` arguments again: joined,
 * so a value that starts with a dash (`--name=-beta`) reaches the service as a value, where
 * `--name -beta` would be refused as ambiguous.
 */
function forwarded(values, options) {
  return Object.keys(options).flatMap((name) => {
    const value = values[name];
    if (value === undefined || value === false) return [];
    return value === true ? [`--${name}`] : [`--${name}=${value}`];
  });
}

/** A command that one service runs under the same name and options. */
const forwardTo = (serviceName) =>
  function run(values) {
    return service(serviceName, [this.name, ...forwarded(values, this.options)]);
  };

const COMMANDS = [
  {
    name: 'bootstrap',
    summary:
      'an org, an active admin in it and a confidential client_credentials client with the admin scopes; ' +
      'idempotent (same ids again, client_secret null unless --rotate-secret)',
    options: {
      org: { type: 'string', required: true, value: '<name>' },
      email: { type: 'string', required: true, value: '<admin e-mail>' },
      password: { type: 'string', required: true, value: '<password>' },
      'display-name': { type: 'string', value: '<name>' },
      'rotate-secret': { type: 'boolean', help: 'give the bootstrap client a new secret' },
    },
    run(values) {
      const { 'rotate-secret': rotate, ...identityValues } = values;
      const { org_id, admin_user_id } = service('identity', ['bootstrap', ...forwarded(identityValues, this.options)]);
      const client = service('auth', [
        'ensure-bootstrap-client',
        '--org-id',
        org_id,
        ...(rotate ? ['--rotate-secret'] : []),
      ]);
      return { org_id, admin_user_id, client_id: client.client_id, client_secret: client.client_secret };
    },
    text: (r) =>
      [
        `org_id         ${r.org_id}`,
        `admin_user_id  ${r.admin_user_id}`,
        `client_id      ${r.client_id}`,
        `client_secret  ${r.client_secret ?? '(unchanged; only a hash is kept — use --rotate-secret for a new one)'}`,
      ].join('\n'),
  },
  {
    name: 'create-client',
    summary:
      'another client of an org (contract §6): confidential (a secret, shown once) or public (none); ' +
      'defaults: confidential, client_credentials',
    options: {
      'org-id': { type: 'string', required: true, value: '<uuid>' },
      name: { type: 'string', required: true, value: '<name>' },
      type: { type: 'string', value: 'confidential|public' },
      'grant-types': {
        type: 'string',
        value: '<grant>[,<grant>…]',
        help: 'of authorization_code, refresh_token, client_credentials, password',
      },
      'redirect-uris': {
        type: 'string',
        value: '<uri>[,<uri>…]',
        help: 'https, or http on 127.0.0.1/[::1]/localhost (any port); exact match',
      },
      scopes: { type: 'string', required: true, value: '"<scope> <scope>…"' },
      roles: { type: 'string', value: '<role>[,<role>…]' },
    },
    run: forwardTo('auth'),
    text: (r) => `client_id      ${r.client_id}\nclient_secret  ${r.client_secret ?? '(none: a public client)'}`,
  },
  {
    name: 'list-clients',
    summary: "an org's clients, without their secrets",
    options: { 'org-id': { type: 'string', required: true, value: '<uuid>' } },
    run: forwardTo('auth'),
    text: (r) =>
      r.clients.map((c) => `${c.client_id}  ${c.type.padEnd(12)} ${c.name}  [${c.grant_types.join(',')}]`).join('\n'),
  },
  {
    name: 'rotate-client-secret',
    summary: 'a new secret for a confidential client; the old one stops working at once',
    options: { 'client-id': { type: 'string', required: true, value: '<id>' } },
    run: forwardTo('auth'),
    text: (r) => `client_id      ${r.client_id}\nclient_secret  ${r.client_secret}`,
  },
  {
    name: 'delete-client',
    summary: 'a client can no longer authenticate or refresh its tokens',
    options: { 'client-id': { type: 'string', required: true, value: '<id>' } },
    run: forwardTo('auth'),
    text: (r) => `client ${r.client_id} deleted`,
  },
  {
    name: 'rotate-signing-key',
    summary: 'a new ES256 signing key; the old one stays published until the tokens it signed expire',
    options: {
      'withdraw-old': {
        type: 'boolean',
        help: 'withdraw the old keys at once (they may have leaked): tokens they signed are refused',
      },
    },
    run: forwardTo('auth'),
    text: (r) => `new signing key ${r.kid}`,
  },
  {
    name: 'reseal-secrets',
    summary:
      'after AUTH_KEY_ENCRYPTION_KEY changed: encrypts the stored secrets (signing keys, TOTP) under the new key, ' +
      'reading them under AUTH_KEY_ENCRYPTION_KEY_PREVIOUS',
    options: {},
    run: forwardTo('auth'),
    text: (r) => `${r.signing_keys} signing keys and ${r.totp_secrets} TOTP secrets moved under the current key`,
  },
  {
    name: 'set-rate-limit',
    summary: "an org's own tier for one endpoint group",
    options: {
      'org-id': { type: 'string', required: true, value: '<uuid>' },
      group: { type: 'string', required: true, value: '<group>' },
      'rate-per-minute': { type: 'string', required: true, value: '<n>' },
      burst: { type: 'string', required: true, value: '<n>' },
      scope: { type: 'string', required: true, value: 'per-ip|per-token' },
    },
    run: forwardTo('platform'),
    text: (r) => JSON.stringify(r.tiers, null, 2),
  },
  {
    name: 'set-quota',
    summary: "an org's own limit of one quota",
    options: {
      'org-id': { type: 'string', required: true, value: '<uuid>' },
      dimension: { type: 'string', required: true, value: 'compute|storage|network|api' },
      name: { type: 'string', required: true, value: '<quota name>' },
      limit: { type: 'string', required: true, value: '<n>' },
    },
    run: forwardTo('platform'),
    text: (r) => `${r.dimension} / ${r.name}: limit ${r.limit}`,
  },
];

function synopsis(command) {
  const options = Object.entries(command.options).map(([name, option]) => {
    const text = option.type === 'boolean' ? `--${name}` : `--${name} ${option.value}`;
    return option.required ? text : `[${text}]`;
  });
  return [command.name, ...options, '[--json]'].join(' ');
}

function help(command) {
  if (command) {
    const flags = Object.entries({ ...command.options, ...COMMON })
      .filter(([, option]) => option.help)
      .map(([name, option]) => `  --${name.padEnd(16)} ${option.help}`);
    return [
      `usage: npm run cli -- ${synopsis(command)}`,
      '',
      command.summary,
      ...(flags.length ? ['', ...flags] : []),
    ].join('\n');
  }
  return [
    'usage: npm run cli -- <command> [options]      (npm run cli -- <command> --help for one command)',
    '',
    'commands:',
    ...COMMANDS.flatMap((entry) => [`  ${synopsis(entry)}`, `      ${entry.summary}`]),
  ].join('\n');
}

/** A command line that cannot be understood: the reason, how to call the command, exit 2. */
function usageError(message, command) {
  process.stderr.write(`cli: ${message}\n\n${help(command)}\n`);
  process.exit(USAGE_ERROR);
}

function main(argv) {
  const [name, ...rest] = argv;
  if (name === undefined) usageError('a command is required');
  if (name === '--help' || name === '-h' || name === 'help') {
    console.log(help());
    return;
  }
  const command = COMMANDS.find((entry) => entry.name === name);
  if (!command) usageError(`unknown command ${JSON.stringify(name)}`);
  let values;
  try {
    const options = Object.fromEntries(
      Object.entries({ ...command.options, ...COMMON }).map(([key, { type, short }]) => [
        key,
        short ? { type, short } : { type },
      ]),
    );
    let tokens;
    ({ values, tokens } = parseArgs({ args: rest, options, strict: true, allowPositionals: false, tokens: true }));
    // parseArgs keeps the last of a repeated option: `delete-client --client-id A --client-id B`
    // deleted B alone and said nothing of A.
    const names = tokens.filter((token) => token.kind === 'option').map((token) => token.name);
    const repeated = names.find((optionName, index) => names.indexOf(optionName) !== index);
    if (repeated !== undefined) throw new Error(`--${repeated} is given more than once`);
  } catch (error) {
    usageError(error.message, command);
  }
  if (values.help) {
    console.log(help(command));
    return;
  }
  const missing = Object.entries(command.options)
    .filter(([key, option]) => option.required && (values[key] === undefined || values[key] === ''))
    .map(([key]) => `--${key}`);
  if (missing.length > 0) usageError(`missing ${missing.join(', ')}`, command);
  const result = command.run(values);
  console.log(values.json ? JSON.stringify(result) : command.text(result));
}

main(process.argv.slice(2));
