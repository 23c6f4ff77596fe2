// The acceptance suite's one stack: `npm run up` (tools/up.mjs --json) on spare ports with its own
// databases, its own NATS and Redis (so rate-limit buckets and durable consumers hold only this suite's
// state) and an SMTP server of the suite's own. The global setup starts it and writes how to reach it
// to STACK_FILE; the specs read that file and talk HTTP, SMTP (through the catcher's inbox) and NATS.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

import {
  DedicatedServer,
  dropDatabases,
  freePort,
  repositoryRoot,
  SERVICES_WITH_DATABASES,
  SmtpCatcher,
  sparePorts,
  Up,
  upEnvironment,
} from '@acct/testing';

export const ACCEPTANCE_DIR = path.join(repositoryRoot, '.data', 'acceptance');
export const STACK_FILE = path.join(ACCEPTANCE_DIR, 'stack.json');
export const REGION = 'acceptance-1';

/** What the specs need to reach the stack; `env` is what the operator CLI runs with. */
export interface StackInfo {
  gatewayUrl: string;
  natsUrl: string;
  /** `GET` answers every message the suite's SMTP server received, as JSON (`CaughtMail[]`). */
  mailboxUrl: string;
  region: string;
  env: Record<string, string>;
}

interface Running {
  up?: Up;
  nats?: DedicatedServer;
  redis?: DedicatedServer;
  smtp?: SmtpCatcher;
  inbox?: http.Server;
  databases: string[];
  dirs: string[];
}

// Jest runs the global setup and teardown in the same process: the teardown finds this again.
const running: Running = { databases: [], dirs: [] };

/** The catcher's messages over HTTP, so spec files in jest's workers can read them. */
async function serveInbox(smtp: SmtpCatcher): Promise<{ server: http.Server; url: string }> {
  const port = await freePort();
  const server = http.createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(smtp.messages));
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${port}/` };
}

export async function startStack(): Promise<void> {
  fs.mkdirSync(ACCEPTANCE_DIR, { recursive: true });
  fs.rmSync(STACK_FILE, { force: true });
  try {
    const suffix = randomBytes(4).toString('hex');
    const natsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'acceptance-nats-'));
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'acceptance-data-'));
    running.dirs.push(natsDir, dataDir);
    running.databases = SERVICES_WITH_DATABASES.map((service) => `acceptance_${suffix}_${service}`);
    [running.nats, running.redis, running.smtp] = await Promise.all([
      DedicatedServer.nats(natsDir),
      DedicatedServer.redis(),
      SmtpCatcher.start(),
    ]);
    const inbox = await serveInbox(running.smtp);
    running.inbox = inbox.server;
    const ports = await sparePorts();
    const extra = {
      // SMTP_URL set: up.mjs starts no catcher of its own and the mailer sends to the suite's.
      SMTP_URL: running.smtp.url,
      REDIS_URL: running.redis.url,
      REGION,
      // The suite is the stack's only client and stands in for many: it names each client's address
      // in X-Forwarded-For, as a load balancer would, so per-IP buckets and lockouts stay apart.
      TRUSTED_PROXIES: '127.0.0.1',
    };
    const env = upEnvironment({
      ports,
      databasePrefix: `acceptance_${suffix}`,
      natsUrl: running.nats.url,
      dataDir,
      extra,
    });
    const gatewayUrl = `http://127.0.0.1:${ports.GATEWAY_PORT}`;
    running.up = new Up(env);
    await running.up.whileRunning(
      'the "stack is up" line',
      () => (running.up!.stderr.includes(`✔ stack is up: ${gatewayUrl}`) ? true : undefined),
      420_000,
    );
    const changed = Object.entries(env).filter(
      (entry): entry is [string, string] => entry[1] !== undefined && process.env[entry[0]] !== entry[1],
    );
    const info: StackInfo = {
      gatewayUrl,
      natsUrl: running.nats.url,
      mailboxUrl: inbox.url,
      region: REGION,
      env: Object.fromEntries(changed),
    };
    fs.writeFileSync(STACK_FILE, JSON.stringify(info, null, 2));
  } catch (error) {
    await stopStack();
    throw error;
  }
}

export async function stopStack(): Promise<void> {
  const { up, nats, redis, smtp, inbox } = running;
  await up?.stop();
  if (up) fs.writeFileSync(path.join(ACCEPTANCE_DIR, 'up.log'), `${up.stderr}\n--- stdout ---\n${up.stdout}`);
  await Promise.all([
    nats?.stop(),
    redis?.stop(),
    smtp?.close(),
    inbox && new Promise((resolve) => inbox.close(resolve)),
  ]);
  if (running.databases.length > 0) await dropDatabases(running.databases);
  for (const dir of running.dirs) fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(STACK_FILE, { force: true });
}
