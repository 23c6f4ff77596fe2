import { LoadSample, SteadyLoad } from './steady-load';

export type FaultMode = 'stop' | 'hang' | 'restart';
export type HealthStatus = 'healthy' | 'degraded' | 'down';

/** One cell of the fault matrix: how to break a dependency and how to heal it. */
export interface Fault {
  dependency: string;
  mode: FaultMode;
  /** stop: kill it; hang: SIGSTOP (or a proxy that stops moving bytes); restart: kill and start again. */
  inject(): Promise<void> | void;
  /** Undoes `inject` (start, SIGCONT); nothing for a restart, which heals itself. */
  heal(): Promise<void> | void;
}

export interface FaultObservation {
  fault: Fault;
  /** Health statuses the gateway reported while the fault lasted. */
  healthSeen: Set<string>;
  /** Everything the steady load got while the fault lasted. */
  during: LoadSample[];
  /** From `heal` (or, for a restart, from `inject`) until a full round of requests succeeded. */
  recoveryMs: number;
}

export interface FaultRunOptions {
  gateway: string;
  load: SteadyLoad;
  /** The health status the fault should produce (waited for, up to `detectTimeoutMs`). */
  expectHealth: HealthStatus;
  /** How long the load keeps running against the fault once health shows it (2.5 s; a hang 5 s). */
  holdMs?: number;
  detectTimeoutMs?: number;
  recoverTimeoutMs?: number;
  /** One request of each kind, all of which must succeed for the stack to count as recovered. */
  probe: () => Promise<boolean>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function healthStatus(gateway: string): Promise<string> {
  try {
    const response = await fetch(`${gateway}/v2/system/health`, { signal: AbortSignal.timeout(5000) });
    return ((await response.json()) as { status?: string }).status ?? 'unknown';
  } catch {
    return 'no answer';
  }
}

/**
 * Runs one fault while the steady load goes on: injects it, waits until health reports what the
 * fault should produce, holds it a little longer, heals it and measures the time until the whole
 * stack answers again (nothing else is restarted).
 */
export async function runFault(fault: Fault, options: FaultRunOptions): Promise<FaultObservation> {
  const healthSeen = new Set<string>();
  const started = Date.now();
  await fault.inject();
  const restartedAt = Date.now();
  if (fault.mode !== 'restart') {
    const detectBy = Date.now() + (options.detectTimeoutMs ?? 15_000);
    for (;;) {
      const status = await healthStatus(options.gateway);
      healthSeen.add(status);
      if (status === options.expectHealth || Date.now() > detectBy) break;
      await sleep(100);
    }
    // A hung dependency's requests fail only at the gRPC deadline (2 s), and the load runs its
    // operations one after another: a hang is held for two deadlines, so at least one operation starts
    // and fails inside it whatever the load was doing when it began.
    const holdUntil = Date.now() + (options.holdMs ?? (fault.mode === 'hang' ? 5000 : 2500));
    while (Date.now() < holdUntil) {
      healthSeen.add(await healthStatus(options.gateway));
      await sleep(200);
    }
  }
  const healedAt = fault.mode === 'restart' ? restartedAt : Date.now();
  await fault.heal();
  const recoverBy = Date.now() + (options.recoverTimeoutMs ?? 60_000);
  for (;;) {
    if ((await healthStatus(options.gateway)) === 'healthy' && (await options.probe())) break;
    if (Date.now() > recoverBy) throw new Error(`${fault.dependency} ${fault.mode}: no recovery`);
    await sleep(100);
  }
  const recoveredAt = Date.now();
  await options.load.answeredBefore(recoveredAt);
  return {
    fault,
    healthSeen,
    during: options.load.samples.filter((sample) => sample.at >= started && sample.at < recoveredAt),
    recoveryMs: recoveredAt - healedAt,
  };
}

/** The observations as a small table for the test log. */
export function recoveryTable(observations: FaultObservation[]): string {
  const rows = observations.map((observation) => {
    const statuses = new Map<string, number>();
    for (const sample of observation.during) {
      if (sample.status >= 200 && sample.status < 300) continue;
      const key = `${sample.operation} ${sample.status}${sample.code ? ` ${sample.code}` : ''}`;
      statuses.set(key, (statuses.get(key) ?? 0) + 1);
    }
    const slowest = Math.max(0, ...observation.during.map((sample) => sample.ms));
    const ok = (['create', 'read', 'token'] as const).map((operation) => {
      const samples = observation.during.filter((sample) => sample.operation === operation);
      const good = samples.filter((sample) => sample.status >= 200 && sample.status < 300);
      return `${operation} ${good.length}/${samples.length}`;
    });
    return [
      observation.fault.dependency,
      observation.fault.mode,
      [...observation.healthSeen].join('/'),
      ok.join(', '),
      [...statuses].map(([key, count]) => `${count}×${key}`).join(', ') || 'none',
      `${slowest}`,
      `${observation.recoveryMs}`,
    ];
  });
  const header = [
    'dependency',
    'fault',
    'health seen',
    '2xx / requests',
    'other answers during the fault',
    'slowest ms',
    'recovery ms',
  ];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)));
  const line = (cells: string[]) => `| ${cells.map((cell, column) => cell.padEnd(widths[column])).join(' | ')} |`;
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n');
}

export interface FaultExpectations {
  /** Every request must be answered within this (a backend that hangs must not hang the client). */
  deadlineMs: number;
  /** Whether requests other than health may fail (503) while the fault lasts; false: fallback, all 2xx. */
  requestsMayFail: boolean;
}

/**
 * What went wrong during a fault, as readable lines (empty when all is as documented): no request
 * unanswered or slower than the deadline; the only 5xx is 503 service_unavailable problem+json with
 * Retry-After (health: 503 with its JSON report); with `requestsMayFail: false`, no failure at all.
 */
export function faultViolations(observation: FaultObservation, expectations: FaultExpectations): string[] {
  const violations: string[] = [];
  for (const sample of observation.during) {
    const what = `${sample.operation} at +${sample.at - (observation.during[0]?.at ?? sample.at)} ms`;
    if (sample.status === 0) violations.push(`${what}: no answer after ${sample.ms} ms`);
    else if (sample.ms > expectations.deadlineMs) violations.push(`${what}: ${sample.status} after ${sample.ms} ms`);
    if (sample.status >= 500 && sample.status !== 503) violations.push(`${what}: ${sample.status} ${sample.code}`);
    if (sample.status === 503 && sample.operation !== 'health') {
      if (sample.code !== 'service_unavailable' || !sample.problemJson || !sample.retryAfter)
        violations.push(`${what}: 503 without service_unavailable problem+json and Retry-After`);
    }
    if (sample.status >= 300 && !sample.problemJson) violations.push(`${what}: ${sample.status} not problem+json`);
    const failed = sample.status < 200 || sample.status >= 300;
    if (!expectations.requestsMayFail && sample.operation !== 'health' && failed)
      violations.push(`${what}: ${sample.status} ${sample.code} although this fault has a fallback`);
  }
  return violations;
}

/**
 * After the load has stopped and settled: what was lost or doubled, as readable lines (empty when
 * nothing). Every creation has exactly one id that still exists with its e-mail (a retried
 * Idempotency-Key answered its first result again, never `email_taken`), and every user got exactly
 * one activation e-mail.
 */
export async function lostOrDoubledWrites(
  load: SteadyLoad,
  options: {
    gateway: string;
    token: string;
    mailsTo: (address: string) => number;
    /** Whether a second copy to this address is the documented repeat after a crash (see FaultSuite). */
    repeatExplained?: (address: string) => boolean;
    mailTimeoutMs?: number;
  },
): Promise<string[]> {
  const violations: string[] = [];
  for (const creation of load.creations) {
    if (creation.ids.size !== 1) violations.push(`${creation.key}: ${creation.ids.size} different users`);
    if (creation.failures.some((failure) => failure.code === 'email_taken'))
      violations.push(`${creation.key}: a retry was refused as email_taken (its first attempt's result was lost)`);
    const response = await fetch(`${options.gateway}/v2/users/${creation.id}`, {
      headers: { authorization: `Bearer ${options.token}` },
    });
    const user = (await response.json()) as { email?: string };
    if (response.status !== 200 || user.email !== creation.email)
      violations.push(`${creation.key}: user ${creation.id} answered ${response.status} ${user.email}`);
  }
  const deadline = Date.now() + (options.mailTimeoutMs ?? 90_000);
  while (load.creations.some((creation) => options.mailsTo(creation.email) === 0) && Date.now() < deadline) {
    await sleep(250);
  }
  await sleep(2000); // a late duplicate would arrive about now
  for (const creation of load.creations) {
    const count = options.mailsTo(creation.email);
    if (count === 2 && options.repeatExplained?.(creation.email)) continue;
    if (count !== 1) violations.push(`${creation.email}: ${count} activation e-mails`);
  }
  return violations;
}
