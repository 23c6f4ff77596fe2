import { execFileSync } from 'node:child_process';
import os from 'node:os';

import type { LoadResult } from './load';
import type { ThreadCpu } from './processes';
import { type Layer, LAYER_LEGEND, LAYERS, type ProfileSummary } from './profiler';

export interface ScenarioResult {
  name: string;
  /** What was sent, in one line. */
  request: string;
  /** Set when the scenario could not run (its smoke request failed); then there are no numbers. */
  skipped?: string;
  result?: LoadResult;
  /** CPU time (user + system, all threads) each process used during the measured run, ms. */
  cpu_ms?: Record<string, number>;
  /** Of cpu_ms, each service's split by thread: main thread, libuv's pool (argon2), V8's helpers. */
  thread_cpu_ms?: Record<string, ThreadCpu>;
  /** RSS of each service right after the measured run, MiB: which scenario grows which process. */
  rss_after_mb?: Record<string, number>;
}

export interface Ratio {
  scenario: string;
  /** baseline req/s ÷ scenario req/s: how many times more requests the bare handler serves. */
  rps_ratio: number;
  /** passthrough req/s ÷ scenario req/s: the distance to the floor of a request that reaches a service. */
  passthrough_ratio?: number;
  /** scenario p99 ÷ baseline p99 (both whole milliseconds; a 0 ms baseline counts as 1 ms). */
  p99_ratio: number;
}

/** argon2 operations per second with identity's parameters and thread count, nothing else in the process. */
export interface Argon2Bound {
  mode: 'verify' | 'hash';
  per_second: number;
  threads: number;
  in_flight: number;
  memory_kib: number;
  iterations: number;
  parallelism: number;
}

/** `process.memoryUsage()` right after the load, MiB: the V8 heap (reserved, used) and memory outside it. */
export interface HeapUsage {
  heap_total_mb: number;
  heap_used_mb: number;
  external_mb: number;
}

export interface ProcessMemory {
  pid: number;
  /** The largest VmRSS sampled (every 100 ms) while the measured runs were under way, MiB. */
  peak_under_load_mb: number | null;
  /** VmRSS 5 s after the last measured run (before the profiling runs), MiB. */
  after_load_mb: number | null;
  /** Of after_load_mb, file pages (RssFile): Node's binary and shared libraries, MiB. */
  after_load_file_mb?: number | null;
  /** VmHWM at that moment: the largest RSS since start, start-up included, MiB. */
  lifetime_peak_mb: number | null;
  heap?: HeapUsage | null;
}

export interface Report {
  date: string;
  machine: {
    cpus: number;
    model: string;
    total_memory_mb: number;
    node: string;
    platform: string;
    load_average_at_start: number[];
  };
  git: { commit: string; dirty: boolean } | null;
  config: { duration_s: number; warmup_s: number; connections: number; profile_s: number; entry: 'source' | 'dist' };
  /** `status` of GET /v2/system/health before the scenarios (`healthy` expected). */
  stack_health_at_start: string;
  scenarios: ScenarioResult[];
  argon2: Partial<Record<'verify' | 'hash', Argon2Bound | { skipped: string }>>;
  /** Every scenario against the baseline (and the passthrough floor). */
  ratios: Ratio[];
  targets: TargetCheck[];
  memory: Record<string, ProcessMemory | null>;
  memory_targets: MemoryCheck[];
}

/** Per scenario, per process: where the CPU went (written to profiles.json and profiles.md). */
export interface ProfileReport {
  date: string;
  git: Report['git'];
  profile_s: number;
  scenarios: Array<{
    name: string;
    skipped?: string;
    /** Responses to the profiled load: the per-request times divide by it. */
    requests?: number;
    processes: Record<string, ProfileSummary>;
  }>;
}

export function machine(): Report['machine'] {
  const cpus = os.cpus();
  return {
    cpus: cpus.length,
    model: cpus[0]?.model.trim() ?? 'unknown',
    total_memory_mb: Math.round(os.totalmem() / 1024 / 1024),
    node: process.version,
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    load_average_at_start: os.loadavg().map((value) => Math.round(value * 100) / 100),
  };
}

export function gitState(cwd: string): Report['git'] {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain'], { cwd, encoding: 'utf8' }).trim() !== '';
    return { commit, dirty };
  } catch {
    return null;
  }
}

const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

const BASELINE_RUNS = ['baseline', 'baseline-end'];

/**
 * The bare handler's req/s the ratios divide: the mean of its run before the scenarios and its run
 * after them (`baseline-end`), so a machine that speeds up or slows down during the run weighs on
 * every scenario alike; the first run alone when the second did not run.
 */
export function baselineRate(scenarios: ScenarioResult[]): number | undefined {
  const rates = BASELINE_RUNS.flatMap((name) => {
    const rate = scenarios.find((scenario) => scenario.name === name)?.result?.requests_per_second;
    return rate ? [rate] : [];
  });
  return rates.length === 0 ? undefined : rates.reduce((sum, rate) => sum + rate, 0) / rates.length;
}

export function ratios(scenarios: ScenarioResult[]): Ratio[] {
  const baseline = scenarios.find((scenario) => scenario.name === 'baseline')?.result;
  const baselineRps = baselineRate(scenarios);
  const passthrough = scenarios.find((scenario) => scenario.name === 'passthrough')?.result;
  if (!baseline || !baselineRps) return [];
  return scenarios
    .filter(
      (scenario) =>
        !BASELINE_RUNS.includes(scenario.name) && scenario.result && scenario.result.requests_per_second > 0,
    )
    .map((scenario) => ({
      scenario: scenario.name,
      rps_ratio: round(baselineRps / scenario.result!.requests_per_second),
      passthrough_ratio:
        passthrough && scenario.name !== 'passthrough'
          ? round(passthrough.requests_per_second / scenario.result!.requests_per_second)
          : undefined,
      p99_ratio: round(scenario.result!.latency_p99_ms / Math.max(baseline.latency_p99_ms, 1)),
    }));
}

/** The targets of issue 15, per scenario. */
type Target =
  | { scenario: string; label: string; max_ratio: number; why: string }
  | { scenario: string; label: string; min_share: number; of: 'verify' | 'hash'; why: string };

export const TARGETS: Target[] = [
  { scenario: 'health', label: 'health', max_ratio: 4, why: 'no backend round trip per request' },
  { scenario: 'rate-limits', label: 'rate-limits', max_ratio: 4, why: 'tiers cached in the gateway' },
  { scenario: 'users-read', label: 'users-read (`/v2/users/me`)', max_ratio: 20, why: '' },
  { scenario: 'token-client-credentials', label: 'client_credentials', max_ratio: 20, why: '' },
  { scenario: 'token-refresh', label: 'refresh (chained)', max_ratio: 40, why: '' },
  { scenario: 'token-password', label: 'password', min_share: 0.9, of: 'verify', why: 'one argon2 verification each' },
  { scenario: 'users-create', label: 'users-create', min_share: 0.9, of: 'hash', why: 'one argon2 hash each' },
];

export const MEMORY_TARGETS_MB: Record<string, number> = {
  identity: 160,
  auth: 160,
  platform: 160,
  gateway: 120,
  mailer: 120,
};

export interface TargetCheck {
  scenario: string;
  label: string;
  requests_per_second: number | null;
  rps_ratio: number | null;
  passthrough_ratio: number | null;
  /**
   * baseline ÷ req/s of the scenario's architecture floor (`floor-<scenario>`, bench/floors.mjs): its hops
   * with nothing of the service around them; a target below it is out of reach of any code on those hops.
   */
  floor_ratio?: number | null;
  target: string;
  /** For the argon2-bound scenarios: req/s as a share of the bound. */
  share_of_bound?: number | null;
  /** CPU time of every process (the load generator too) per request answered, µs. */
  cpu_us_per_request?: number | null;
  /**
   * The most CPU a request may cost, over every process, for the target's req/s to be possible at all:
   * the machine's cores, all busy, divided by that req/s, µs.
   */
  cpu_budget_us?: number | null;
  pass: boolean | null;
}

export interface MemoryCheck {
  process: string;
  target_mb: number;
  peak_under_load_mb: number | null;
  after_load_mb: number | null;
  pass: boolean | null;
}

/** CPU time of every process together during a measured run, ms. */
const totalCpuMs = (cpuMs: Record<string, number>) => Object.values(cpuMs).reduce((sum, ms) => sum + ms, 0);

/** CPU time of every process per request answered in a scenario's measured run, µs. */
function cpuPerRequest(scenario: ScenarioResult | undefined): number | null {
  if (!scenario?.result || !scenario.cpu_ms || scenario.result.responses === 0) return null;
  return Math.round((totalCpuMs(scenario.cpu_ms) * 1000) / scenario.result.responses);
}

export function checkTargets(
  scenarios: ScenarioResult[],
  ratioList: Ratio[],
  argon2: Report['argon2'],
  cores: number,
): TargetCheck[] {
  const baselineRps = baselineRate(scenarios);
  /** The CPU a request may cost for `rps` to fit on every core. */
  const budget = (rps: number | undefined) => (rps ? Math.round((cores * 1_000_000) / rps) : null);
  return TARGETS.map((target) => {
    const scenario = scenarios.find((candidate) => candidate.name === target.scenario);
    const result = scenario?.result;
    const ratio = ratioList.find((item) => item.scenario === target.scenario);
    const base = {
      scenario: target.scenario,
      label: target.label,
      requests_per_second: result?.requests_per_second ?? null,
      rps_ratio: ratio?.rps_ratio ?? null,
      passthrough_ratio: ratio?.passthrough_ratio ?? null,
      cpu_us_per_request: cpuPerRequest(scenario),
    };
    if ('max_ratio' in target) {
      const floor = ratioList.find((item) => item.scenario === `floor-${target.scenario}`);
      return {
        ...base,
        floor_ratio: floor?.rps_ratio ?? null,
        target: `≤ ${target.max_ratio}×${target.why ? ` (${target.why})` : ''}`,
        cpu_budget_us: budget(baselineRps && baselineRps / target.max_ratio),
        pass: ratio ? ratio.rps_ratio <= target.max_ratio : null,
      };
    }
    const bound = argon2[target.of];
    const perSecond = bound && 'per_second' in bound ? bound.per_second : undefined;
    const share = result && perSecond ? round(result.requests_per_second / perSecond, 3) : null;
    return {
      ...base,
      target: `≥ ${target.min_share * 100} % of the argon2 ${target.of} bound${perSecond ? ` (${number(perSecond)}/s)` : ''}`,
      share_of_bound: share,
      cpu_budget_us: budget(perSecond && perSecond * target.min_share),
      pass: share === null ? null : share >= target.min_share,
    };
  });
}

export function checkMemory(memory: Report['memory']): MemoryCheck[] {
  return Object.entries(MEMORY_TARGETS_MB).map(([name, target]) => {
    const measured = memory[name];
    const after = measured?.after_load_mb ?? null;
    return {
      process: name,
      target_mb: target,
      peak_under_load_mb: measured?.peak_under_load_mb ?? null,
      after_load_mb: after,
      pass: after === null ? null : after <= target,
    };
  });
}

const number = (value: number) => value.toLocaleString('en-US', { maximumFractionDigits: 1 });
const verdict = (pass: boolean | null) => (pass === null ? 'not measured' : pass ? 'pass' : '**miss**');

/** The issue's table: req/s, baseline ÷ req/s, passthrough ÷ req/s, target, pass or miss. */
export function targetTable(report: Report): string[] {
  const row = (name: string) => report.scenarios.find((scenario) => scenario.name === name);
  const lines = [
    '| scenario | req/s | baseline ÷ req/s | passthrough ÷ req/s | its floor: baseline ÷ req/s | target | result | CPU µs/request | at most, for the target |',
    '|---|--:|--:|--:|--:|---|---|--:|--:|',
  ];
  const before = row('baseline')?.result;
  const after = row('baseline-end')?.result;
  const mean = baselineRate(report.scenarios);
  const runs =
    before && after
      ? `; mean of ${number(before.requests_per_second)} before and ${number(after.requests_per_second)} after the scenarios`
      : '';
  const cpu = (name: string) => {
    const perRequest = cpuPerRequest(row(name));
    return perRequest === null ? '' : number(perRequest);
  };
  lines.push(`| baseline (bare Fastify${runs}) | ${mean ? number(mean) : '—'} | 1× | | | | | ${cpu('baseline')} | |`);
  const passthrough = row('passthrough');
  const passthroughRatio = report.ratios.find((ratio) => ratio.scenario === 'passthrough');
  lines.push(
    `| passthrough (Fastify → grpc-js → trivial server) | ${passthrough?.result ? number(passthrough.result.requests_per_second) : (passthrough?.skipped ?? '—')} | ` +
      `${passthroughRatio ? `${passthroughRatio.rps_ratio}×` : '—'} | 1× | | the floor of a request that reaches a service | | ${cpu('passthrough')} | |`,
  );
  for (const mode of ['verify', 'hash'] as const) {
    const bound = report.argon2[mode];
    const detail =
      bound && 'per_second' in bound
        ? `m=${bound.memory_kib} KiB, t=${bound.iterations}, p=${bound.parallelism}, ${bound.threads} threads`
        : (bound?.skipped ?? 'not run');
    const value = bound && 'per_second' in bound ? number(bound.per_second) : '—';
    lines.push(
      `| argon2 ${mode} bound (${mode === 'verify' ? 'verifications' : 'hashes'}/s) | ${value} | | | | ${detail} | | | |`,
    );
  }
  for (const check of report.targets) {
    const skipped = row(check.scenario)?.skipped;
    const rps = check.requests_per_second === null ? `skipped: ${skipped ?? '?'}` : number(check.requests_per_second);
    const share = check.share_of_bound != null ? ` — ${round(check.share_of_bound * 100, 1)} %` : '';
    const ratioOrDash = (ratio: number | null | undefined) => (ratio == null ? '—' : `${ratio}×`);
    lines.push(
      `| ${check.label} | ${rps} | ${ratioOrDash(check.rps_ratio)} | ${ratioOrDash(check.passthrough_ratio)} | ` +
        `${check.floor_ratio === undefined ? '' : ratioOrDash(check.floor_ratio)} | ${check.target} | ${verdict(check.pass)}${share} | ` +
        `${check.cpu_us_per_request == null ? '' : number(check.cpu_us_per_request)} | ` +
        `${check.cpu_budget_us == null ? '' : number(check.cpu_budget_us)} |`,
    );
  }
  return lines;
}

/** Machine time per request: each process's CPU during the measured run over the requests answered. */
function cpuTable(report: Report): string[] {
  const columns = [...new Set(report.scenarios.flatMap((scenario) => Object.keys(scenario.cpu_ms ?? {}))).values()];
  if (columns.length === 0) return [];
  const lines = [
    '',
    '## CPU per request',
    '',
    'CPU time (user + system, every thread) each process used during the measured run, divided by the requests ' +
      'answered, in µs; "cores" is the total over the run\'s length. With the two cores saturated, req/s ≈ ' +
      '2,000,000 µs ÷ the total.',
    '',
    `| scenario | ${columns.join(' | ')} | total µs | cores |`,
    `|---|${columns.map(() => '--:').join('|')}|--:|--:|`,
  ];
  for (const scenario of report.scenarios) {
    const perRequest = cpuPerRequest(scenario);
    if (perRequest === null || !scenario.result || !scenario.cpu_ms) continue;
    const requests = scenario.result.responses;
    const cells = columns.map((column) => {
      const ms = scenario.cpu_ms?.[column];
      return ms === undefined ? '' : number(Math.round((ms * 1000) / requests));
    });
    lines.push(
      `| ${scenario.name} | ${cells.join(' | ')} | ${number(perRequest)} | ` +
        `${round(totalCpuMs(scenario.cpu_ms) / 1000 / scenario.result.duration_s, 2)} |`,
    );
  }
  return lines;
}

/** The services that hash passwords or sign tokens, by thread, µs per request (see ThreadCpu). */
const THREAD_TABLE_SERVICES = ['identity', 'auth'];

/**
 * Identity's and auth's CPU per request by thread: what the main thread (JavaScript, sockets) spends
 * beside libuv's pool (identity's argon2 hashes) and V8's helpers (garbage collection, compilation);
 * beside it, one hash of the argon2 bound (both cores ÷ its rate).
 */
function threadTable(report: Report): string[] {
  const rows = report.scenarios.filter(
    (scenario) => Object.keys(scenario.thread_cpu_ms ?? {}).length > 0 && scenario.result?.responses,
  );
  if (rows.length === 0) return [];
  const perHash = (bound: Argon2Bound | { skipped: string } | undefined) =>
    bound && 'per_second' in bound && bound.per_second > 0
      ? `${number(Math.round((report.machine.cpus * 1_000_000) / bound.per_second))} µs`
      : 'not measured';
  const columns = THREAD_TABLE_SERVICES.flatMap((service) =>
    ['main', 'pool', 'other'].map((kind) => `${service} ${kind}`),
  );
  const lines = [
    '',
    '## CPU per request by thread',
    '',
    "Of the table above, identity's and auth's CPU per request split by thread, in µs: the main thread " +
      "(JavaScript, the event loop, every socket read and write), libuv's pool (identity's argon2 hashes) and " +
      `V8's helpers (garbage collection, compilation). One argon2 operation of the bounds costs ` +
      `${perHash(report.argon2.verify)} (verify) and ${perHash(report.argon2.hash)} (hash) of CPU: both cores ÷ its rate.`,
    '',
    `| scenario | ${columns.join(' | ')} |`,
    `|---|${columns.map(() => '--:').join('|')}|`,
  ];
  for (const scenario of rows) {
    const requests = scenario.result?.responses ?? 1;
    const cells = THREAD_TABLE_SERVICES.flatMap((service) => {
      const split = scenario.thread_cpu_ms?.[service];
      return (['main', 'pool', 'other'] as const).map((kind) =>
        split ? number(Math.round((split[kind] * 1000) / requests)) : '',
      );
    });
    lines.push(`| ${scenario.name} | ${cells.join(' | ')} |`);
  }
  return lines;
}

export function markdown(report: Report): string {
  const { machine: host, config } = report;
  const lines = [
    `# Benchmark results`,
    '',
    `${report.date} · ${host.cpus} × ${host.model} · ${number(host.total_memory_mb)} MiB RAM · Node ${host.node}` +
      (report.git ? ` · commit ${report.git.commit}${report.git.dirty ? ' (dirty)' : ''}` : ''),
    '',
    `${config.connections} connections, ${config.duration_s} s per scenario after ${config.warmup_s} s of warm-up; ` +
      `load average at start ${host.load_average_at_start.join(' / ')}; stack health \`${report.stack_health_at_start}\`. ` +
      `Services run from ${config.entry === 'dist' ? '`dist/` (the build `npm run up` and the images run)' : 'source (SWC)'}. ` +
      'The load generator shares the machine. CPU profiles: `profiles.md`.',
    '',
    '## Targets (issue 15)',
    '',
    ...targetTable(report),
    '',
    '## Scenarios',
    '',
    '| Scenario | Request | req/s | p50 ms | p99 ms | 2xx | non-2xx | errors | baseline ÷ req/s | p99 ÷ baseline |',
    '|---|---|--:|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const scenario of report.scenarios) {
    const result = scenario.result;
    if (!result) {
      lines.push(`| ${scenario.name} | ${scenario.request} | skipped: ${scenario.skipped ?? '?'} | | | | | | | |`);
      continue;
    }
    const ratio = report.ratios.find((item) => item.scenario === scenario.name);
    const failures = result.errors + result.timeouts;
    const statuses = Object.entries(result.status_codes)
      .filter(([status]) => !status.startsWith('2'))
      .map(([status, count]) => `${count}×${status}`)
      .join(', ');
    lines.push(
      `| ${scenario.name} | ${scenario.request} | ${number(result.requests_per_second)} | ${result.latency_p50_ms} | ` +
        `${result.latency_p99_ms} | ${number(result.responses_2xx)} | ${number(result.non_2xx)}` +
        `${statuses ? ` (${statuses})` : ''} | ${failures} | ${ratio ? `${ratio.rps_ratio}×` : '—'} | ` +
        `${ratio ? `${ratio.p99_ratio}×` : '—'} |`,
    );
  }
  lines.push(...cpuTable(report));
  lines.push(...threadTable(report));
  lines.push(
    '',
    '## Memory',
    '',
    'RSS in MiB: the largest sampled (every 100 ms) during the measured runs, 5 s after them (before the ' +
      "profiling runs; the targets are for this one), and VmHWM (the process's peak since start, start-up " +
      "included). Under load identity also holds argon2's working memory: 19 MiB per hash in flight. " +
      "Files are the pages of Node's binary and the shared libraries mapped in (RssFile): the same pages in " +
      'every Node process of the machine, some 45 MiB in a bare Fastify server.',
    '',
    '| Process | pid | peak under load | after the load | of which files (Node binary, libraries) | since start (VmHWM) | V8 heap (used) after | target | result |',
    '|---|--:|--:|--:|--:|--:|--:|--:|---|',
  );
  const mb = (value: number | null | undefined) => (value == null ? '—' : number(value));
  for (const [name, memory] of Object.entries(report.memory)) {
    const check = report.memory_targets.find((item) => item.process === name);
    lines.push(
      memory
        ? `| ${name} | ${memory.pid} | ${mb(memory.peak_under_load_mb)} | ${mb(memory.after_load_mb)} | ` +
            `${mb(memory.after_load_file_mb)} | ` +
            `${mb(memory.lifetime_peak_mb)} | ${memory.heap ? `${mb(memory.heap.heap_total_mb)} (${mb(memory.heap.heap_used_mb)})` : '—'} | ` +
            `${check ? `≤ ${check.target_mb}` : ''} | ${check ? verdict(check.pass) : ''} |`
        : `| ${name} | — | not found | | | | | | |`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** The profiles as Markdown: per scenario, each process's time by layer, then its busiest functions. */
export function profilesMarkdown(report: ProfileReport, top: number): string {
  const lines = [
    '# CPU profiles',
    '',
    `${report.date}${report.git ? ` · commit ${report.git.commit}${report.git.dirty ? ' (dirty)' : ''}` : ''} · ` +
      `${report.profile_s} s of load per scenario, every process sampled each 1 ms by V8's profiler through its ` +
      'inspector (a separate run after the measured one, so the table is not slowed by it).',
    '',
    "Percentages are of the profile's wall time in each process's main thread. Busy = not idle. Self time: " +
      "a function itself, not what it calls; Node's own code and builtins without a file (`JSON.parse`, a " +
      'socket write, a signature check) count in the layer of the library or app code that called them. Postgres, Redis and NATS run in their own processes: their time ' +
      'shows here as idle (waiting), and their CPU in `latest.md`\'s "CPU per request".',
    '',
    '| layer | holds |',
    '|---|---|',
    ...LAYERS.map((layer) => `| ${layer} | ${LAYER_LEGEND[layer]} |`),
  ];
  for (const scenario of report.scenarios) {
    lines.push('', `## ${scenario.name}`, '');
    if (scenario.skipped) {
      lines.push(`Not profiled: ${scenario.skipped}`);
      continue;
    }
    const processes = Object.entries(scenario.processes);
    const used = LAYERS.filter((layer) =>
      processes.some(([, summary]) => (summary.layers[layer] ?? 0) / Math.max(summary.duration_ms, 1) >= 0.005),
    );
    // One row per process: its main thread's busy time, then each of `columns`' time as `format` writes it.
    const layerTable = (
      columns: readonly Layer[],
      busy: (summary: ProfileSummary) => string,
      format: (summary: ProfileSummary, ms: number | undefined) => string,
    ) => [
      `| process | busy | ${columns.join(' | ')} |`,
      `|---|--:|${columns.map(() => '--:').join('|')}|`,
      ...processes.map(
        ([name, summary]) =>
          `| ${name} | ${busy(summary)} | ${columns.map((layer) => format(summary, summary.layers[layer])).join(' | ')} |`,
      ),
    ];
    lines.push(
      ...layerTable(
        used,
        (summary) => `${summary.busy_percent} %`,
        (summary, ms) => (ms ? `${round((ms / Math.max(summary.duration_ms, 1)) * 100, 1)} %` : ''),
      ),
    );
    const requests = scenario.requests;
    if (requests) {
      // The same time per request answered during the profiled load, so a scenario compares with its
      // floor (the shares above are of each process's own wall time, whatever its rate). Idle is no work.
      const perRequest = (ms: number | undefined) => (ms ? String(round((ms * 1000) / requests, 1)) : '');
      lines.push(
        '',
        `µs of each main thread per request (${requests.toLocaleString('en-US')} answered in the profiled load):`,
        '',
        ...layerTable(
          used.filter((layer) => layer !== 'idle'),
          (summary) => perRequest((summary.duration_ms * summary.busy_percent) / 100),
          (_, ms) => perRequest(ms),
        ),
      );
    }
    for (const [name, summary] of processes) {
      if (summary.busy_percent < 2) continue;
      lines.push('', `**${name}**: the ${top} functions with the most self time`, '');
      lines.push('| self % | function | where | layer |', '|--:|---|---|---|');
      for (const entry of summary.top.slice(0, top)) {
        lines.push(
          `| ${entry.self_percent} | \`${entry.function.replace(/\|/g, '\\|')}\` | ${entry.location ? `\`${entry.location}\`` : ''} | ${entry.layer} |`,
        );
      }
    }
  }
  return `${lines.join('\n')}\n`;
}
