/**
 * What Prometheus sees: `promtool check rules` on the alert rules (docs/alerts.rules.yml), and
 * `promtool check metrics` on every process's live /metrics after real traffic, and every metric a rule
 * names exposed by a process. promtool comes from Debian's `prometheus` package, which `npm test`
 * installs when it is missing (tools/promtool.mjs); without it these tests fail naming it.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { APPS, repositoryRoot, TestStack } from '@acct/testing';
import { parse } from 'yaml';

const PROMTOOL = '/usr/bin/promtool';
const RULES = path.join(repositoryRoot, 'docs', 'alerts.rules.yml');

const promtool = (args: string[], input?: string) => {
  if (!fs.existsSync(PROMTOOL)) {
    throw new Error(`${PROMTOOL} is missing: install Debian's "prometheus" package (node tools/promtool.mjs)`);
  }
  const result = spawnSync(PROMTOOL, args, { input, encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout}${result.stderr}`.trim() };
};

/** The metric families a /metrics text declares (`# TYPE name type`), with the series names they expose. */
const seriesNames = (text: string): Set<string> => {
  const names = new Set<string>();
  for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name);
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name}${suffix}`);
    if (type === 'summary') for (const suffix of ['_sum', '_count']) names.add(`${name}${suffix}`);
  }
  return names;
};

interface RuleFile {
  groups: Array<{ name: string; rules: Array<{ alert?: string; record?: string; expr: string }> }>;
}

/** The metric names an expression selects: identifiers followed by a label matcher or a range. */
const metricsIn = (expr: string): string[] =>
  [...expr.matchAll(/\b([a-z_][a-z0-9_]*)\s*(?=\{|\[)/g)].map((match) => match[1]);

describe('Prometheus: the alert rules and every process /metrics pass promtool', () => {
  let stack: TestStack;
  const scraped: Record<string, string> = {};

  beforeAll(async () => {
    stack = await TestStack.start();
    // Traffic through every layer, so request, gRPC and domain metrics have samples.
    for (const pathAndQuery of ['/v2/system/health', '/v2/auth/jwks', '/v2/users/me', '/v2/no-such-route']) {
      await fetch(stack.url(pathAndQuery));
    }
    await fetch(stack.url('/v2/auth/token'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'password', username: 'nobody@example.test', password: 'wrong-password' }),
    });
    for (const app of APPS) scraped[app] = await (await fetch(stack.opsUrl(app, '/metrics'))).text();
  });

  afterAll(async () => {
    await stack?.close();
  });

  it('promtool accepts the alert rules file', () => {
    const { status, output } = promtool(['check', 'rules', RULES]);
    expect([status, output]).toEqual([0, expect.stringMatching(/SUCCESS: \d+ rules found/)]);
  });

  it('promtool really refuses a broken rule and flags a badly named metric', () => {
    const broken = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'promtool-')), 'broken.rules.yml');
    fs.writeFileSync(broken, 'groups:\n  - name: x\n    rules:\n      - alert: X\n        expr: sum(rate(x[5m]) > 1\n');
    expect(promtool(['check', 'rules', broken]).status).not.toBe(0);
    fs.rmSync(path.dirname(broken), { recursive: true });
    const lint = promtool(['check', 'metrics'], '# HELP requests Requests.\n# TYPE requests counter\nrequests 1\n');
    expect(lint.output).toMatch(/counter metrics should have "_total" suffix/);
  });

  it.each(APPS)('promtool check metrics finds nothing to fix on the %s /metrics', (app) => {
    expect(scraped[app]).toMatch(/^# HELP /m);
    const { status, output } = promtool(['check', 'metrics'], scraped[app]);
    expect([status, output]).toEqual([0, '']);
  });

  it('every metric a rule names is exposed by a process', () => {
    const exposed = new Set(APPS.flatMap((app) => [...seriesNames(scraped[app])]));
    const rules = (parse(fs.readFileSync(RULES, 'utf8')) as RuleFile).groups.flatMap((group) => group.rules);
    expect(rules.length).toBeGreaterThan(0);
    const unknown = rules.flatMap((rule) =>
      metricsIn(rule.expr)
        .filter((name) => !exposed.has(name))
        .map((name) => `${rule.alert ?? rule.record}: ${name}`),
    );
    expect(unknown).toEqual([]);
  });
});
