import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { DedicatedServer, postgresServerUrl, TcpProxy, TestStack, waitFor } from '@acct/testing';

/**
 * docs/runbook.md, "Dependency outages": with NATS away the mailer's `/readyz` answers 503. A NATS
 * that hangs (a partition, a stopped node: its socket open, nothing answering) is away too: the probe
 * gets its 503 within a Kubernetes probe's timeout, as every other process's `/readyz` answers during
 * an outage of its own dependency, instead of a request that never ends (the round trip it measured
 * waited for a PONG until the client's own ping noticed, minutes later).
 */
describe('the mailer’s readiness while NATS hangs', () => {
  let stack: TestStack;
  let nats: DedicatedServer;
  let natsDir: string;

  beforeAll(async () => {
    natsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'readiness-nats-'));
    nats = await DedicatedServer.nats(natsDir);
    stack = await TestStack.start({ apps: ['mailer'], natsUrl: nats.url });
  });

  afterAll(async () => {
    nats?.signal('SIGCONT');
    await stack?.close();
    await nats?.stop();
    fs.rmSync(natsDir, { recursive: true, force: true });
  });

  /** `/readyz`'s status, or `timeout` past the readiness probe's `timeoutSeconds` (3 s, k8s/base). */
  const readiness = async () => {
    try {
      return (await fetch(stack.opsUrl('mailer', '/readyz'), { signal: AbortSignal.timeout(3000) })).status;
    } catch {
      return 'timeout';
    }
  };

  it('answers 503 within the probe’s timeout while NATS hangs, and 200 once it answers again', async () => {
    await waitFor('the mailer ready', async () => ((await readiness()) === 200 ? true : undefined));
    nats.signal('SIGSTOP');
    expect(await readiness()).toBe(503);
    expect(await readiness()).toBe(503);
    nats.signal('SIGCONT');
    await waitFor('the mailer ready again', async () => ((await readiness()) === 200 ? true : undefined), {
      timeoutMs: 5_000,
    });
  });
});

/**
 * docs/runbook.md, "Dependency outages": once Postgres answers again "pods become ready by
 * themselves". An auth instance started while its database was away has no signing key and is
 * unready; unready, it gets no calls, so nothing asked it to read the keys but its reload interval
 * (SIGNING_KEY_RELOAD_MS, 30 s): it stayed out of rotation that long after the database was back.
 */
describe('auth started while its database was away', () => {
  let stack: TestStack;
  let postgres: TcpProxy;

  beforeAll(async () => {
    postgres = await TcpProxy.start(Number(postgresServerUrl().port || 5432));
    stack = await TestStack.start({ apps: [], postgresPort: postgres.port });
  }, 180_000);

  afterAll(async () => {
    await stack?.close();
    await postgres?.cut();
  });

  const readiness = async () => {
    const answer = await fetch(stack.opsUrl('auth', '/readyz'), { signal: AbortSignal.timeout(3000) });
    return { status: answer.status, body: (await answer.json()) as { error?: Record<string, unknown> } };
  };

  it('turns ready within seconds of the database answering again', async () => {
    await postgres.cut();
    await stack.startApp('auth');
    const unready = await readiness();
    expect(unready.status).toBe(503);
    expect(Object.keys(unready.body.error ?? {})).toEqual(expect.arrayContaining(['database', 'signing_keys']));
    await postgres.resume();
    await waitFor('auth ready', async () => ((await readiness()).status === 200 ? true : undefined), {
      timeoutMs: 5_000,
    });
  });
});
