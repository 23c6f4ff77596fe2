/**
 * Production configuration fails fast: each process started with NODE_ENV=production and nothing else
 * refuses to start, and its one error names every environment-specific variable it needs, so an
 * operator fixes the deployment in one round instead of finding a 127.0.0.1 default at the first request.
 */
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';

import { DEV_GATEWAY_CLIENT_SECRET } from '@acct/config';

const repoRoot = join(__dirname, '..', '..');

const APPS = ['gateway', 'identity', 'auth', 'platform', 'mailer'] as const;
type App = (typeof APPS)[number];

const EVERY_PROCESS = ['REGION', 'BIND_HOST'];
const GRPC_CLIENT = ['IDENTITY_GRPC_ADDR', 'AUTH_GRPC_ADDR', 'PLATFORM_GRPC_ADDR', 'TOKEN_ISSUER'];
const OBJECT_STORAGE = ['S3_ENDPOINT', 'S3_REGION', 'S3_BUCKET', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY'];

/** What each process cannot start without in production (docs/configuration.md, "Production"). */
const REQUIRED: Record<App, string[]> = {
  // Every process that verifies tokens reads the revocations: REDIS_URL and NATS_URL.
  gateway: [...EVERY_PROCESS, ...GRPC_CLIENT, 'REDIS_URL', 'NATS_URL', 'GATEWAY_CLIENT_SECRET'],
  identity: [...EVERY_PROCESS, ...GRPC_CLIENT, 'REDIS_URL', 'NATS_URL', 'IDENTITY_DATABASE_URL'],
  auth: [
    ...EVERY_PROCESS,
    ...GRPC_CLIENT,
    'REDIS_URL',
    'NATS_URL',
    'AUTH_DATABASE_URL',
    'AUTH_KEY_ENCRYPTION_KEY',
    'GATEWAY_CLIENT_SECRET',
  ],
  platform: [...EVERY_PROCESS, ...GRPC_CLIENT, 'REDIS_URL', 'NATS_URL', ...OBJECT_STORAGE, 'PLATFORM_DATABASE_URL'],
  mailer: [...EVERY_PROCESS, 'NATS_URL', ...OBJECT_STORAGE, 'SMTP_URL', 'MAIL_FROM', 'PUBLIC_URL'],
};

/** Only what a shell needs: no variable of the project's leaks in from the test runner. */
const bareEnvironment = (extra: Record<string, string> = {}) => ({ PATH: process.env.PATH ?? '', ...extra });

interface Exit {
  code: number | null;
  output: string;
}

/** Starts the app's real entry point from source, as `node dist/apps/<app>/src/main.js` runs it. */
const start = (app: App, env: Record<string, string>): Promise<Exit> =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, ['-r', './tools/run-ts.cjs', `apps/${app}/src/main.ts`], {
      cwd: repoRoot,
      env: bareEnvironment(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    // A process that did not refuse would serve: stop it, and the assertions below say why.
    const guard = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('exit', (code) => {
      clearTimeout(guard);
      resolve({ code, output });
    });
  });

/** The variables named in a ConfigError message (`  - NAME: reason` lines). */
const namedVariables = (output: string): string[] => {
  const fatal = output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level?: string; message?: string })
    .find((line) => line.level === 'fatal');
  return [...(fatal?.message ?? '').matchAll(/^\s+- (\w+):/gm)].map((match) => match[1]);
};

/**
 * Each app's variables whose development default points at this machine or its local stand-ins, read from
 * the app's own config schema: a variable someone adds later with such a default is caught here too.
 */
const localDefaults = (): Record<App, string[]> => {
  const script = `
    const path = require('node:path');
    const { loadConfig } = require('@acct/config');
    const local = /127\\.0\\.0\\.1|localhost|\\.local\\b|S3RVER|local-1/;
    const result = {};
    for (const app of ${JSON.stringify(APPS)}) {
      const shape = require(path.resolve('apps', app, 'src', 'config.ts'))[app + 'Env'];
      const config = loadConfig(shape, {});
      result[app] = Object.keys(shape).filter((key) => local.test(String(config[key] ?? '')));
    }
    process.stdout.write(JSON.stringify(result));`;
  const child = spawnSync(process.execPath, ['-r', './tools/run-ts.cjs', '-e', script], {
    cwd: repoRoot,
    encoding: 'utf8',
    env: bareEnvironment(),
  });
  if (child.status !== 0) throw new Error(`loading the apps' config failed:\n${child.stderr}`);
  return JSON.parse(child.stdout) as Record<App, string[]>;
};

describe('NODE_ENV=production with nothing else set', () => {
  let exits: Record<App, Exit>;
  let local: Record<App, string[]>;
  beforeAll(async () => {
    const results = await Promise.all(APPS.map((app) => start(app, { NODE_ENV: 'production' })));
    exits = Object.fromEntries(APPS.map((app, index) => [app, results[index]])) as Record<App, Exit>;
    local = localDefaults();
  }, 120_000);

  it.each(APPS)('%s refuses to start (exit 1) with one error naming every variable it needs', (app) => {
    const { code, output } = exits[app];
    expect([code, namedVariables(output).sort()]).toEqual([1, [...REQUIRED[app]].sort()]);
    expect(output).toContain('must be set when NODE_ENV=production');
  });

  it.each(APPS)('%s names every variable whose default points at a developer machine', (app) => {
    const named = new Set(namedVariables(exits[app].output));
    expect(local[app].length).toBeGreaterThan(0);
    expect(local[app].filter((key) => !named.has(key))).toEqual([]);
  });

  it('auth refuses the development key encryption key in production even when set explicitly', async () => {
    const set = Object.fromEntries(REQUIRED.auth.map((key) => [key, `placeholder-${key}`]));
    const { code, output } = await start('auth', {
      ...set,
      NODE_ENV: 'production',
      AUTH_DATABASE_URL: 'postgresql://u:p@db.example:5432/auth',
      TOKEN_ISSUER: 'https://accounts.example',
      IDENTITY_GRPC_ADDR: 'identity:50051',
      AUTH_GRPC_ADDR: 'auth:50052',
      PLATFORM_GRPC_ADDR: 'platform:50053',
      REDIS_URL: 'redis://redis.example:6379',
      NATS_URL: 'nats://nats.example:4222',
      AUTH_KEY_ENCRYPTION_KEY: 'ZGV2LW9ubHkta2V5LWVuY3J5cHRpb24ta2V5LTMyYiE=',
    });
    expect([code, namedVariables(output)]).toEqual([1, ['AUTH_KEY_ENCRYPTION_KEY']]);
  }, 60_000);

  it.each(['gateway', 'auth'] as const)(
    '%s refuses the development gateway client secret in production even when set explicitly',
    async (app) => {
      const set = Object.fromEntries(REQUIRED[app].map((key) => [key, `placeholder-${key}`]));
      const { code, output } = await start(app, {
        ...set,
        NODE_ENV: 'production',
        ...(app === 'auth'
          ? {
              AUTH_DATABASE_URL: 'postgresql://u:p@db.example:5432/auth',
              AUTH_KEY_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'),
            }
          : {}),
        TOKEN_ISSUER: 'https://accounts.example',
        IDENTITY_GRPC_ADDR: 'identity:50051',
        AUTH_GRPC_ADDR: 'auth:50052',
        PLATFORM_GRPC_ADDR: 'platform:50053',
        REDIS_URL: 'redis://redis.example:6379',
        NATS_URL: 'nats://nats.example:4222',
        GATEWAY_CLIENT_SECRET: DEV_GATEWAY_CLIENT_SECRET,
      });
      expect([code, namedVariables(output)]).toEqual([1, ['GATEWAY_CLIENT_SECRET']]);
    },
    60_000,
  );
});
