// The local stack, shared by `npm run setup` and `npm run up`: the preparation (dependencies,
// generated code, a build in dist/, Postgres/Redis/NATS, migrated databases) and the ports the
// processes listen on. Node built-ins only: it runs before the dependencies are installed.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

import { bin, ensureDependencies, root, run, step } from './lib.mjs';
import { ensureServices } from './services.mjs';

/** The five processes; each runs as `node dist/apps/<app>/src/main.js` from the repository root. */
export const APPS = ['identity', 'auth', 'platform', 'mailer', 'gateway'];

export const appEntry = (app) => path.join(root, 'dist', 'apps', app, 'src', 'main.js');

/**
 * How the processes run (tools/node-runtime.json, also the image's): V8's heap sizing and glibc's
 * allocator settings that keep their memory small. The environment given to `npm run up` wins.
 */
export const nodeRuntime = JSON.parse(fs.readFileSync(path.join(root, 'tools', 'node-runtime.json'), 'utf8'));

// Every port the processes listen on, by variable, with the defaults of each app's src/config.ts.
export const APP_PORTS = {
  IDENTITY_GRPC_PORT: 50051,
  IDENTITY_OPS_PORT: 9081,
  AUTH_GRPC_PORT: 50052,
  AUTH_OPS_PORT: 9082,
  PLATFORM_GRPC_PORT: 50053,
  PLATFORM_OPS_PORT: 9083,
  MAILER_OPS_PORT: 9084,
  GATEWAY_PORT: 8080,
  GATEWAY_OPS_PORT: 9080,
};

// The local object store and mail catcher (tools/dev-servers/), started by `npm run up` only when
// S3_ENDPOINT / SMTP_URL are not set.
export const LOCAL_PORTS = { LOCAL_S3_PORT: 9000, LOCAL_SMTP_PORT: 1025 };

export const portOf = (name, env = process.env) => Number(env[name] || APP_PORTS[name] || LOCAL_PORTS[name]);

/** Where the processes listen (BIND_HOST), as an address to connect to. */
export function localHost(env = process.env) {
  const host = env.BIND_HOST || '127.0.0.1';
  return host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
}

const canListen = (port, host) =>
  new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });

/** The given port variables whose ports something already listens on, as `8080 (GATEWAY_PORT)`. */
export async function busyPorts(names, env = process.env) {
  const host = env.BIND_HOST || '127.0.0.1';
  const busy = [];
  for (const name of names) {
    const port = portOf(name, env);
    if (!Number.isInteger(port) || port < 1 || port > 65535) continue; // the process itself names it
    const localOnly = name in LOCAL_PORTS;
    if (!(await canListen(port, localOnly ? '127.0.0.1' : host))) busy.push(`${port} (${name})`);
  }
  return busy;
}

/** Compiles apps/ and libs/ into dist/ with SWC (the same output as `nx run-many -t build`). */
export function build() {
  run(bin('swc'), ['apps', 'libs', '-d', 'dist', '--config-file', '.swcrc', '--ignore', '**/*.spec.ts', '-q']);
  const missing = APPS.filter((app) => !fs.existsSync(appEntry(app)));
  if (missing.length > 0) {
    console.error(`✖ the build did not produce ${missing.map((app) => path.relative(root, appEntry(app))).join(', ')}`);
    process.exit(1);
  }
}

/** Everything before the processes start; exits the script with the reason when a step fails. */
export async function prepare() {
  step('dependencies');
  ensureDependencies();
  step('generated code (gRPC contracts, Prisma clients)');
  run(process.execPath, ['tools/generate.mjs']);
  step('build (dist/)');
  build();
  step('backing services (Postgres, Redis, NATS)');
  try {
    await ensureServices();
  } catch (error) {
    console.error(`✖ ${error.message}`);
    process.exit(1);
  }
  step('database migrations');
  run(process.execPath, ['tools/prisma.mjs', 'deploy']);
}
