import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

import { callRaw, createRawClient } from '@acct/grpc';
import { AppName, APPS, repositoryRoot, request, TestStack, waitFor } from '@acct/testing';

interface DocumentedMetric {
  name: string;
  type: string;
  apps: AppName[];
}

/** Every metric row of docs/metrics.md: `| \`name\` | type | exposed by | … |`. */
function documentedMetrics(): DocumentedMetric[] {
  const text = fs.readFileSync(path.join(repositoryRoot, 'docs/metrics.md'), 'utf8');
  const metrics: DocumentedMetric[] = [];
  for (const line of text.split('\n')) {
    const cells = line.split('|').map((cell) => cell.trim());
    const name = /^`([a-z_]+)`$/.exec(cells[1] ?? '')?.[1];
    const type = cells[2] ?? '';
    if (!name || !['counter', 'gauge', 'histogram', 'summary'].includes(type)) continue;
    const apps = (cells[3] ?? '').split(',').map((app) => app.trim()) as AppName[];
    metrics.push({ name, type, apps });
  }
  return metrics;
}

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: Array<{ key: string; value: Record<string, unknown> }>;
}
interface CollectedSpan extends OtlpSpan {
  service: string;
}
interface OtlpExport {
  resourceSpans?: Array<{
    resource?: { attributes?: Array<{ key: string; value: { stringValue?: string } }> };
    scopeSpans?: Array<{ spans?: OtlpSpan[] }>;
  }>;
}

/** A tiny OTLP/HTTP (JSON) receiver: keeps every span it is sent, with its service's name. */
class OtlpReceiver {
  readonly spans: CollectedSpan[] = [];
  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<OtlpReceiver> {
    const server = http.createServer();
    const receiver = new OtlpReceiver(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        if (req.url === '/v1/traces')
          receiver.collect(JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpExport);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  private collect(body: OtlpExport) {
    for (const resource of body.resourceSpans ?? []) {
      const service =
        resource.resource?.attributes?.find((attribute) => attribute.key === 'service.name')?.value.stringValue ?? '';
      for (const scope of resource.scopeSpans ?? []) {
        for (const span of scope.spans ?? []) this.spans.push({ ...span, service });
      }
    }
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const SPAN_KIND_SERVER = 2;
const SPAN_KIND_CLIENT = 3;
const ADMIN_PASSWORD = 'operations-admin-pass-1';

/** Issue 6 item 7: metrics every operator relies on, and a trace that follows a request across processes. */
describe('operations: metrics and tracing in a running stack', () => {
  let stack: TestStack;
  let receiver: OtlpReceiver;
  let adminToken: string;

  const scrape = async (app: AppName) => (await fetch(stack.opsUrl(app, '/metrics'))).text();

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    stack = await TestStack.start({
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '200',
      },
    });
    stack.cli('bootstrap', '--org', 'ops-org', '--email', 'admin@ops.test', '--password', ADMIN_PASSWORD);
    const login = await request<{ access_token: string }>(stack.url('/v2/auth/token'), {
      body: { grant_type: 'password', username: 'admin@ops.test', password: ADMIN_PASSWORD },
    });
    expect(login.status).toBe(200);
    adminToken = login.body.access_token;
  });

  afterAll(async () => {
    await stack?.close();
    await receiver?.close();
  });

  it('documents at least the metrics the issue asks for', () => {
    const names = documentedMetrics().map((metric) => metric.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'http_requests_total',
        'http_request_duration_seconds',
        'grpc_server_handled_total',
        'grpc_server_handling_seconds',
        'gateway_rate_limit_decisions_total',
        'auth_login_attempts_total',
        'auth_lockouts_total',
        'identity_outbox_backlog',
        'mailer_mail_sent_total',
        'mailer_mail_failed_total',
      ]),
    );
    for (const metric of documentedMetrics()) {
      for (const app of metric.apps) expect(APPS).toContain(app);
    }
  });

  it('exposes every metric of docs/metrics.md, with its documented type, on each process that documents it', async () => {
    const missing: string[] = [];
    const scrapes = new Map<AppName, string>();
    for (const app of APPS) scrapes.set(app, await scrape(app));
    for (const metric of documentedMetrics()) {
      for (const app of metric.apps) {
        const typeLine = new RegExp(`^# TYPE ${metric.name} ${metric.type}$`, 'm');
        if (!typeLine.test(scrapes.get(app) ?? '')) missing.push(`${app}: ${metric.name} (${metric.type})`);
      }
    }
    expect(missing).toEqual([]);

    // And the other way round: every metric of our own (not prom-client's process_*/nodejs_*) is documented.
    const documented = new Set(documentedMetrics().map((metric) => metric.name));
    const undocumented = [...scrapes].flatMap(([app, text]) =>
      [...text.matchAll(/^# TYPE (\S+) \S+$/gm)]
        .map((match) => match[1])
        .filter((name) => !/^(process|nodejs)_/.test(name) && !documented.has(name))
        .map((name) => `${app}: ${name}`),
    );
    expect(undocumented).toEqual([]);
  });

  it('counts gateway requests by route template, method and status class, never by raw URL', async () => {
    const userId = '00000000-0000-4000-8000-000000000042';
    expect((await request(stack.url(`/v2/users/${userId}`), { token: adminToken })).status).toBe(404);
    expect((await request(stack.url('/v2/users/me'), { token: adminToken })).status).toBe(200);
    expect((await request(stack.url('/no/such/path'))).status).toBe(404);

    const metrics = await scrape('gateway');
    expect(metrics).toMatch(
      /^http_requests_total\{[^}]*method="GET",route="\/v2\/users\/:id",status_class="4xx"[^}]*\} 1$/m,
    );
    expect(metrics).toMatch(
      /^http_requests_total\{[^}]*method="GET",route="\/v2\/users\/me",status_class="2xx"[^}]*\} 1$/m,
    );
    expect(metrics).toMatch(/^http_requests_total\{[^}]*route="unmatched",status_class="4xx"[^}]*\} 1$/m);
    expect(metrics).toMatch(/^http_request_duration_seconds_count\{[^}]*route="\/v2\/users\/me"[^}]*\} 1$/m);
    expect(metrics).not.toContain(userId);
    expect(metrics).not.toContain('/no/such/path');
    expect(metrics).toMatch(/^gateway_rate_limit_decisions_total\{[^}]*outcome="allowed",source="redis"[^}]*\} \d+$/m);
  });

  it('counts every gRPC call a service answers by method and status code, including refused ones', async () => {
    expect((await request(stack.url('/v2/users/me'), { token: adminToken })).status).toBe(200);
    const metrics = await scrape('identity');
    expect(metrics).toMatch(
      /^grpc_server_handled_total\{[^}]*grpc_service="identity\.v1\.IdentityService",grpc_method="[A-Za-z]+",grpc_code="OK"[^}]*\} \d+$/m,
    );
    expect(metrics).toMatch(/^grpc_server_handling_seconds_bucket\{[^}]*grpc_service="identity\.v1\.IdentityService"/m);

    // A call without an access token, refused by identity's caller guard before any handler runs.
    const identity = createRawClient(
      'identity/v1/identity.proto',
      'identity.v1.IdentityService',
      stack.env.IDENTITY_GRPC_ADDR,
    );
    await expect(callRaw(identity, 'GetUser', { id: 'someone' }, 5000)).rejects.toMatchObject({ code: 16 });
    identity.close();
    expect(await scrape('identity')).toMatch(
      /^grpc_server_handled_total\{[^}]*grpc_service="identity\.v1\.IdentityService",grpc_method="GetUser",grpc_code="UNAUTHENTICATED"[^}]*\} 1$/m,
    );
    // The password grant above: auth asked identity to check the password, as itself.
    expect(await scrape('auth')).toMatch(
      /^auth_login_attempts_total\{[^}]*grant_type="password",outcome="success"[^}]*\} 1$/m,
    );
  });

  it('follows one request from the gateway through identity’s gRPC server into its Postgres queries in one trace', async () => {
    expect((await request(stack.url('/v2/users/me'), { token: adminToken })).status).toBe(200);

    const inTrace = (traceId: string) => receiver.spans.filter((span) => span.traceId === traceId);
    const gatewaySpan = await waitFor('the gateway span of GET /v2/users/me, named after its route', () =>
      receiver.spans.find(
        (span) =>
          span.service === 'gateway' &&
          span.kind === SPAN_KIND_SERVER &&
          span.name === 'GET /v2/users/me' &&
          span.attributes?.some(
            (attribute) => attribute.key === 'http.route' && attribute.value.stringValue === '/v2/users/me',
          ),
      ),
    );
    const identitySpans = await waitFor('identity’s gRPC server span and its Postgres query in that trace', () => {
      const spans = inTrace(gatewaySpan.traceId).filter((span) => span.service === 'identity');
      const grpcServer = spans.find(
        (span) => span.kind === SPAN_KIND_SERVER && span.name === 'grpc.identity.v1.IdentityService/GetUser',
      );
      // The user is read straight on the pg pool (DirectStatements), not through Prisma's runtime.
      const query = spans.find((span) => span.name.startsWith('pg.query'));
      return grpcServer && query ? { grpcServer, query } : undefined;
    });
    // identity's server span continues the gateway's client call (W3C traceparent in gRPC metadata).
    const gatewayCall = inTrace(gatewaySpan.traceId).find(
      (span) => span.service === 'gateway' && span.kind === SPAN_KIND_CLIENT && span.name.includes('IdentityService'),
    );
    expect(identitySpans.grpcServer.parentSpanId).toBe(gatewayCall?.spanId);
  });

  it('keeps the one-time token of an activation link out of the trace of the page it opens', async () => {
    const created = await request<{ id: string }>(stack.url('/v2/users'), {
      token: adminToken,
      body: { email: 'traced@ops.test', display_name: 'Traced', send_activation: false },
    });
    expect(created.status).toBe(201);
    const issued = await request<{ token: string }>(stack.url(`/v2/users/${created.body.id}/reset-password`), {
      token: adminToken,
      body: { send_email: false },
    });
    expect(issued.status).toBe(200);
    const page = await fetch(stack.url(`/activate?token=${issued.body.token}&lang=en`));
    expect(page.status).toBe(200);
    const pageSpan = await waitFor('the gateway span of GET /activate', () =>
      receiver.spans.find(
        (span) => span.service === 'gateway' && span.kind === SPAN_KIND_SERVER && span.name === 'GET /activate',
      ),
    );
    // The link still works (nothing consumed it); a trace store must not hold it.
    expect(JSON.stringify(pageSpan)).not.toContain(issued.body.token);
    expect(pageSpan.attributes).toContainEqual({ key: 'url.query', value: { stringValue: 'token=REDACTED&lang=en' } });
  });

  it('puts the spans of a query made through Prisma in the trace of the request that made it', async () => {
    expect((await request(stack.url('/v2/users?limit=1'), { token: adminToken })).status).toBe(200);
    const gatewaySpan = await waitFor('the gateway span of GET /v2/users', () =>
      receiver.spans.find(
        (span) => span.service === 'gateway' && span.kind === SPAN_KIND_SERVER && span.name === 'GET /v2/users',
      ),
    );
    await waitFor('identity’s Prisma span and its Postgres query in that trace', () => {
      const spans = receiver.spans.filter(
        (span) => span.traceId === gatewaySpan.traceId && span.service === 'identity',
      );
      return spans.some((span) => span.name.startsWith('prisma:')) &&
        spans.some((span) => span.name.startsWith('pg.query'))
        ? true
        : undefined;
    });
  });
});
