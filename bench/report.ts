import { execFileSync } from 'node:child_process';
import os from 'node:os';

import type { LoadResult } from './load';
import type { Memory } from './processes';

export interface ScenarioResult {
  name: string;
  /** What was sent, in one line. */
  request: string;
  /** Set when the scenario could not run (its smoke request failed); then there are no numbers. */
  skipped?: string;
  result?: LoadResult;
}

export interface Ratio {
  scenario: string;
  /** baseline req/s ÷ scenario req/s: how many times more requests the bare handler serves. */
  rps_ratio: number;
  /** scenario p99 ÷ baseline p99 (both whole milliseconds; a 0 ms baseline counts as 1 ms). */
  p99_ratio: number;
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
  config: { duration_s: number; warmup_s: number; connections: number };
  /** `status` of GET /v2/system/health before the scenarios (`healthy` expected). */
  stack_health_at_start: string;
  scenarios: ScenarioResult[];
  /** The gateway's added cost: `rate-limits` (and every other scenario) against the baseline. */
  ratios: Ratio[];
  peak_rss: Record<string, Memory | null>;
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

export function ratios(scenarios: ScenarioResult[]): Ratio[] {
  const baseline = scenarios.find((scenario) => scenario.name === 'baseline')?.result;
  if (!baseline || baseline.requests_per_second === 0) return [];
  return scenarios
    .filter((scenario) => scenario.name !== 'baseline' && scenario.result && scenario.result.requests_per_second > 0)
    .map((scenario) => ({
      scenario: scenario.name,
      rps_ratio: round(baseline.requests_per_second / scenario.result!.requests_per_second),
      p99_ratio: round(scenario.result!.latency_p99_ms / Math.max(baseline.latency_p99_ms, 1)),
    }));
}

const number = (value: number) => value.toLocaleString('en-US', { maximumFractionDigits: 1 });

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
      'The load generator shares the machine.',
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
  const gateway = report.ratios.find((ratio) => ratio.scenario === 'rate-limits');
  if (gateway) {
    lines.push(
      '',
      `Gateway added cost (\`rate-limits\` vs \`baseline\`): the bare Fastify handler serves ` +
        `${gateway.rps_ratio}× the requests per second; the gateway's p99 is ${gateway.p99_ratio}× the baseline's.`,
    );
  }
  lines.push('', '| Process | pid | peak RSS MiB | RSS at end MiB |', '|---|--:|--:|--:|');
  for (const [name, memory] of Object.entries(report.peak_rss)) {
    lines.push(
      memory
        ? `| ${name} | ${memory.pid} | ${number(memory.peak_rss_mb)} | ${number(memory.rss_mb)} |`
        : `| ${name} | — | not found | |`,
    );
  }
  return `${lines.join('\n')}\n`;
}
