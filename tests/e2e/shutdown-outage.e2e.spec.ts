import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { APPS, DedicatedServer, TestStack, waitFor } from '@acct/testing';

/**
 * README "Operations": on SIGTERM a process finishes what is in flight and exits 0 within
 * SHUTDOWN_GRACE_MS, also while a dependency is away. The mailer's readiness keeps a NATS connection
 * of its own: with NATS gone (stopped while the mailer ran, or never there) nothing is in flight, and
 * the mailer still stops at once and cleanly, rather than waiting for NATS until the grace period
 * runs out and exiting 1.
 */
describe('the mailer stopping while NATS is away', () => {
  let stack: TestStack;
  let nats: DedicatedServer;
  let natsDir: string;

  const readiness = async () => (await fetch(stack.opsUrl('mailer', '/readyz'))).status;

  beforeAll(async () => {
    natsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'shutdown-nats-'));
    nats = await DedicatedServer.nats(natsDir);
    stack = await TestStack.start({ apps: ['mailer'], natsUrl: nats.url, env: { SHUTDOWN_GRACE_MS: '8000' } });
  });

  afterAll(async () => {
    await stack?.close();
    await nats?.stop();
    fs.rmSync(natsDir, { recursive: true, force: true });
  });

  it('exits 0 on SIGTERM after NATS went away while it ran', async () => {
    await waitFor('the mailer ready', async () => ((await readiness()) === 200 ? true : undefined));
    await nats.stop();
    await waitFor('the mailer unready', async () => ((await readiness()) === 503 ? true : undefined));
    expect(await stack.terminateApp('mailer')).toEqual({ code: 0, signal: null });
  });

  it('exits 0 on SIGTERM when NATS was never there', async () => {
    await stack.startApp('mailer');
    expect(await readiness()).toBe(503);
    expect(await stack.terminateApp('mailer')).toEqual({ code: 0, signal: null });
  });
});

/**
 * A NATS that hangs (a partition, a stopped node: its socket stays open and answers nothing) is not one
 * that is gone: draining a connection to it waits for an answer that never comes. Every process keeps
 * NATS connections (the revocation notices; identity's outbox, the consumers of auth, the platform and
 * the mailer), and each still stops cleanly within its grace, nothing being in flight.
 */
describe('every process stopping while NATS hangs', () => {
  const GRACE_MS = 8000;
  let stack: TestStack;
  let nats: DedicatedServer;
  let natsDir: string;

  beforeAll(async () => {
    natsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'shutdown-nats-hung-'));
    nats = await DedicatedServer.nats(natsDir);
    stack = await TestStack.start({ natsUrl: nats.url, env: { SHUTDOWN_GRACE_MS: String(GRACE_MS) } });
  });

  afterAll(async () => {
    nats?.signal('SIGCONT');
    await stack?.close();
    await nats?.stop();
    fs.rmSync(natsDir, { recursive: true, force: true });
  });

  it('each exits 0 on SIGTERM, within the grace', async () => {
    await waitFor('the mailer ready', async () =>
      (await fetch(stack.opsUrl('mailer', '/readyz'))).status === 200 ? true : undefined,
    );
    nats.signal('SIGSTOP');
    // Past the grace a process exits 1 ("shutdown grace period over").
    const exits = await Promise.all(APPS.map(async (app) => ({ app, ...(await stack.terminateApp(app)) })));
    expect(exits).toEqual(APPS.map((app) => ({ app, code: 0, signal: null })));
  });
});
