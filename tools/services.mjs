// Postgres, Redis and NATS for a local run: the configured URLs when given, else local servers,
// started here when installed but not running.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';

const reachable = (host, port, timeoutMs = 500) =>
  new Promise((resolve) => {
    const socket = net.connect({ host, port, timeout: timeoutMs });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('timeout', () => (socket.destroy(), resolve(false)));
    socket.once('error', () => resolve(false));
  });

const has = (command) => spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
const sh = (script) => spawnSync('sh', ['-c', script], { stdio: 'ignore' });

async function waitUntil(host, port, name) {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    if (await reachable(host, port)) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${name} did not come up on ${host}:${port}`);
}

/** The ports the clients use when a URL names none (new URL() knows no default for these schemes). */
const DEFAULT_PORTS = { postgres: 5432, postgresql: 5432, redis: 6379, rediss: 6379, nats: 4222, tls: 4222 };

function target(envName, fallback) {
  const url = new URL(process.env[envName] ?? fallback);
  const port = url.port ? Number(url.port) : DEFAULT_PORTS[url.protocol.replace(/:$/, '')];
  return { host: url.hostname, port };
}

const SERVERS = [
  {
    name: 'PostgreSQL',
    where: () => target('IDENTITY_DATABASE_URL', 'postgresql://127.0.0.1:5432/identity'),
    start: () => {
      const versions = fs.existsSync('/etc/postgresql') ? fs.readdirSync('/etc/postgresql').sort() : [];
      const version = versions.at(-1);
      if (!version || !has('pg_ctlcluster')) return false;
      sh(`pg_ctlcluster --skip-systemctl-redirect ${version} main start`);
      return true;
    },
  },
  {
    name: 'Redis',
    where: () => target('REDIS_URL', 'redis://127.0.0.1:6379'),
    start: ({ port }) => {
      if (!has('redis-server')) return false;
      sh(`redis-server --daemonize yes --bind 127.0.0.1 --port ${port} --save "" --appendonly no`);
      return true;
    },
  },
  {
    name: 'NATS',
    where: () => target('NATS_URL', 'nats://127.0.0.1:4222'),
    start: ({ port }) => {
      if (!has('nats-server')) return false;
      const store = `${process.env.HOME ?? '/tmp'}/.local/share/account-platform/nats`;
      fs.mkdirSync(store, { recursive: true });
      sh(`nohup nats-server -a 127.0.0.1 -p ${port} -js -sd "${store}" >/dev/null 2>&1 &`);
      return true;
    },
  },
];

/** Makes sure every backing server answers; starts local ones where it can, else says what is missing. */
export async function ensureServices() {
  const missing = [];
  for (const server of SERVERS) {
    const where = server.where();
    if (await reachable(where.host, where.port)) continue;
    const local = where.host === '127.0.0.1' || where.host === 'localhost';
    if (local && server.start(where)) {
      console.log(`  starting local ${server.name} on :${where.port}`);
      try {
        await waitUntil(where.host, where.port, server.name);
        continue;
      } catch {
        // reported below
      }
    }
    missing.push(`${server.name} (${where.host}:${where.port})`);
  }
  if (missing.length > 0) {
    throw new Error(
      `not reachable: ${missing.join(', ')}. Install and start them, or point the *_URL variables at running servers.`,
    );
  }
  console.log('  PostgreSQL, Redis and NATS are up');
}
