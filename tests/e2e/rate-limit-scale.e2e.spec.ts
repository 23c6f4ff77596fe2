import { execFileSync } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

import { repositoryRoot, TestStack } from '@acct/testing';
import pg from 'pg';

/** Issue 15: the gateway holds every org's tiers; with many orgs each limit stays exact and memory small. */
const ORGS = 100;
/** The gateway's RSS target after the load (issue 15), MiB. */
const GATEWAY_RSS_TARGET_MIB = 120;

/**
 * Org `index`'s own tier for `system.read`: all different, all slow to refill (at most 3 tokens a
 * minute, so no token comes back while its requests run) and with a whole capacity, rate per second ×
 * burst = (1…3) × (1…34) requests.
 */
const tierOf = (index: number) => {
  const ratePerMinute = 1 + (index % 3);
  const burst = 60 * (1 + Math.floor(index / 3));
  return { ratePerMinute, burst, capacity: (ratePerMinute / 60) * burst };
};

/** The pid of this stack's gateway (from dist/). */
function gatewayPid(stack: TestStack): number {
  for (const pid of fs.readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    let commandLine: string[];
    let environment: string[];
    try {
      commandLine = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      environment = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    } catch {
      continue;
    }
    if (!commandLine.some((arg) => arg.endsWith('dist/apps/gateway/src/main.js'))) continue;
    if (environment.includes(`GATEWAY_PORT=${stack.ports.http}`)) return Number(pid);
  }
  throw new Error('the gateway process was not found');
}

/**
 * What the gateway holds: a full garbage collection through its inspector (Chrome DevTools Protocol),
 * then its V8 heap in use and its resident memory, MiB.
 */
async function gatewayMemoryAfterGc(stack: TestStack): Promise<{ heapUsed: number; rss: number }> {
  const log = fs.readFileSync(
    path.join(repositoryRoot, '.data', 'test-logs', `${stack.ports.http}-gateway.log`),
    'utf8',
  );
  const url = [...log.matchAll(/Debugger listening on (ws:\/\/\S+)/g)].at(-1)?.[1];
  if (!url) throw new Error("the gateway's inspector address is not in its log");
  const socket = new WebSocket(url);
  await new Promise((resolve, reject) => {
    socket.addEventListener('open', resolve, { once: true });
    socket.addEventListener('error', reject, { once: true });
  });
  let nextId = 0;
  const send = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<{ result?: { value?: string } }>((resolve) => {
      const id = (nextId += 1);
      const listener = (event: MessageEvent) => {
        const message = JSON.parse(String(event.data)) as { id?: number; result?: { result?: { value?: string } } };
        if (message.id !== id) return;
        socket.removeEventListener('message', listener);
        resolve(message.result ?? {});
      };
      socket.addEventListener('message', listener);
      socket.send(JSON.stringify({ id, method, params }));
    });
  try {
    await send('HeapProfiler.collectGarbage');
    const { result } = await send('Runtime.evaluate', {
      expression: 'String(process.memoryUsage().heapUsed)',
      returnByValue: true,
    });
    const status = fs.readFileSync(`/proc/${gatewayPid(stack)}/status`, 'utf8');
    return {
      heapUsed: Number(result?.value) / 1024 / 1024,
      rss: Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1]) / 1024,
    };
  } finally {
    socket.close();
  }
}

describe('rate limits of 100 orgs, each at its own tier', () => {
  let stack: TestStack;
  const orgs = Array.from({ length: ORGS }, (_, index) => ({
    orgId: randomUUID(),
    clientId: randomUUID(),
    clientSecret: randomBytes(32).toString('base64url'),
    ...tierOf(index),
  }));

  beforeAll(async () => {
    // The gateway as deployed (dist/, tools/node-runtime.json), so its memory is the one that counts.
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: repositoryRoot, stdio: 'pipe' });
    stack = await TestStack.start({
      apps: ['auth', 'platform', 'gateway'],
      entry: 'dist',
      // The inspector (on a free port) lets the test collect the gateway's garbage before weighing it.
      env: { TRUSTED_PROXIES: '127.0.0.1', NODE_OPTIONS: '--inspect=127.0.0.1:0' },
    });
    // One client made by the operator CLI is the template; the other 100 are copies of its row with
    // their own id, org and secret, and each org gets its own tier: 100 CLI runs would take minutes.
    const template = stack.cli<{ client_id: string }>(
      'create-client',
      '--org-id',
      randomUUID(),
      '--name',
      'template',
      '--scopes',
      'system:read',
    );
    const auth = new pg.Client({ connectionString: stack.env.AUTH_DATABASE_URL });
    const platform = new pg.Client({ connectionString: stack.env.PLATFORM_DATABASE_URL });
    await Promise.all([auth.connect(), platform.connect()]);
    try {
      const copied = await auth.query(
        `INSERT INTO clients (id, org_id, name, type, secret_hash, grant_types, redirect_uris, scopes, roles, updated_at)
         SELECT new.id, new.org_id::uuid, 'scale ' || new.id, c.type, new.secret_hash, c.grant_types,
                c.redirect_uris, c.scopes, c.roles, now()
           FROM clients c, unnest($1::text[], $2::text[], $3::text[]) AS new(id, org_id, secret_hash)
          WHERE c.id = $4`,
        [
          orgs.map((org) => org.clientId),
          orgs.map((org) => org.orgId),
          // Client secrets are stored as their SHA-256 (hex), as the auth service stores them.
          orgs.map((org) => createHash('sha256').update(org.clientSecret, 'utf8').digest('hex')),
          template.client_id,
        ],
      );
      expect(copied.rowCount).toBe(ORGS);
      await platform.query(
        `INSERT INTO rate_limit_overrides (org_id, "group", rate_per_minute, burst, scope, updated_at)
         SELECT org_id, 'system.read', rate, burst, 'per-token', now()
           FROM unnest($1::text[], $2::int[], $3::int[]) AS tier(org_id, rate, burst)`,
        [orgs.map((org) => org.orgId), orgs.map((org) => org.ratePerMinute), orgs.map((org) => org.burst)],
      );
    } finally {
      await Promise.all([auth.end(), platform.end()]);
    }
  });

  afterAll(async () => {
    await stack?.close();
  });

  it('answers 429 at exactly each org’s capacity; the gateway holds 100 orgs in < 2 MiB more heap, within its RSS target', async () => {
    const tiers = orgs.map((org) => `${org.ratePerMinute}/${org.burst}`);
    expect(new Set(tiers).size).toBe(ORGS);

    /** The statuses and X-RateLimit headers of one org's capacity + 1 requests, one after another. */
    const exhaust = async (org: (typeof orgs)[number], index: number) => {
      const issued = await fetch(stack.url('/v2/auth/token'), {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': `198.51.100.${index}` },
        body: JSON.stringify({
          grant_type: 'client_credentials',
          client_id: org.clientId,
          client_secret: org.clientSecret,
        }),
      });
      expect(issued.status).toBe(200);
      const { access_token: token } = (await issued.json()) as { access_token: string };
      const seen: Array<[number, string | null, string | null]> = [];
      for (let sent = 0; sent <= org.capacity; sent += 1) {
        const response = await fetch(stack.url('/v2/system/rate-limits'), {
          headers: { authorization: `Bearer ${token}` },
        });
        await response.arrayBuffer();
        seen.push([
          response.status,
          response.headers.get('x-ratelimit-limit'),
          response.headers.get('x-ratelimit-remaining'),
        ]);
      }
      return seen;
    };

    // Ten orgs at a time, each org's requests in order: all 100 sets of tiers are in the gateway at once.
    const results: Array<Array<[number, string | null, string | null]>> = [];
    let afterFirstBatch: { heapUsed: number; rss: number } | undefined;
    for (let first = 0; first < ORGS; first += 10) {
      const batch = orgs.slice(first, first + 10);
      results.push(...(await Promise.all(batch.map((org, offset) => exhaust(org, first + offset)))));
      afterFirstBatch ??= await gatewayMemoryAfterGc(stack);
    }

    orgs.forEach((org, index) => {
      const expected: Array<[number, string, string]> = [
        ...Array.from({ length: org.capacity }, (_, sent): [number, string, string] => [
          200,
          String(org.capacity),
          String(org.capacity - 1 - sent),
        ]),
        [429, String(org.capacity), '0'],
      ];
      expect([`org ${index} (${tiers[index]})`, results[index]]).toEqual([`org ${index} (${tiers[index]})`, expected]);
    });

    // What the gateway holds for 100 orgs (tiers, buckets' state, verified tokens) instead of 10: under
    // 2 MiB more heap, and all of it within the RSS target.
    const after = await gatewayMemoryAfterGc(stack);
    expect(after.heapUsed - afterFirstBatch!.heapUsed).toBeLessThan(2);
    expect(after.rss).toBeLessThanOrEqual(GATEWAY_RSS_TARGET_MIB);
  });
});
