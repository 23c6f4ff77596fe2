// The benchmark driver (`node bench/run.mjs`): starts the whole stack from source on spare ports, a bare
// Fastify baseline next to it, drives every scenario with autocannon and writes bench/results/latest.*.
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

import prettier from 'prettier';

// bench is not an Nx project: the testing lib is imported by path, like the e2e global setup does.
import {
  APPS,
  databaseUrl,
  LocalObjectStorage,
  repositoryRoot,
  request,
  SERVICES_WITH_DATABASES,
  templateDatabase,
  TestStack,
  waitFor,
} from '../libs/testing/src';
import { load, type LoadRequest, type LoadResult } from './load';
import {
  ChildServer,
  CpuMeter,
  environmentOf,
  inspectorUrlInLog,
  memoryOf,
  parentOf,
  pidsNamed,
  postgresBackends,
  RssSampler,
  stackPids,
  startBaseline,
  startFloors,
  startPassthrough,
  ThreadCpu,
  ThreadCpuMeter,
} from './processes';
import { InspectorSession, Profiler } from './profiler';
import {
  type Argon2Bound,
  checkMemory,
  checkTargets,
  gitState,
  type HeapUsage,
  machine,
  markdown,
  type ProcessMemory,
  type ProfileReport,
  profilesMarkdown,
  ratios,
  type Report,
  type ScenarioResult,
} from './report';

interface Bootstrap {
  org_id: string;
  admin_user_id: string;
  client_id: string;
  client_secret: string | null;
}
interface TokenSet {
  access_token: string;
  refresh_token?: string;
}

const ADMIN_EMAIL = 'admin@bench.test';
const ADMIN_PASSWORD = 'bench-admin-password-1';
const USER_PASSWORD = 'bench-user-password-1';
/** Per-token tiers raised for the bench org so the scenarios measure work, not 429s. */
const RAISED_GROUPS = ['system.read', 'users.write', 'users.read'];

const seconds = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number of seconds ≥ 0`);
  return value;
};
const config = {
  duration_s: Math.max(1, seconds('BENCH_DURATION', 10)),
  warmup_s: seconds('BENCH_WARMUP', 2),
  connections: Math.max(1, Math.round(seconds('BENCH_CONNECTIONS', 10))),
  profile_s: seconds('BENCH_PROFILE', 5),
  /** What runs: the build in dist/ as `npm run up` and the images run it, or the sources through SWC. */
  entry: process.env.BENCH_ENTRY === 'source' ? ('source' as const) : ('dist' as const),
  /** `BENCH_ONLY=health,users-read`: just these scenarios (and the two floors), for working on one path. */
  only: process.env.BENCH_ONLY ? process.env.BENCH_ONLY.split(',').map((name) => name.trim()) : undefined,
};
const FLOORS = ['baseline', 'passthrough'];
/** How long after the last measured run the memory is read. */
const SETTLE_MS = 5_000;
/** Functions listed per process and scenario in profiles.md. */
const TOP_FUNCTIONS = 12;
// A partial run (BENCH_ONLY) is not the issue's table: it goes next to the raw profiles, uncommitted.
const resultsDir = config.only
  ? path.join(repositoryRoot, '.data', 'bench-results')
  : path.join(repositoryRoot, 'bench', 'results');

const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);
const reason = (error: unknown) => (error instanceof Error ? error.message.split('\n')[0] : String(error));

/** A client address per request (the gateway trusts X-Forwarded-For from 127.0.0.1 in this run). */
let ipSequence = 0;
const nextIp = () => {
  ipSequence += 1;
  return `10.${(ipSequence >>> 16) & 255}.${(ipSequence >>> 8) & 255}.${ipSequence & 255}`;
};
const withFreshIp = (template: LoadRequest): LoadRequest => ({
  ...template,
  headers: { ...template.headers, 'x-forwarded-for': nextIp() },
});
const json = { 'content-type': 'application/json' };

/** Which processes serve a scenario (and are profiled during it). */
type Target = 'stack' | 'baseline' | 'passthrough' | 'floors';

/** `floor-users-read` is the architecture floor of `users-read` (bench/floors.mjs). */
const FLOOR_PREFIX = 'floor-';

interface Scenario {
  name: string;
  request: string;
  origin: string;
  target: Target;
  /** Runs before the smoke request, the warm-up and the measured run (e.g. a pool of refresh tokens). */
  prepare?: () => Promise<void>;
  /** A template per connection: called once for each autocannon connection. */
  requestsFor: () => LoadRequest[];
}

/** One request from the scenario's own template through fetch; answers why it failed, or undefined. */
async function smoke(scenario: Scenario): Promise<string | undefined> {
  const [template] = scenario.requestsFor();
  const sent = template.setupRequest ? template.setupRequest({ ...template }) : template;
  const response = await fetch(`${scenario.origin}${sent.path ?? '/'}`, {
    method: sent.method ?? 'GET',
    headers: sent.headers,
    body: sent.body,
  });
  const text = await response.text();
  template.onResponse?.(response.status, text);
  if (response.ok) return undefined;
  let code = '';
  try {
    code = String((JSON.parse(text) as { code?: string }).code ?? '');
  } catch {
    code = text.slice(0, 60);
  }
  return `HTTP ${response.status}${code ? ` ${code}` : ''}`;
}

const run = async (scenario: Scenario, durationSeconds: number): Promise<LoadResult> => {
  await scenario.prepare?.();
  return load({
    url: scenario.origin,
    connections: config.connections,
    durationSeconds,
    requestsFor: scenario.requestsFor,
  });
};

/** CPU meters of every process group, started together; read after the measured run. */
type CpuGroups = Record<string, () => number[]>;

/** Processes whose CPU is also split by thread (`ThreadCpu`): the services, by name. */
type ThreadGroups = Record<string, number | undefined>;

async function measure(
  scenario: Scenario,
  cpuGroups: CpuGroups,
  threadGroups: ThreadGroups = {},
): Promise<ScenarioResult> {
  const base = { name: scenario.name, request: scenario.request };
  try {
    await scenario.prepare?.();
    const failure = await smoke(scenario);
    if (failure) return { ...base, skipped: failure };
    if (config.warmup_s > 0) await run(scenario, config.warmup_s);
    // The chains (and any other preparation) are made before the meters start.
    await scenario.prepare?.();
    const meters = Object.entries(cpuGroups).map(([name, pids]) => [name, new CpuMeter(pids)] as const);
    const threadMeters = Object.entries(threadGroups).flatMap(([name, pid]) =>
      pid ? [[name, new ThreadCpuMeter(pid)] as const] : [],
    );
    const result = await load({
      url: scenario.origin,
      connections: config.connections,
      durationSeconds: config.duration_s,
      requestsFor: scenario.requestsFor,
    });
    const cpu: Record<string, number> = {};
    for (const [name, meter] of meters) {
      const ms = meter.read();
      if (ms > 0) cpu[name] = ms;
    }
    const threads: Record<string, ThreadCpu> = {};
    for (const [name, meter] of threadMeters) {
      const split = meter.read();
      if (split) threads[name] = split;
    }
    return { ...base, result, cpu_ms: cpu, thread_cpu_ms: threads };
  } catch (error) {
    return { ...base, skipped: reason(error) };
  }
}

/**
 * The argon2 bound: identity's PasswordHasher alone in a process of its own (bench/argon2-bound.ts),
 * with identity's environment and its libuv thread-pool size, as many operations in flight as the
 * scenarios have connections.
 */
async function argon2Bound(
  mode: 'verify' | 'hash',
  env: NodeJS.ProcessEnv,
): Promise<Argon2Bound | { skipped: string }> {
  try {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        '-r',
        './tools/run-ts.cjs',
        'bench/argon2-bound.ts',
        mode,
        String(config.duration_s),
        String(config.warmup_s),
        String(config.connections),
      ],
      { cwd: repositoryRoot, env, encoding: 'utf8' },
    );
    return JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as Argon2Bound;
  } catch (error) {
    return { skipped: reason(error) };
  }
}

/** `npm run build`: the services as `npm run up` and the images run them, from dist/. */
function build() {
  try {
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: repositoryRoot, stdio: 'pipe' });
  } catch (error) {
    const output = error as { stdout?: Buffer; stderr?: Buffer };
    throw new Error(`npm run build failed:\n${output.stdout?.toString() ?? ''}${output.stderr?.toString() ?? ''}`);
  }
}

/** Migrates the template databases every stack clones, as tests/e2e/migrate-templates.ts does. */
function migrateTemplates() {
  const env = { ...process.env };
  for (const service of SERVICES_WITH_DATABASES) {
    env[`${service.toUpperCase()}_DATABASE_URL`] = databaseUrl(templateDatabase(service));
  }
  try {
    execFileSync(process.execPath, [path.join(repositoryRoot, 'tools/prisma.mjs'), 'deploy'], {
      cwd: repositoryRoot,
      env,
      stdio: 'pipe',
    });
  } catch (error) {
    const output = error as { stdout?: Buffer; stderr?: Buffer };
    const text = `${output.stdout?.toString() ?? ''}${output.stderr?.toString() ?? ''}`;
    throw new Error(`migrating the template databases failed:\n${text}`);
  }
}

/** Starts the stack; a template busy with another run's clone or migration is retried a few times. */
async function startStack(s3Endpoint: string): Promise<TestStack> {
  // An inspector on a free port in every process (it says which in its log): CPU profiles, heap sizes.
  const inspect = { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --inspect=127.0.0.1:0`.trim() };
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await TestStack.start({
        entry: config.entry,
        s3Endpoint,
        env: {
          ...inspect,
          TRUSTED_PROXIES: '127.0.0.1',
          LOG_LEVEL: 'warn',
          // The services' own defaults, not the test stack's fast probing.
          HEALTH_PROBE_INTERVAL_MS: '2000',
          HEALTH_PROBE_TIMEOUT_MS: '1000',
        },
      });
    } catch (error) {
      if (attempt >= 3 || !(error instanceof Error) || !/being accessed by other users/.test(error.message)) {
        throw error;
      }
      log(`a template database is busy (${error.message}); retrying`);
      await new Promise((resolve) => setTimeout(resolve, 2000 * attempt));
    }
  }
}

interface Credentials {
  org?: Bootstrap;
  adminToken?: string;
  clientToken?: string;
  failure?: string;
}

async function password(stackUrl: string): Promise<TokenSet> {
  const issued = await request<TokenSet & { code?: string }>(`${stackUrl}/v2/auth/token`, {
    body: { grant_type: 'password', username: ADMIN_EMAIL, password: ADMIN_PASSWORD },
    headers: { 'x-forwarded-for': nextIp() },
  });
  if (issued.status !== 200) throw new Error(`password grant: HTTP ${issued.status} ${issued.body?.code ?? ''}`);
  return issued.body;
}

/** Bootstraps the bench org, raises its tiers and quotas, and gets an admin and a client token. */
async function credentials(stack: TestStack): Promise<Credentials> {
  const found: Credentials = {};
  const failed = (error: unknown) => {
    found.failure = [found.failure, reason(error)].filter(Boolean).join('; ');
    log(`setup: ${reason(error)}`);
  };
  try {
    const org = stack.cli<Bootstrap>(
      'bootstrap',
      '--org',
      'bench',
      '--email',
      ADMIN_EMAIL,
      '--password',
      ADMIN_PASSWORD,
    );
    for (const group of RAISED_GROUPS) {
      stack.cli(
        'set-rate-limit',
        '--org-id',
        org.org_id,
        '--group',
        group,
        '--rate-per-minute',
        '6000000',
        '--burst',
        '10',
        '--scope',
        'per-token',
      );
    }
    // users-create adds thousands of users: lift the org's Users (and API requests) quota out of the way.
    for (const name of ['Users', 'API requests']) {
      stack.cli('set-quota', '--org-id', org.org_id, '--dimension', 'api', '--name', name, '--limit', '1000000000');
    }
    found.org = org;
  } catch (error) {
    failed(error);
    return found;
  }
  try {
    found.adminToken = (await password(stack.url(''))).access_token;
  } catch (error) {
    failed(error);
  }
  try {
    const client = await request<TokenSet & { code?: string }>(stack.url('/v2/auth/token'), {
      body: {
        grant_type: 'client_credentials',
        client_id: found.org.client_id,
        client_secret: found.org.client_secret,
      },
      headers: { 'x-forwarded-for': nextIp() },
    });
    if (client.status !== 200) {
      throw new Error(`client_credentials grant: HTTP ${client.status} ${client.body?.code ?? ''}`);
    }
    found.clientToken = client.body.access_token;
  } catch (error) {
    failed(error);
  }
  return found;
}

/**
 * The architecture floor of each scenario that has a ratio target: the same request line, headers and
 * body to bench/floors.mjs, which makes that scenario's hops (rate-limit bucket, gRPC, Postgres, signing)
 * with nothing of the service around them.
 */
function floorScenarios(origin: string, creds: Credentials): Scenario[] {
  const floor = (name: string, request: string, template: LoadRequest): Scenario => ({
    name: `${FLOOR_PREFIX}${name}`,
    request: `floor of ${name}: ${request}`,
    origin,
    target: 'floors',
    requestsFor: () => [{ ...template, path: `/${name}` }],
  });
  const tokenRequest = (body: Record<string, unknown>): LoadRequest => ({
    method: 'POST',
    headers: json,
    body: JSON.stringify(body),
    setupRequest: withFreshIp,
  });
  return [
    floor('health', 'per-IP bucket in memory, body from memory', { method: 'GET', setupRequest: withFreshIp }),
    floor('rate-limits', 'per-token Redis bucket, body from memory', { method: 'GET' }),
    floor('users-read', 'Redis bucket, gRPC, one prepared SELECT', { method: 'GET' }),
    floor(
      'token-client-credentials',
      'Redis bucket, gRPC, an ES256 token signed',
      tokenRequest({
        grant_type: 'client_credentials',
        client_id: creds.org?.client_id ?? 'floor',
        client_secret: creds.org?.client_secret ?? 'floor',
      }),
    ),
    floor(
      'token-refresh',
      'Redis bucket, gRPC, one-statement rotation, an ES256 token signed',
      // A refresh token's length (32 random bytes, base64url); the floor rotates a token of its own.
      tokenRequest({ grant_type: 'refresh_token', refresh_token: 'f'.repeat(43) }),
    ),
  ];
}

function scenarios(
  stack: TestStack,
  servers: { baseline: ChildServer; passthrough: ChildServer; floors: ChildServer },
  creds: Credentials,
): Scenario[] {
  const origin = stack.url('').replace(/\/$/, '');
  const bearer = (token: string | undefined) => ({ authorization: `Bearer ${token ?? 'missing'}` });
  const runTag = Date.now().toString(36);
  let userSequence = 0;
  let refreshPool: string[] = [];

  return [
    {
      name: 'baseline',
      request: 'GET / (bare Fastify)',
      origin: servers.baseline.url.replace(/\/$/, ''),
      target: 'baseline',
      requestsFor: () => [{ method: 'GET', path: '/' }],
    },
    {
      name: 'passthrough',
      request: 'GET / (bare Fastify → grpc-js unary → trivial gRPC server)',
      origin: servers.passthrough.url.replace(/\/$/, ''),
      target: 'passthrough',
      requestsFor: () => [{ method: 'GET', path: '/' }],
    },
    ...floorScenarios(servers.floors.url.replace(/\/$/, ''), creds),
    {
      name: 'health',
      request: 'GET /v2/system/health',
      origin,
      target: 'stack',
      requestsFor: () => [{ method: 'GET', path: '/v2/system/health', setupRequest: withFreshIp }],
    },
    {
      name: 'rate-limits',
      request: 'GET /v2/system/rate-limits (client token)',
      origin,
      target: 'stack',
      requestsFor: () => [{ method: 'GET', path: '/v2/system/rate-limits', headers: bearer(creds.clientToken) }],
    },
    {
      name: 'users-read',
      request: 'GET /v2/users/me (admin token)',
      origin,
      target: 'stack',
      requestsFor: () => [{ method: 'GET', path: '/v2/users/me', headers: bearer(creds.adminToken) }],
    },
    {
      name: 'token-password',
      request: 'POST /v2/auth/token password',
      origin,
      target: 'stack',
      requestsFor: () => [
        {
          method: 'POST',
          path: '/v2/auth/token',
          headers: json,
          body: JSON.stringify({ grant_type: 'password', username: ADMIN_EMAIL, password: ADMIN_PASSWORD }),
          setupRequest: withFreshIp,
        },
      ],
    },
    {
      name: 'token-client-credentials',
      request: 'POST /v2/auth/token client_credentials',
      origin,
      target: 'stack',
      requestsFor: () => [
        {
          method: 'POST',
          path: '/v2/auth/token',
          headers: json,
          body: JSON.stringify({
            grant_type: 'client_credentials',
            client_id: creds.org?.client_id,
            client_secret: creds.org?.client_secret,
          }),
          setupRequest: withFreshIp,
        },
      ],
    },
    {
      name: 'token-refresh',
      request: 'POST /v2/auth/token refresh_token (chained)',
      origin,
      target: 'stack',
      // One refresh-token chain per connection: each request sends the token the previous answer rotated to.
      prepare: async () => {
        refreshPool = await Promise.all(
          Array.from({ length: config.connections }, async () => (await password(origin)).refresh_token ?? ''),
        );
      },
      requestsFor: () => {
        let refreshToken = refreshPool.pop() ?? '';
        return [
          {
            method: 'POST',
            path: '/v2/auth/token',
            headers: json,
            setupRequest: (template) =>
              withFreshIp({
                ...template,
                body: JSON.stringify({ grant_type: 'refresh_token', refresh_token: refreshToken }),
              }),
            onResponse: (status, body) => {
              if (status === 200) refreshToken = (JSON.parse(body) as TokenSet).refresh_token ?? refreshToken;
            },
          },
        ];
      },
    },
    {
      name: 'users-create',
      request: 'POST /v2/users (unique e-mail, password, Idempotency-Key)',
      origin,
      target: 'stack',
      requestsFor: () => [
        {
          method: 'POST',
          path: '/v2/users',
          headers: { ...json, ...bearer(creds.adminToken) },
          setupRequest: (template) => {
            userSequence += 1;
            const key = `bench-${runTag}-${userSequence}`;
            return {
              ...template,
              headers: { ...template.headers, 'idempotency-key': key },
              // A password, so every creation hashes one with argon2 as a real sign-up does.
              body: JSON.stringify({
                email: `${key}@bench.test`,
                display_name: 'Bench User',
                password: USER_PASSWORD,
                send_activation: false,
              }),
            };
          },
        },
      ],
    },
  ];
}

/** What needs which credential; a scenario without it is skipped with the setup's failure. */
const needs: Record<string, (creds: Credentials) => boolean> = {
  'rate-limits': (creds) => Boolean(creds.clientToken),
  'users-read': (creds) => Boolean(creds.adminToken),
  'token-password': (creds) => Boolean(creds.org),
  'token-client-credentials': (creds) => Boolean(creds.org?.client_secret),
  'token-refresh': (creds) => Boolean(creds.org),
  'users-create': (creds) => Boolean(creds.adminToken),
};

/** The stack's overall health once it settles (waits a little for `healthy`). */
async function healthOf(stack: TestStack): Promise<string> {
  let status = 'unknown';
  try {
    await waitFor(
      'healthy',
      async () => {
        const response = await request<{ status?: string }>(stack.url('/v2/system/health'));
        status = response.body?.status ?? `HTTP ${response.status}`;
        return status === 'healthy' ? true : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 500 },
    );
  } catch {
    // Reported as it is; the scenarios still run.
  }
  return status;
}

/** Writes result files, formatted the way the repository's Prettier check wants them. */
async function writeResults(files: Array<[string, string]>): Promise<void> {
  fs.mkdirSync(resultsDir, { recursive: true });
  for (const [file, text] of files) {
    const target = path.join(resultsDir, file);
    const options = await prettier.resolveConfig(target);
    const formatted = await prettier.format(text, { ...options, filepath: target });
    fs.writeFileSync(`${target}.tmp`, formatted);
    fs.renameSync(`${target}.tmp`, target);
  }
}

/** Everything the run started, stopped once, in reverse order, on success, failure or a signal. */
class Cleanup {
  private readonly steps: Array<[string, () => Promise<void>]> = [];
  private done?: Promise<void>;

  add(name: string, step: () => Promise<void>) {
    this.steps.push([name, step]);
  }

  run(): Promise<void> {
    this.done ??= (async () => {
      for (const [name, step] of [...this.steps].reverse()) {
        try {
          await step();
        } catch (error) {
          log(`stopping ${name} failed: ${error instanceof Error ? error.message : String(error)}`);
        }
      }
    })();
    return this.done;
  }
}

/** `process.memoryUsage()` of each process, through its inspector, in MiB. */
async function heapsOf(targets: Record<string, string | undefined>): Promise<Record<string, HeapUsage>> {
  const found: Record<string, HeapUsage> = {};
  for (const [name, url] of Object.entries(targets)) {
    if (!url) continue;
    try {
      const session = await InspectorSession.connect(url);
      try {
        const { result } = await session.send<{ result: { value?: string } }>('Runtime.evaluate', {
          expression:
            'JSON.stringify(Object.fromEntries(Object.entries(process.memoryUsage())' +
            '.map(([k, v]) => [k, Math.round(v / 104857.6) / 10])))',
          returnByValue: true,
        });
        const usage = JSON.parse(result.value ?? '{}') as Record<string, number>;
        found[name] = {
          heap_total_mb: usage.heapTotal,
          heap_used_mb: usage.heapUsed,
          external_mb: usage.external,
        };
      } finally {
        session.close();
      }
    } catch (error) {
      log(`heap of ${name}: ${reason(error)}`);
    }
  }
  return found;
}

/** The raw profiles, for Chrome DevTools or speedscope: not committed (`.data/` is ignored). */
const rawProfilesDir = path.join(repositoryRoot, '.data', 'bench-profiles');

async function main(): Promise<number> {
  const cleanup = new Cleanup();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      log(`${signal}: stopping everything`);
      void cleanup.run().finally(() => process.exit(130));
    });
  }
  try {
    const started = Date.now();
    const host = machine();
    log(
      `${host.cpus} CPUs, ${config.connections} connections, ${config.duration_s} s + ${config.warmup_s} s warm-up, ` +
        `${config.profile_s} s profiled; load average ${host.load_average_at_start.join(' / ')}`,
    );
    if (config.entry === 'dist') {
      log('building dist/ (npm run build)');
      build();
    }
    log('migrating the template databases');
    migrateTemplates();
    log('starting the stack');
    // An object store of its own, so health is `healthy` (the mailer and the probes talk to it).
    const storage = await LocalObjectStorage.start();
    cleanup.add('the object storage', () => storage.dispose());
    const stack = await startStack(storage.endpoint);
    cleanup.add('the stack', () => stack.close());
    const health = await healthOf(stack);
    log(`health: ${health}`);
    const baseline = await startBaseline();
    cleanup.add('the baseline server', () => baseline.stop());
    const passthrough = await startPassthrough();
    cleanup.add('the passthrough servers', async () => {
      await passthrough.front.stop();
      await passthrough.backend.stop();
    });
    const floors = await startFloors({ entry: config.entry, redisUrl: stack.env.REDIS_URL });
    cleanup.add('the floors', () => floors.stop());
    log(
      `stack at ${stack.url('')} (logs: .data/test-logs/${stack.ports.http}-*.log), baseline at ${baseline.url}, ` +
        `passthrough at ${passthrough.front.url}, floors at ${floors.front.url}`,
    );

    const pids = stackPids(stack.ports.http);
    const databases = [
      ...['IDENTITY', 'AUTH', 'PLATFORM'].map((name) => new URL(stack.env[`${name}_DATABASE_URL`]).pathname.slice(1)),
      floors.database,
    ];
    const own = (pid: number | undefined) => (pid ? [pid] : []);
    const cpuGroups: CpuGroups = {
      ...Object.fromEntries(APPS.map((app) => [app, () => own(pids[app])])),
      Postgres: () => postgresBackends(databases),
      Redis: () => pidsNamed('redis-server'),
      // The stack's own NATS server, a child of this process.
      NATS: () => pidsNamed('nats-server', (pid) => parentOf(pid) === process.pid),
      'bench servers': () =>
        [baseline.pid, passthrough.front.pid, passthrough.backend.pid, floors.front.pid, floors.backend.pid].flatMap(
          own,
        ),
      'load generator': () => [process.pid],
    };
    const benchServers: Record<string, ChildServer> = {
      baseline,
      'passthrough Fastify': passthrough.front,
      'passthrough gRPC server': passthrough.backend,
      'floors Fastify': floors.front,
      'floors gRPC service': floors.backend,
    };
    const rss = new RssSampler(() => ({
      ...pids,
      ...Object.fromEntries(Object.entries(benchServers).map(([name, server]) => [name, server.pid])),
    }));

    const creds = await credentials(stack);
    const all = scenarios(stack, { baseline, passthrough: passthrough.front, floors: floors.front }, creds).filter(
      (scenario) =>
        !config.only ||
        FLOORS.includes(scenario.name) ||
        config.only.includes(scenario.name) ||
        config.only.includes(scenario.name.slice(FLOOR_PREFIX.length)),
    );
    const argon2Needed = !config.only || config.only.some((name) => ['token-password', 'users-create'].includes(name));
    const results: ScenarioResult[] = [];
    const argon2: Report['argon2'] = {};
    rss.start();
    for (const scenario of all) {
      if (needs[scenario.name] && !needs[scenario.name](creds)) {
        results.push({ name: scenario.name, request: scenario.request, skipped: `setup: ${creds.failure ?? '?'}` });
        log(`${scenario.name}: skipped (setup failed)`);
        continue;
      }
      log(`${scenario.name}: running`);
      const measured = await measure(scenario, cpuGroups, pids);
      // Which scenario grows which process: RSS of each right after this one.
      measured.rss_after_mb = Object.fromEntries(
        APPS.flatMap((app) => {
          const now = pids[app] ? memoryOf(pids[app]) : undefined;
          return now ? [[app, now.rss_mb]] : [];
        }),
      );
      log(`${scenario.name}: RSS after ${JSON.stringify(measured.rss_after_mb)}`);
      results.push(measured);
      log(
        measured.result
          ? `${scenario.name}: ${measured.result.requests_per_second} req/s, p99 ${measured.result.latency_p99_ms} ms, ` +
              `non-2xx ${measured.result.non_2xx}, errors ${measured.result.errors + measured.result.timeouts}`
          : `${scenario.name}: skipped (${measured.skipped})`,
      );
      if (scenario.name === 'passthrough' && argon2Needed) {
        // The argon2 bounds next to the other floors, while the stack is idle.
        const threads = (pids.identity && environmentOf(pids.identity, 'UV_THREADPOOL_SIZE')) || '4';
        const env = {
          ...process.env,
          ...stack.env,
          NODE_OPTIONS: process.env.NODE_OPTIONS ?? '',
          UV_THREADPOOL_SIZE: threads,
        };
        for (const mode of ['verify', 'hash'] as const) {
          log(`argon2 ${mode} bound: running on ${threads} threads`);
          const bound = await argon2Bound(mode, env);
          argon2[mode] = bound;
          log(`argon2 ${mode} bound: ${'per_second' in bound ? `${bound.per_second}/s` : bound.skipped}`);
        }
      }
    }
    rss.stop();
    // "After the load": once the requests still in flight (argon2 hashes above all) have finished.
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));

    const inspectors: Record<Target, Record<string, string | undefined>> = {
      stack: Object.fromEntries(
        APPS.map((app) => [
          app,
          inspectorUrlInLog(path.join(repositoryRoot, '.data', 'test-logs', `${stack.ports.http}-${app}.log`)),
        ]),
      ),
      baseline: { baseline: baseline.inspectorUrl },
      passthrough: {
        'passthrough Fastify': passthrough.front.inspectorUrl,
        'passthrough gRPC server': passthrough.backend.inspectorUrl,
      },
      floors: {
        'floors Fastify': floors.front.inspectorUrl,
        'floors gRPC service': floors.backend.inspectorUrl,
      },
    };
    // The V8 heap of each process right after the load: how much of its RSS is JavaScript objects.
    const heaps = await heapsOf({
      ...inspectors.stack,
      ...inspectors.baseline,
      ...inspectors.passthrough,
      ...inspectors.floors,
    });
    if (process.env.BENCH_HEAP_SNAPSHOTS === '1') {
      fs.mkdirSync(rawProfilesDir, { recursive: true });
      for (const [app, url] of Object.entries(inspectors.stack)) {
        if (!url) continue;
        const session = await InspectorSession.connect(url);
        await session.heapSnapshot(path.join(rawProfilesDir, `${app}.heapsnapshot`));
        session.close();
      }
      log(`heap snapshots after the load in ${path.relative(repositoryRoot, rawProfilesDir)}/`);
    }
    const memory: Record<string, ProcessMemory | null> = {};
    const remember = (name: string, pid: number | undefined) => {
      const now = pid ? memoryOf(pid) : undefined;
      memory[name] =
        pid && now
          ? {
              pid,
              peak_under_load_mb: rss.peak(name) ?? null,
              after_load_mb: now.rss_mb,
              after_load_file_mb: now.file_mb,
              lifetime_peak_mb: now.peak_rss_mb,
              heap: heaps[name] ?? null,
            }
          : null;
    };
    for (const app of APPS) remember(app, pids[app]);
    for (const [name, server] of Object.entries(benchServers)) remember(name, server.pid);
    remember('bench driver (autocannon)', process.pid);
    // The bare handler again (`baseline-end`, not profiled: its process was), for the machine's drift
    // over the run. After the memory is read, so the stack's "after the load" is the same few seconds
    // after its last scenario as it always was.
    const bare = all.find((scenario) => scenario.name === 'baseline');
    if (bare) {
      log('baseline-end: running (the bare handler again, for the drift of the machine over the run)');
      const again = await measure(
        { ...bare, name: 'baseline-end', request: `${bare.request}, again after the other scenarios` },
        cpuGroups,
      );
      results.push(again);
      log(`baseline-end: ${again.result ? `${again.result.requests_per_second} req/s` : `skipped (${again.skipped})`}`);
    }

    const ratioList = ratios(results);
    const report: Report = {
      date: new Date().toISOString(),
      machine: host,
      git: gitState(repositoryRoot),
      config,
      stack_health_at_start: health,
      scenarios: results,
      argon2,
      ratios: ratioList,
      targets: checkTargets(results, ratioList, argon2, host.cpus),
      memory,
      memory_targets: checkMemory(memory),
    };
    const table = markdown(report);
    const files: Array<[string, string]> = [
      ['latest.json', JSON.stringify(report)],
      ['latest.md', table],
    ];

    if (config.profile_s > 0) {
      fs.mkdirSync(rawProfilesDir, { recursive: true });
      const profiles: ProfileReport = {
        date: report.date,
        git: report.git,
        profile_s: config.profile_s,
        scenarios: [],
      };
      for (const scenario of all) {
        if (!results.find((result) => result.name === scenario.name)?.result) {
          profiles.scenarios.push({ name: scenario.name, skipped: 'the scenario did not run', processes: {} });
          continue;
        }
        log(`${scenario.name}: profiling`);
        const profiler = await Profiler.attach(inspectors[scenario.target], log);
        try {
          await scenario.prepare?.();
          await profiler.start();
          const profiled = await load({
            url: scenario.origin,
            connections: config.connections,
            durationSeconds: config.profile_s,
            requestsFor: scenario.requestsFor,
          });
          const summaries = await profiler.stop(TOP_FUNCTIONS, (name, profile) =>
            fs.writeFileSync(
              path.join(rawProfilesDir, `${scenario.name}.${name.replace(/\W+/g, '-')}.cpuprofile`),
              JSON.stringify(profile),
            ),
          );
          profiles.scenarios.push({ name: scenario.name, requests: profiled.responses, processes: summaries });
        } catch (error) {
          profiles.scenarios.push({ name: scenario.name, skipped: reason(error), processes: {} });
        } finally {
          profiler.close();
        }
      }
      files.push(
        ['profiles.json', JSON.stringify(profiles)],
        ['profiles.md', profilesMarkdown(profiles, TOP_FUNCTIONS)],
      );
      log(`raw profiles in ${path.relative(repositoryRoot, rawProfilesDir)}/`);
    }

    await writeResults(files);
    process.stdout.write(table);
    log(`wrote ${path.relative(repositoryRoot, resultsDir)}/ in ${Math.round((Date.now() - started) / 1000)} s`);
    return results.some((result) => result.skipped) ? 1 : 0;
  } finally {
    log('stopping the stack and the servers');
    await cleanup.run();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    log(error instanceof Error ? (error.stack ?? error.message) : String(error));
    process.exit(1);
  },
);
