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

import { APPS, freePort, repositoryRoot, TestStack, waitFor } from '@acct/testing';
import { parse, stringify } from 'yaml';

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

/** A series a /metrics text exposes (`name{labels}`, as Prometheus would store it) and its value. */
const samplesOf = (text: string, prefix: string): Array<[string, string]> =>
  [...text.matchAll(/^([a-z_][a-z0-9_]*)(\{[^}]*\})? (\S+)$/gm)]
    .filter(([, name]) => name.startsWith(prefix))
    .map(([, name, labels, value]) => [`${name}${labels ?? ''}`, value]);

/**
 * `promtool test rules`: the alert rules evaluated 40 minutes into the given series (promtool's
 * notation, one sample a minute), expecting exactly `expected` alerts of `alertname` then.
 */
const evaluateAlert = (alertname: string, series: Map<string, string>, expected: object[]) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'promtool-'));
  const tests = path.join(dir, 'alert.test.yml');
  fs.writeFileSync(
    tests,
    stringify({
      rule_files: [RULES],
      evaluation_interval: '1m',
      tests: [
        {
          interval: '1m',
          input_series: [...series].map(([name, values]) => ({ series: name, values })),
          alert_rule_test: [{ eval_time: '40m', alertname, exp_alerts: expected }],
        },
      ],
    }),
  );
  const result = promtool(['test', 'rules', tests]);
  fs.rmSync(dir, { recursive: true });
  return result;
};

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

  it('MailFailing fires for a mailer that has failed and sent nothing since it started', () => {
    // What this mailer exposes now (no mail sent since its start), held for an hour, plus a kind of
    // mail failing every minute: SMTP down since a deploy or a restart.
    const failing = 'mailer_mail_failed_total{kind="activation",service="mailer"}';
    const series = new Map(samplesOf(scraped.mailer, 'mailer_mail_').map(([name, value]) => [name, `${value}x60`]));
    series.set(failing, '0+1x60');
    const { status, output } = evaluateAlert('MailFailing', series, [
      {
        exp_labels: { severity: 'page' },
        exp_annotations: {
          summary: 'The mailer sends nothing and fails (SMTP or object storage)',
          runbook: 'docs/runbook.md#stuck-outbox-or-mail',
        },
      },
    ]);
    expect([status, output]).toEqual([0, expect.stringMatching(/SUCCESS/)]);
  });

  it('OutboxStuck fires when one identity replica cannot read its outbox while another can', () => {
    // -1 is "could not count" (the database unreachable); the other replica's 0 must not hide it.
    const series = new Map([
      ['identity_outbox_backlog{instance="identity-a",service="identity"}', '-1x60'],
      ['identity_outbox_backlog{instance="identity-b",service="identity"}', '0x60'],
    ]);
    const { status, output } = evaluateAlert('OutboxStuck', series, [
      {
        exp_labels: { severity: 'page' },
        exp_annotations: {
          summary: "Mail and usage updates are delayed (identity's outbox is not draining)",
          runbook: 'docs/runbook.md#stuck-outbox-or-mail',
        },
      },
    ]);
    expect([status, output]).toEqual([0, expect.stringMatching(/SUCCESS/)]);
  });

  it('LoginFailureRatioHigh judges password logins: not an MFA step, not diluted by other grants', () => {
    const attempts = (grant: string, outcome: string) =>
      `auth_login_attempts_total{grant_type="${grant}",outcome="${outcome}",service="auth"}`;
    const alert = [
      {
        exp_labels: { severity: 'page' },
        exp_annotations: {
          summary: 'Most logins fail (credential stuffing?)',
          runbook: 'docs/runbook.md#unlocking-a-locked-login',
        },
      },
    ];
    // Every login of an org with MFA: the password step answers mfa_required, the code step succeeds.
    const mfaLogins = new Map([
      [attempts('password', 'mfa_required'), '0+10x60'],
      [attempts('password', 'success'), '0+10x60'],
      [attempts('password', 'invalid_grant'), '0+1x60'],
    ]);
    expect(evaluateAlert('LoginFailureRatioHigh', mfaLogins, [])).toMatchObject({ status: 0 });
    // Stuffing: most password logins fail, while machine clients' grants succeed many times more often.
    const stuffing = new Map([
      [attempts('password', 'invalid_grant'), '0+30x60'],
      [attempts('password', 'success'), '0+5x60'],
      [attempts('client_credentials', 'success'), '0+500x60'],
    ]);
    const { status, output } = evaluateAlert('LoginFailureRatioHigh', stuffing, alert);
    expect([status, output]).toEqual([0, expect.stringMatching(/SUCCESS/)]);
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

describe('Prometheus: a process started while Redis is away', () => {
  let stack: TestStack;
  let metrics: string;

  beforeAll(async () => {
    // Nothing listens there: the gateway never reads the revocation list, and stays unready.
    stack = await TestStack.start({ apps: ['gateway'], redisUrl: `redis://127.0.0.1:${await freePort()}` });
    metrics = await waitFor('the gateway /metrics', async () => {
      const answer = await fetch(stack.opsUrl('gateway', '/metrics')).catch(() => undefined);
      return answer?.ok ? answer.text() : undefined;
    });
  });

  afterAll(async () => {
    await stack?.close();
  });

  it('RevocationListStale fires for a process that has never read the revocation list', () => {
    const series = new Map(
      samplesOf(metrics, 'revocations_sync_age_seconds').map(([name, value]) => [name, `${value}x60`]),
    );
    expect([...series.values()]).toEqual(['-1x60']);
    const { status, output } = evaluateAlert('RevocationListStale', series, [
      {
        exp_labels: { severity: 'page', service: 'gateway' },
        exp_annotations: {
          summary: 'gateway has not caught up with the token revocations for over 10 s (Redis?)',
          runbook: 'docs/runbook.md#dependency-outages',
        },
      },
    ]);
    expect([status, output]).toEqual([0, expect.stringMatching(/SUCCESS/)]);
  });
});
