/**
 * Deployment artifacts, checked without Docker or a cluster:
 *  - docker-compose.yml against the Compose Specification schema (vendored: compose-spec.json)
 *    plus the start-order rules of this stack;
 *  - k8s/base and the example overlay rendered by kustomize (`kubectl kustomize`), every object
 *    validated by kubernetes-models, plus the probe/resource/security/selector/secret rules, the
 *    production configuration and the NetworkPolicies evaluated edge by edge;
 *  - the Dockerfile read as text: stages, non-root runtime user, the APP build argument.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import Ajv, { type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Job } from 'kubernetes-models/batch/v1';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Namespace, Secret, Service } from 'kubernetes-models/v1';
import { parse, parseAllDocuments } from 'yaml';

import { parseDockerfile, type Stage } from './dockerfile';

const repoRoot = join(__dirname, '..', '..');

const APPS = ['gateway', 'identity', 'auth', 'platform', 'mailer'] as const;
type App = (typeof APPS)[number];
const GRPC_APPS = ['identity', 'auth', 'platform'] as const;

/** What each process listens on (ops = /livez, /readyz, /metrics). */
const PORTS: Record<App, { ops: number; serving?: { name: 'http' | 'grpc'; port: number; env: string } }> = {
  gateway: { ops: 9080, serving: { name: 'http', port: 8080, env: 'GATEWAY_PORT' } },
  identity: { ops: 9081, serving: { name: 'grpc', port: 50051, env: 'IDENTITY_GRPC_PORT' } },
  auth: { ops: 9082, serving: { name: 'grpc', port: 50052, env: 'AUTH_GRPC_PORT' } },
  platform: { ops: 9083, serving: { name: 'grpc', port: 50053, env: 'PLATFORM_GRPC_PORT' } },
  mailer: { ops: 9084 },
};

/** The one Secret the manifests may reference, and the keys documented for it. */
const SECRET_NAME = 'account-platform-secrets';
const SECRET_KEYS = [
  'IDENTITY_DATABASE_URL',
  'AUTH_DATABASE_URL',
  'PLATFORM_DATABASE_URL',
  'SMTP_URL',
  'S3_ACCESS_KEY_ID',
  'S3_SECRET_ACCESS_KEY',
  'AUTH_KEY_ENCRYPTION_KEY',
  /** Only while AUTH_KEY_ENCRYPTION_KEY is changed (`optional` in the manifest). */
  'AUTH_KEY_ENCRYPTION_KEY_PREVIOUS',
  'GATEWAY_CLIENT_SECRET',
];

interface ConfigCheck {
  /** The variables the app's config schema reads. */
  keys: string[];
  /** The app's ConfigError message for this environment, if it rejects it. */
  error?: string;
}

/**
 * Runs each app's own config loader (apps/<app>/src/config.ts, `<app>Env`) on the environment a
 * deployment gives it. In a child process: tests may not import app code (module boundaries).
 */
const checkAppConfigs = (envs: Record<App, Record<string, string>>): Record<App, ConfigCheck> => {
  const script = `
    const path = require('node:path');
    const { loadConfig } = require('@acct/config');
    const envs = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));
    const results = {};
    for (const [app, env] of Object.entries(envs)) {
      const shape = require(path.resolve('apps', app, 'src', 'config.ts'))[app + 'Env'];
      if (!shape) throw new Error('apps/' + app + '/src/config.ts exports no ' + app + 'Env');
      results[app] = { keys: Object.keys(shape) };
      try { loadConfig(shape, env); } catch (error) { results[app].error = error.message; }
    }
    process.stdout.write(JSON.stringify(results));`;
  const child = spawnSync(process.execPath, ['-r', './tools/run-ts.cjs', '-e', script], {
    cwd: repoRoot,
    input: JSON.stringify(envs),
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '' },
  });
  if (child.status !== 0) throw new Error(`loading the apps' config failed:\n${child.stderr}`);
  return JSON.parse(child.stdout) as Record<App, ConfigCheck>;
};

/** Well-formed stand-ins for secret values, which the repository never holds. */
const SECRET_PLACEHOLDERS: Record<string, string> = {
  IDENTITY_DATABASE_URL: 'postgresql://user:pass@db.example:5432/identity',
  AUTH_DATABASE_URL: 'postgresql://user:pass@db.example:5432/auth',
  PLATFORM_DATABASE_URL: 'postgresql://user:pass@db.example:5432/platform',
  SMTP_URL: 'smtp://user:pass@mail.example:587',
  S3_ACCESS_KEY_ID: 'access-key-id',
  S3_SECRET_ACCESS_KEY: 'secret-access-key',
  AUTH_KEY_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
  GATEWAY_CLIENT_SECRET: 'gateway-client-secret-of-the-deployment-tests',
};

const readText = (...segments: string[]): string => readFileSync(join(repoRoot, ...segments), 'utf8');

// ---------------------------------------------------------------------------------------------
// docker-compose.yml
// ---------------------------------------------------------------------------------------------

type DependsOn = string[] | Record<string, { condition: string; required?: boolean; restart?: boolean }>;
interface ComposeService {
  image?: string;
  build?: string | { context?: string; dockerfile?: string; target?: string; args?: Record<string, string> | string[] };
  depends_on?: DependsOn;
  healthcheck?: { test?: string | string[]; disable?: boolean };
  ports?: Array<string | number | { target: number | string; published?: number | string }>;
  environment?: Record<string, string | number | boolean | null> | string[];
  volumes?: Array<string | { type: string; source?: string; target?: string }>;
  command?: string | string[] | null;
  restart?: string;
}
interface ComposeFile {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}

/** Parses like docker compose does: YAML 1.2 plus `<<` merge keys. */
const loadCompose = (): ComposeFile => parse(readText('docker-compose.yml'), { merge: true }) as ComposeFile;

const composeValidator = () => {
  const schema = JSON.parse(readText('tests', 'deploy', 'compose-spec.json')) as object;
  const ajv = new Ajv({ allErrors: true, strict: true, strictTypes: false, allowUnionTypes: true });
  addFormats(ajv);
  return ajv.compile(schema);
};

const formatAjvErrors = (errors: ErrorObject[] | null | undefined): string =>
  (errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`).join('\n');

/** depends_on in long form; the short (list) form means condition service_started. */
const dependencies = (service: ComposeService): Record<string, string> => {
  const deps = service.depends_on ?? {};
  if (Array.isArray(deps)) return Object.fromEntries(deps.map((name) => [name, 'service_started']));
  return Object.fromEntries(Object.entries(deps).map(([name, dep]) => [name, dep.condition]));
};

/** Compose variable interpolation as with an empty shell environment: `${VAR:-default}` → default. */
const interpolate = (value: string): string =>
  value.replace(/\$\$|\$\{(\w+)(?::?-([^}]*))?\}|\$(\w+)/g, (match, _braced, fallback: string | undefined) =>
    match === '$$' ? '$' : (fallback ?? ''),
  );

/** A service's environment after interpolation, as the container would see it. */
const environmentOf = (service: ComposeService): Record<string, string> => {
  const env = service.environment ?? {};
  const entries: Array<[string, string]> = Array.isArray(env)
    ? env.map((line) => [line.split('=')[0], line.split('=').slice(1).join('=')])
    : Object.entries(env).map(([key, value]) => [key, String(value ?? '')]);
  return Object.fromEntries(entries.map(([key, value]) => [key, interpolate(value)]));
};

describe('docker-compose.yml', () => {
  const compose = loadCompose();
  const validate = composeValidator();
  const services = compose.services;
  const serviceNames = Object.keys(services);
  /** One-shot jobs: something waits for them to complete successfully. */
  const oneShots = new Set(
    Object.values(services).flatMap((service) =>
      Object.entries(dependencies(service))
        .filter(([, condition]) => condition === 'service_completed_successfully')
        .map(([name]) => name),
    ),
  );
  const longRunning = serviceNames.filter((name) => !oneShots.has(name));

  it('conforms to the Compose Specification schema', () => {
    const valid = validate(compose);
    expect(formatAjvErrors(validate.errors)).toBe('');
    expect(valid).toBe(true);
  });

  it.each([
    ['a misspelled service key', (c: ComposeFile) => Object.assign(c.services.gateway, { healthchek: {} })],
    ['a misspelled top-level key', (c: ComposeFile) => Object.assign(c, { service: {} })],
    [
      'an unknown depends_on condition',
      (c: ComposeFile) =>
        Object.assign(c.services.gateway, { depends_on: { identity: { condition: 'service_ready' } } }),
    ],
    [
      'a misspelled build key',
      (c: ComposeFile) => Object.assign(c.services.gateway, { build: { context: '.', targte: 'runtime' } }),
    ],
    [
      'a misspelled healthcheck key',
      (c: ComposeFile) => Object.assign(c.services.redis, { healthcheck: { tset: 'x' } }),
    ],
  ])('the schema rejects %s', (_what, breakIt) => {
    const broken = structuredClone(compose);
    breakIt(broken);
    expect(validate(broken)).toBe(false);
  });

  it('defines the five apps, migrate and every backing service', () => {
    expect(serviceNames).toEqual(expect.arrayContaining([...APPS, 'migrate', 'postgres', 'redis', 'nats', 'mailpit']));
    expect(serviceNames.some((name) => services[name].image?.startsWith('minio/minio'))).toBe(true);
  });

  it.each(APPS)('%s is built from the runtime target of this repo with its own APP build argument', (app) => {
    expect(services[app].build).toMatchObject({ context: '.', target: 'runtime', args: { APP: app } });
  });

  it('migrate is built from the migrate target and runs once', () => {
    expect(services.migrate.build).toMatchObject({ context: '.', target: 'migrate' });
    expect(oneShots.has('migrate')).toBe(true);
    expect(services.migrate.restart).toBe('no');
    expect(dependencies(services.migrate).postgres).toBe('service_healthy');
  });

  it.each(APPS)('%s starts only after migrate completed successfully', (app) => {
    expect(dependencies(services[app]).migrate).toBe('service_completed_successfully');
  });

  it.each(APPS)('%s waits for healthy postgres, redis and nats', (app) => {
    expect(dependencies(services[app])).toMatchObject({
      postgres: 'service_healthy',
      redis: 'service_healthy',
      nats: 'service_healthy',
    });
  });

  it('gateway waits for healthy identity, auth and platform', () => {
    expect(dependencies(services.gateway)).toMatchObject({
      identity: 'service_healthy',
      auth: 'service_healthy',
      platform: 'service_healthy',
    });
  });

  it('every long-running service has a healthcheck', () => {
    const missing = longRunning.filter(
      (name) => !services[name].healthcheck?.test || services[name].healthcheck?.disable,
    );
    expect(missing).toEqual([]);
  });

  it('every one-shot service does not restart', () => {
    expect([...oneShots].filter((name) => services[name].restart !== 'no')).toEqual([]);
  });

  it('every depends_on target exists, and service_healthy targets have a healthcheck', () => {
    const problems = Object.entries(services).flatMap(([name, service]) =>
      Object.entries(dependencies(service)).flatMap(([target, condition]) => {
        if (!services[target]) return [`${name} -> ${target}: no such service`];
        if (condition === 'service_healthy' && !services[target].healthcheck) {
          return [`${name} -> ${target}: waits for health but ${target} has no healthcheck`];
        }
        return [];
      }),
    );
    expect(problems).toEqual([]);
  });

  it('depends_on has no cycles', () => {
    const visiting = new Set<string>();
    const done = new Set<string>();
    const visit = (name: string, path: string[]): void => {
      if (done.has(name)) return;
      if (visiting.has(name)) throw new Error(`dependency cycle: ${[...path, name].join(' -> ')}`);
      visiting.add(name);
      for (const target of Object.keys(dependencies(services[name] ?? {}))) visit(target, [...path, name]);
      visiting.delete(name);
      done.add(name);
    };
    expect(() => serviceNames.forEach((name) => visit(name, []))).not.toThrow();
  });

  it('gateway publishes port 8080', () => {
    const published = (services.gateway.ports ?? []).map((port) =>
      typeof port === 'object' ? `${port.published}:${port.target}` : String(port),
    );
    expect(published.some((port) => /(^|:)8080:8080(\/tcp)?$/.test(port))).toBe(true);
  });

  it('apps reach each other and the backing services by compose service name', () => {
    const hostOf = (value: string) => (value.includes('://') ? new URL(value).hostname : value.split(':')[0]);
    const addressKeys = [
      'IDENTITY_GRPC_ADDR',
      'AUTH_GRPC_ADDR',
      'PLATFORM_GRPC_ADDR',
      'REDIS_URL',
      'NATS_URL',
      'S3_ENDPOINT',
      'SMTP_URL',
      'IDENTITY_DATABASE_URL',
      'AUTH_DATABASE_URL',
      'PLATFORM_DATABASE_URL',
    ];
    for (const app of APPS) {
      const env = environmentOf(services[app]);
      expect(env.BIND_HOST).toBe('0.0.0.0');
      for (const key of addressKeys) {
        expect([app, key, serviceNames.includes(hostOf(env[key] ?? ''))]).toEqual([app, key, true]);
      }
    }
  });

  describe("against the apps' own config schemas", () => {
    const envs = Object.fromEntries(APPS.map((app) => [app, environmentOf(services[app])])) as Record<
      App,
      Record<string, string>
    >;
    let checks: Record<App, ConfigCheck>;
    beforeAll(() => {
      checks = checkAppConfigs(envs);
    });

    it.each(APPS)('%s environment satisfies its config schema', (app) => {
      expect(checks[app].error).toBeUndefined();
    });

    it.each(APPS)('%s environment sets every secret its config reads', (app) => {
      const secretsRead = SECRET_KEYS.filter((key) => checks[app].keys.includes(key));
      expect(secretsRead.filter((key) => !(key in envs[app]))).toEqual([]);
    });
  });

  it('postgres creates the identity, auth and platform databases from deploy/postgres-init', () => {
    const mounts = (services.postgres.volumes ?? []).map(String);
    expect(mounts).toContain('./deploy/postgres-init:/docker-entrypoint-initdb.d:ro');
    const sql = readdirSync(join(repoRoot, 'deploy', 'postgres-init'))
      .map((file) => readText('deploy', 'postgres-init', file))
      .join('\n');
    for (const db of ['identity', 'auth', 'platform']) {
      expect(sql).toMatch(new RegExp(`CREATE DATABASE\\s+"?${db}"?\\s*;`, 'i'));
    }
  });

  it('nats runs with JetStream enabled', () => {
    expect(services.nats.command).toContain('-js');
  });
});

// ---------------------------------------------------------------------------------------------
// k8s/base and k8s/overlays/example, rendered by kustomize
// ---------------------------------------------------------------------------------------------

interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}
interface Kustomization {
  apiVersion?: string;
  kind?: string;
  resources?: string[];
  patches?: Array<{ path?: string }>;
  images?: Array<{ name: string; newName?: string; newTag?: string; digest?: string }>;
  namespace?: string;
}

interface Probe {
  httpGet?: { path?: string; port?: number | string };
  [field: string]: unknown;
}
interface Container {
  name: string;
  image: string;
  ports?: Array<{ name?: string; containerPort: number }>;
  env?: Array<{ name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }>;
  envFrom?: Array<{ configMapRef?: { name: string }; secretRef?: { name: string } }>;
  startupProbe?: Probe;
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  lifecycle?: { preStop?: { exec?: { command?: string[] }; sleep?: { seconds: number } } };
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: {
    runAsNonRoot?: boolean;
    runAsUser?: number;
    readOnlyRootFilesystem?: boolean;
    allowPrivilegeEscalation?: boolean;
    capabilities?: { drop?: string[] };
  };
}
interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
  terminationGracePeriodSeconds?: number;
  restartPolicy?: string;
  volumes?: Array<{ name: string; secret?: { secretName: string } }>;
}
interface PodTemplate {
  metadata: { labels: Record<string, string> };
  spec: PodSpec;
}
type DeploymentObject = KubeObject & {
  spec: { selector: { matchLabels: Record<string, string> }; template: PodTemplate };
};
type ServiceObject = KubeObject & {
  spec: {
    type?: string;
    clusterIP?: string;
    externalIPs?: string[];
    selector: Record<string, string>;
    ports: Array<{ name: string; port: number; targetPort: number | string; nodePort?: number }>;
  };
};
type PdbObject = KubeObject & { spec: { selector: { matchLabels: Record<string, string> } } };
type HpaObject = KubeObject & {
  spec: {
    scaleTargetRef: { apiVersion: string; kind: string; name: string };
    minReplicas: number;
    maxReplicas: number;
    metrics: Array<{ type: string; resource?: { name: string } }>;
  };
};
type JobObject = KubeObject & { spec: { template: PodTemplate } };
type ConfigMapObject = KubeObject & { data: Record<string, string> };

interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: unknown[];
}
interface PolicyPeer {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  ipBlock?: { cidr: string; except?: string[] };
}
interface PolicyRule {
  from?: PolicyPeer[];
  to?: PolicyPeer[];
  ports?: Array<{ protocol?: string; port?: number | string; endPort?: number }>;
}
type NetworkPolicyObject = KubeObject & {
  spec: { podSelector: LabelSelector; policyTypes?: string[]; ingress?: PolicyRule[]; egress?: PolicyRule[] };
};

type ModelClass = new (data: never) => { validate(): void };
const MODELS: Record<string, ModelClass> = {
  'apps/v1/Deployment': Deployment,
  'v1/Service': Service,
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Namespace': Namespace,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'batch/v1/Job': Job,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
};

const validateWithModel = (object: KubeObject): void => {
  const Model = MODELS[`${object.apiVersion}/${object.kind}`];
  if (!Model) throw new Error(`no kubernetes-models class for ${object.apiVersion} ${object.kind}`);
  new Model(structuredClone(object) as never).validate();
};

const loadKustomization = (dir: string): Kustomization =>
  parse(readFileSync(join(repoRoot, dir, 'kustomization.yaml'), 'utf8')) as Kustomization;

/**
 * `kubectl kustomize <dir>`: kustomize itself (built into kubectl) renders the objects an operator's
 * `kubectl apply -k` would send. kubectl is on every development and CI machine; without it these
 * tests fail naming it.
 */
const renderKustomization = (dir: string): KubeObject[] => {
  const result = spawnSync('kubectl', ['kustomize', join(repoRoot, dir)], { encoding: 'utf8' });
  if (result.error || result.status !== 0) {
    throw new Error(
      `kubectl kustomize ${dir} failed (the deploy tests need kubectl on PATH): ${result.error?.message ?? result.stderr}`,
    );
  }
  return parseAllDocuments(result.stdout).flatMap((doc) => {
    if (doc.errors.length > 0) throw new Error(`${dir}: ${doc.errors.map((e) => e.message).join('; ')}`);
    const object = doc.toJS() as KubeObject | null;
    return object ? [object] : [];
  });
};

const subsetOf = (selector: Record<string, string>, labels: Record<string, string>): boolean =>
  Object.keys(selector).length > 0 && Object.entries(selector).every(([key, value]) => labels[key] === value);

/** A label selector as NetworkPolicies read it: empty selects everything. matchExpressions are not used here. */
const selects = (selector: LabelSelector | undefined, labels: Record<string, string>): boolean => {
  if (selector?.matchExpressions?.length) throw new Error('matchExpressions: not evaluated by these tests');
  return Object.entries(selector?.matchLabels ?? {}).every(([key, value]) => labels[key] === value);
};

/** Something that sends or receives a connection: a pod (its labels, its namespace's labels) or an outside address. */
type Endpoint = { pod: Record<string, string>; namespace: Record<string, string> } | { external: true };

/** Who may connect to whom, under a set of NetworkPolicies of one namespace (the Kubernetes semantics). */
const networkOf = (policies: NetworkPolicyObject[], namespace: Record<string, string>) => {
  const peerMatches = (peer: PolicyPeer, other: Endpoint): boolean => {
    if ('external' in other) return peer.ipBlock !== undefined;
    if (peer.ipBlock) return false; // policies here give ipBlocks to outside addresses only
    const namespaceOk = peer.namespaceSelector
      ? selects(peer.namespaceSelector, other.namespace)
      : selects({ matchLabels: namespace }, other.namespace);
    return namespaceOk && selects(peer.podSelector, other.pod);
  };
  const ruleAdmits = (rule: PolicyRule, peers: PolicyPeer[] | undefined, other: Endpoint, port: number) =>
    (peers === undefined || peers.length === 0 || peers.some((peer) => peerMatches(peer, other))) &&
    (rule.ports === undefined ||
      rule.ports.length === 0 ||
      rule.ports.some((p) => (p.protocol ?? 'TCP') === 'TCP' && (p.port === undefined || p.port === port)));
  const policiesFor = (endpoint: Endpoint, type: 'Ingress' | 'Egress') =>
    'external' in endpoint || !selects({ matchLabels: namespace }, endpoint.namespace)
      ? undefined // not governed by this namespace's policies
      : policies.filter(
          (p) => selects(p.spec.podSelector, endpoint.pod) && (p.spec.policyTypes ?? ['Ingress']).includes(type),
        );
  return {
    /** Whether a TCP connection from `source` to `destination:port` is admitted. */
    allows(source: Endpoint, destination: Endpoint, port: number): boolean {
      const egress = policiesFor(source, 'Egress');
      const ingress = policiesFor(destination, 'Ingress');
      const out =
        egress === undefined ||
        egress.length === 0 ||
        egress.some((p) => (p.spec.egress ?? []).some((rule) => ruleAdmits(rule, rule.to, destination, port)));
      const into =
        ingress === undefined ||
        ingress.length === 0 ||
        ingress.some((p) => (p.spec.ingress ?? []).some((rule) => ruleAdmits(rule, rule.from, source, port)));
      return out && into;
    },
    policiesFor,
  };
};

/** The port a client connects to for a URL, as the app's client library defaults it. */
const portOfUrl = (value: string): number => {
  const url = new URL(value);
  const defaults: Record<string, number> = {
    'postgresql:': 5432,
    'postgres:': 5432,
    'redis:': 6379,
    'rediss:': 6379,
    'nats:': 4222,
    'tls:': 4222,
    'http:': 80,
    'https:': 443,
    'smtp:': 587,
    'smtps:': 465,
  };
  return url.port ? Number(url.port) : defaults[url.protocol];
};

/** Which process calls which over gRPC, read from the code (each `*_GRPC_ADDR` it dials). */
const GRPC_CALLS: Record<App, App[]> = {
  gateway: ['identity', 'auth', 'platform'], // apps/gateway/src/backends
  identity: ['auth', 'platform'], // JWKS (remoteVerifierProvider), quotas (quota/users-quota.ts)
  auth: ['identity'], // users for the token grants (tokens/tokens.module.ts)
  platform: ['identity', 'auth'], // health probes (health/health.module.ts), JWKS
  mailer: [], // events only, over NATS
};

/** The backing services each process connects to, by the setting that holds the address. */
const BACKING_SERVICES: Record<App, string[]> = {
  // Every process that verifies tokens reads the revocations (Redis) and their notices (NATS).
  gateway: ['REDIS_URL', 'NATS_URL'],
  identity: ['IDENTITY_DATABASE_URL', 'REDIS_URL', 'NATS_URL'],
  auth: ['AUTH_DATABASE_URL', 'REDIS_URL', 'NATS_URL'],
  platform: ['PLATFORM_DATABASE_URL', 'REDIS_URL', 'NATS_URL', 'S3_ENDPOINT'],
  mailer: ['NATS_URL', 'S3_ENDPOINT', 'SMTP_URL'],
};

/** What an overlay sets for one environment; the base leaves them out (docs/configuration.md, "Production"). */
const ENVIRONMENT_SPECIFIC = [
  'REGION',
  'PUBLIC_URL',
  'TOKEN_ISSUER',
  'REDIS_URL',
  'NATS_URL',
  'S3_ENDPOINT',
  'S3_REGION',
  'S3_BUCKET',
  'MAIL_FROM',
];

/** The variables a ConfigError names (its `  - NAME: reason` lines). */
const namedInError = (message: string | undefined): string[] =>
  [...(message ?? '').matchAll(/^\s+- (\w+):/gm)].map((match) => match[1]).sort();

/** Kubernetes memory quantity in MiB. */
const mebibytes = (quantity: string): number => {
  const match = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi)?$/.exec(quantity);
  if (!match) throw new Error(`unexpected memory quantity ${quantity}`);
  const factor = { Ki: 1 / 1024, Mi: 1, Gi: 1024 }[match[2] ?? ''] ?? 1 / (1024 * 1024);
  return Number(match[1]) * factor;
};

describe.each([
  { dir: 'k8s/base', overlay: false },
  { dir: 'k8s/overlays/example', overlay: true },
])('$dir', ({ dir, overlay }) => {
  const kustomization = loadKustomization(dir);
  const baseKustomization = loadKustomization('k8s/base');
  const objects = renderKustomization(dir);
  const ofKind = <T extends KubeObject>(kind: string): T[] => objects.filter((o) => o.kind === kind) as T[];
  const named = <T extends KubeObject>(kind: string, name: string): T | undefined =>
    ofKind<T>(kind).find((o) => o.metadata.name === name);
  const deployment = (app: App) => named<DeploymentObject>('Deployment', app) as DeploymentObject;
  const mainContainer = (app: App) => deployment(app).spec.template.spec.containers[0];
  const service = (app: App) => named<ServiceObject>('Service', app) as ServiceObject;
  const configMap = () => ofKind<ConfigMapObject>('ConfigMap')[0];
  const podSpecs = (): Array<[string, PodSpec]> => [
    ...ofKind<DeploymentObject>('Deployment').map(
      (d) => [`Deployment/${d.metadata.name}`, d.spec.template.spec] as [string, PodSpec],
    ),
    ...ofKind<JobObject>('Job').map((j) => [`Job/${j.metadata.name}`, j.spec.template.spec] as [string, PodSpec]),
  ];
  const allContainers = (): Array<[string, Container]> =>
    podSpecs().flatMap(([owner, spec]) =>
      [...spec.containers, ...(spec.initContainers ?? [])].map((c) => [`${owner}/${c.name}`, c] as [string, Container]),
    );

  /** The pod's environment: ConfigMaps from envFrom, then env (Secret values as placeholders). */
  const podEnvironment = (app: App): Record<string, string> => {
    const container = mainContainer(app);
    const fromConfigMaps = (container.envFrom ?? []).flatMap((source) =>
      source.configMapRef
        ? Object.entries(named<ConfigMapObject>('ConfigMap', source.configMapRef.name)?.data ?? {})
        : [],
    );
    const fromEnv = (container.env ?? []).map((e) => [
      e.name,
      e.valueFrom?.secretKeyRef ? SECRET_PLACEHOLDERS[e.valueFrom.secretKeyRef.key] : (e.value ?? ''),
    ]);
    return Object.fromEntries([...fromConfigMaps, ...fromEnv]) as Record<string, string>;
  };

  it('lists every file of its folder, and every listed file exists', () => {
    const listed = [
      ...(kustomization.resources ?? []).filter((entry) => /\.ya?ml$/.test(entry)),
      ...(kustomization.patches ?? []).flatMap((patch) => (patch.path ? [patch.path] : [])),
    ];
    const onDisk = readdirSync(join(repoRoot, dir)).filter((f) => /\.ya?ml$/.test(f) && f !== 'kustomization.yaml');
    expect(listed.filter((file) => !existsSync(join(repoRoot, dir, file)))).toEqual([]);
    expect([...onDisk].sort()).toEqual([...listed].sort());
  });

  it('every object passes kubernetes-models schema validation', () => {
    const failures = objects.flatMap((object) => {
      try {
        validateWithModel(object);
        return [];
      } catch (error) {
        return [`${object.kind}/${object.metadata?.name}: ${(error as Error).message}`];
      }
    });
    expect(failures).toEqual([]);
  });

  it('kubernetes-models really rejects a broken Deployment, HorizontalPodAutoscaler and NetworkPolicy', () => {
    const brokenDeployment = structuredClone(deployment('gateway'));
    (brokenDeployment.spec.template.spec.containers[0].ports as unknown[])[0] = { name: 'http', containerPort: 'x' };
    expect(() => validateWithModel(brokenDeployment)).toThrow(/containerPort/);
    const brokenHpa = structuredClone(named<HpaObject>('HorizontalPodAutoscaler', 'gateway')) as HpaObject;
    delete (brokenHpa.spec as Partial<HpaObject['spec']>).scaleTargetRef;
    expect(() => validateWithModel(brokenHpa)).toThrow(/scaleTargetRef/);
    const brokenPolicy = structuredClone(named<NetworkPolicyObject>('NetworkPolicy', 'gateway')) as NetworkPolicyObject;
    (brokenPolicy.spec as { podSelector?: unknown }).podSelector = 'gateway';
    expect(() => validateWithModel(brokenPolicy)).toThrow(/podSelector/);
  });

  it('every object carries the name and part-of labels', () => {
    const unlabeled = objects
      .filter(
        (o) =>
          !o.metadata.labels?.['app.kubernetes.io/name'] ||
          o.metadata.labels['app.kubernetes.io/part-of'] !== 'account-platform',
      )
      .map((o) => `${o.kind}/${o.metadata.name}`);
    expect(unlabeled).toEqual([]);
  });

  it.each(APPS)('%s has a Deployment, a Service, a PodDisruptionBudget and a HorizontalPodAutoscaler', (app) => {
    for (const kind of ['Deployment', 'Service', 'PodDisruptionBudget', 'HorizontalPodAutoscaler']) {
      expect([kind, objects.filter((o) => o.kind === kind && o.metadata.name === app).length]).toEqual([kind, 1]);
    }
  });

  it.each(APPS)('%s Deployment selects its own pod template', (app) => {
    const d = deployment(app);
    expect(subsetOf(d.spec.selector.matchLabels, d.spec.template.metadata.labels)).toBe(true);
    expect(d.spec.template.metadata.labels['app.kubernetes.io/name']).toBe(app);
    expect(d.spec.template.metadata.labels['app.kubernetes.io/part-of']).toBe('account-platform');
  });

  it.each(APPS)('%s Service and PodDisruptionBudget select exactly its pods', (app) => {
    const podLabels = deployment(app).spec.template.metadata.labels;
    const pdb = named<PdbObject>('PodDisruptionBudget', app) as PdbObject;
    expect(subsetOf(service(app).spec.selector, podLabels)).toBe(true);
    expect(subsetOf(pdb.spec.selector.matchLabels, podLabels)).toBe(true);
    // ...and no other app's pods.
    for (const other of APPS.filter((a) => a !== app)) {
      const otherLabels = deployment(other).spec.template.metadata.labels;
      expect(subsetOf(service(app).spec.selector, otherLabels)).toBe(false);
      expect(subsetOf(pdb.spec.selector.matchLabels, otherLabels)).toBe(false);
    }
  });

  it.each(APPS)('%s HorizontalPodAutoscaler scales its Deployment on CPU', (app) => {
    const hpa = named<HpaObject>('HorizontalPodAutoscaler', app) as HpaObject;
    expect(hpa.apiVersion).toBe('autoscaling/v2');
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: app });
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
    expect(hpa.spec.maxReplicas).toBeGreaterThanOrEqual(hpa.spec.minReplicas);
    expect(hpa.spec.metrics).toContainEqual(
      expect.objectContaining({ type: 'Resource', resource: expect.objectContaining({ name: 'cpu' }) }),
    );
  });

  it.each(APPS)('%s probes: startup and liveness on /livez, readiness on /readyz, all on the ops port', (app) => {
    const c = mainContainer(app);
    const opsPort = c.ports?.find((p) => p.name === 'ops');
    expect(opsPort?.containerPort).toBe(PORTS[app].ops);
    for (const probe of [c.startupProbe, c.readinessProbe, c.livenessProbe]) {
      expect(probe?.httpGet?.port === 'ops' || probe?.httpGet?.port === PORTS[app].ops).toBe(true);
    }
    expect(c.livenessProbe?.httpGet?.path).toBe('/livez');
    expect(c.readinessProbe?.httpGet?.path).toBe('/readyz');
    // A startup probe on a dependency check would restart pods during a database outage.
    expect(c.startupProbe?.httpGet?.path).toBe('/livez');
  });

  it.each(APPS)('%s sets cpu and memory requests and limits', (app) => {
    const { resources: r } = mainContainer(app);
    for (const bound of ['requests', 'limits'] as const) {
      expect(Object.keys(r?.[bound] ?? {})).toEqual(expect.arrayContaining(['cpu', 'memory']));
    }
  });

  it.each(APPS)(
    '%s memory request covers its peak RSS under the bench load (bench/results) and the limit leaves headroom',
    (app) => {
      const bench = JSON.parse(readText('bench', 'results', 'latest.json')) as {
        memory: Record<string, { peak_under_load_mb: number; lifetime_peak_mb: number }>;
      };
      const { peak_under_load_mb: peak, lifetime_peak_mb: sinceStart } = bench.memory[app];
      const { requests, limits } = mainContainer(app).resources ?? {};
      const request = mebibytes(requests?.memory ?? '0');
      const limit = mebibytes(limits?.memory ?? '0');
      // Set from the measurement (node bench/k8s-memory.mjs): at least the peak, not more than a quarter above it.
      expect([request >= peak, request <= peak * 1.25]).toEqual([true, true]);
      // Room for bursts, and for the start-up's own peak.
      expect(limit).toBeGreaterThanOrEqual(request * 1.5);
      expect(limit).toBeGreaterThanOrEqual(sinceStart);
    },
  );

  it.each(APPS)(
    'the ProcessMemoryNearLimit alert (docs/alerts.rules.yml) fires for %s at 90%% of its memory limit',
    (app) => {
      const rules = parse(readText('docs', 'alerts.rules.yml')) as {
        groups: Array<{ rules: Array<{ alert?: string; expr: string }> }>;
      };
      const expr =
        rules.groups.flatMap((g) => g.rules).find((rule) => rule.alert === 'ProcessMemoryNearLimit')?.expr ?? '';
      // One clause per process: `…{service="auth"}) > 0.9 * 416 * 1024 * 1024`.
      const thresholds = [...expr.matchAll(/service=~?"([^"]+)"\}\) > 0\.9 \* (\d+) \* 1024 \* 1024/g)].flatMap(
        ([, services, mebibytesLimit]) =>
          services.split('|').map((service) => [service, Number(mebibytesLimit)] as const),
      );
      const limit = mebibytes(mainContainer(app).resources?.limits?.memory ?? '0');
      expect(new Map(thresholds).get(app)).toBe(limit);
    },
  );

  it('every container runs as non-root, read-only, without privilege escalation or capabilities', () => {
    const problems = podSpecs().flatMap(([owner, spec]) =>
      spec.containers.flatMap((c) => {
        const sc = c.securityContext ?? {};
        const issues: string[] = [];
        if (!(sc.runAsNonRoot ?? spec.securityContext?.runAsNonRoot)) issues.push('runAsNonRoot');
        if ((sc.runAsUser ?? spec.securityContext?.runAsUser) === 0) issues.push('runAsUser 0');
        if (sc.allowPrivilegeEscalation !== false) issues.push('allowPrivilegeEscalation');
        if (!sc.capabilities?.drop?.includes('ALL')) issues.push('capabilities.drop ALL');
        // The migration Job alone writes next to its migrations (see migrate-job.yaml).
        if (owner.startsWith('Deployment/') && sc.readOnlyRootFilesystem !== true)
          issues.push('readOnlyRootFilesystem');
        return issues.map((issue) => `${owner}/${c.name}: ${issue}`);
      }),
    );
    expect(problems).toEqual([]);
  });

  it.each(APPS)('%s drains before it stops: preStop sleep and a ~30s grace period', (app) => {
    const spec = deployment(app).spec.template.spec;
    const preStop = spec.containers[0].lifecycle?.preStop;
    expect(preStop?.sleep?.seconds ?? Number(preStop?.exec?.command?.slice(-1)[0])).toBeGreaterThan(0);
    expect(preStop?.exec ? preStop.exec.command?.join(' ') : 'sleep').toMatch(/sleep/);
    expect(spec.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(20);
    expect(spec.terminationGracePeriodSeconds).toBeLessThanOrEqual(60);
  });

  it.each(APPS)('%s Service exposes its serving port and an `ops` port that match the container', (app) => {
    const containerPorts = mainContainer(app).ports ?? [];
    const ops = service(app).spec.ports.find((p) => p.name === 'ops');
    expect(ops?.port).toBe(PORTS[app].ops);
    const serving = PORTS[app].serving;
    if (serving) {
      const port = service(app).spec.ports.find((p) => p.name === serving.name);
      expect(port?.port).toBe(serving.port);
      expect(containerPorts.find((p) => p.name === serving.name)?.containerPort).toBe(serving.port);
    }
    for (const port of service(app).spec.ports) {
      const target = port.targetPort;
      const resolves =
        typeof target === 'string'
          ? containerPorts.some((p) => p.name === target)
          : containerPorts.some((p) => p.containerPort === target);
      expect([port.name, resolves]).toEqual([port.name, true]);
    }
  });

  it('the gateway Service serves http on 8080 and the gRPC services serve grpc', () => {
    expect(service('gateway').spec.ports).toContainEqual(expect.objectContaining({ name: 'http', port: 8080 }));
    for (const app of GRPC_APPS) {
      expect(service(app).spec.ports).toContainEqual(
        expect.objectContaining({ name: 'grpc', port: PORTS[app].serving?.port }),
      );
    }
  });

  it('the gRPC Services are headless and the clients dial them as dns:/// targets (round-robin over every pod)', () => {
    const data = configMap().data;
    for (const app of GRPC_APPS) {
      expect([app, service(app).spec.clusterIP]).toEqual([app, 'None']);
      expect(data[`${app.toUpperCase()}_GRPC_ADDR`]).toBe(`dns:///${app}:${PORTS[app].serving?.port}`);
    }
  });

  it('no Service is published outside the cluster (no NodePort, LoadBalancer or external IPs)', () => {
    const published = ofKind<ServiceObject>('Service')
      .filter(
        (s) =>
          !['ClusterIP', undefined].includes(s.spec.type) ||
          (s.spec.externalIPs ?? []).length > 0 ||
          s.spec.ports.some((p) => p.nodePort !== undefined),
      )
      .map((s) => s.metadata.name);
    expect(published).toEqual([]);
  });

  it('the shared ConfigMap holds the ports and addresses the manifests use, and no secrets', () => {
    const configMaps = ofKind<ConfigMapObject>('ConfigMap');
    expect(configMaps).toHaveLength(1);
    const data = configMaps[0].data;
    for (const app of APPS) {
      expect(data[`${app.toUpperCase()}_OPS_PORT`]).toBe(String(PORTS[app].ops));
      const serving = PORTS[app].serving;
      if (serving) expect(data[serving.env]).toBe(String(serving.port));
    }
    expect(data.BIND_HOST).toBe('0.0.0.0');
    expect(data.NODE_ENV).toBe('production');
    expect(Object.keys(data).filter((key) => SECRET_KEYS.includes(key) || /SECRET|PASSWORD|_KEY$/.test(key))).toEqual(
      [],
    );
  });

  it(
    overlay
      ? 'sets every environment-specific value, none of them a local address'
      : 'leaves every environment-specific value to an overlay',
    () => {
      const data = configMap().data;
      const set = ENVIRONMENT_SPECIFIC.filter((key) => data[key] !== undefined);
      expect(set).toEqual(overlay ? ENVIRONMENT_SPECIFIC : []);
      const local = Object.entries(data).filter(([, value]) => /127\.0\.0\.1|localhost|\.local\b/.test(value));
      expect(local).toEqual([]);
    },
  );

  it('every Deployment and the Job take the shared ConfigMap or Secret refs only', () => {
    const configMapNames = new Set(ofKind('ConfigMap').map((c) => c.metadata.name));
    for (const app of APPS) {
      const refs = (mainContainer(app).envFrom ?? []).flatMap((source) =>
        source.configMapRef ? [source.configMapRef.name] : [],
      );
      expect(refs.length).toBeGreaterThan(0);
      expect(refs.every((name) => configMapNames.has(name))).toBe(true);
    }
    const literalSecrets = allContainers().flatMap(([owner, c]) =>
      (c.env ?? [])
        .filter((e) => SECRET_KEYS.includes(e.name) && e.value !== undefined)
        .map((e) => `${owner}: ${e.name}`),
    );
    expect(literalSecrets).toEqual([]);
  });

  it('every Secret reference points at the one documented Secret and its documented keys', () => {
    const refs = [
      ...allContainers().flatMap(([owner, c]) => [
        ...(c.env ?? []).flatMap((e) => (e.valueFrom?.secretKeyRef ? [{ owner, ...e.valueFrom.secretKeyRef }] : [])),
        ...(c.envFrom ?? []).flatMap((s) => (s.secretRef ? [{ owner, name: s.secretRef.name, key: undefined }] : [])),
      ]),
      ...podSpecs().flatMap(([owner, spec]) =>
        (spec.volumes ?? []).flatMap((v) => (v.secret ? [{ owner, name: v.secret.secretName, key: undefined }] : [])),
      ),
    ];
    expect(refs.length).toBeGreaterThan(0);
    expect(refs.filter((r) => r.name !== SECRET_NAME)).toEqual([]);
    expect(refs.filter((r) => r.key !== undefined && !SECRET_KEYS.includes(r.key))).toEqual([]);
  });

  it('the documented Secret keys are all used, and documented in k8s/README.md and kustomization.yaml', () => {
    const used = new Set(
      allContainers().flatMap(([, c]) =>
        (c.env ?? []).flatMap((e) => (e.valueFrom?.secretKeyRef ? [e.valueFrom.secretKeyRef.key] : [])),
      ),
    );
    const readme = readText('k8s', 'README.md');
    const kustomizationText = readText('k8s', 'base', 'kustomization.yaml');
    for (const key of SECRET_KEYS) {
      expect([key, used.has(key), readme.includes(key), kustomizationText.includes(key)]).toEqual([
        key,
        true,
        true,
        true,
      ]);
    }
    expect(readme).toContain(SECRET_NAME);
  });

  describe("against the apps' own config schemas (NODE_ENV=production)", () => {
    let checks: Record<App, ConfigCheck>;
    beforeAll(() => {
      checks = checkAppConfigs(
        Object.fromEntries(APPS.map((app) => [app, podEnvironment(app)])) as Record<App, Record<string, string>>,
      );
    });

    if (overlay) {
      it.each(APPS)('%s pod environment satisfies its config schema', (app) => {
        expect(checks[app].error).toBeUndefined();
      });
    } else {
      it.each(APPS)('%s refuses to start from the base alone, naming what the overlay must set', (app) => {
        const expected = ENVIRONMENT_SPECIFIC.filter((key) => checks[app].keys.includes(key)).sort();
        expect(expected.length).toBeGreaterThan(0);
        expect(namedInError(checks[app].error)).toEqual(expected);
      });
    }

    it.each(APPS)('%s gets every secret its config reads from the Secret, not from a dev default', (app) => {
      const wired = new Set((mainContainer(app).env ?? []).flatMap((e) => (e.valueFrom?.secretKeyRef ? [e.name] : [])));
      const secretsRead = SECRET_KEYS.filter((key) => checks[app].keys.includes(key));
      expect(secretsRead.filter((key) => !wired.has(key))).toEqual([]);
    });
  });

  it('commits no Secret object', () => {
    expect(ofKind('Secret').map((s) => s.metadata.name)).toEqual([]);
  });

  it('a migration Job runs the migrate image with the three database URLs', () => {
    const jobs = ofKind<JobObject>('Job');
    expect(jobs).toHaveLength(1);
    const spec = jobs[0].spec.template.spec;
    expect(['Never', 'OnFailure']).toContain(spec.restartPolicy);
    const [container] = spec.containers;
    expect(container.image).toMatch(/(^|\/)account-platform\/migrate[:@]/);
    const secretKeys = (container.env ?? []).flatMap((e) =>
      e.valueFrom?.secretKeyRef ? [e.valueFrom.secretKeyRef.key] : [],
    );
    expect(secretKeys).toEqual(
      expect.arrayContaining(['IDENTITY_DATABASE_URL', 'AUTH_DATABASE_URL', 'PLATFORM_DATABASE_URL']),
    );
    expect(Object.keys(container.resources?.requests ?? {})).toEqual(expect.arrayContaining(['cpu', 'memory']));
    expect(Object.keys(container.resources?.limits ?? {})).toEqual(expect.arrayContaining(['cpu', 'memory']));
  });

  it('every image is account-platform/<app>, tagged through kustomize images', () => {
    const rules = [...(baseKustomization.images ?? []), ...(overlay ? (kustomization.images ?? []) : [])];
    const ruleFor = (name: string) => rules.filter((image) => image.name === name).pop();
    for (const app of APPS) {
      const rule = ruleFor(`account-platform/${app}`);
      expect(rule?.newTag ?? rule?.digest).toBeTruthy();
      expect(mainContainer(app).image).toBe(`${rule?.newName ?? `account-platform/${app}`}:${rule?.newTag}`);
    }
    const untagged = allContainers().filter(([, c]) => !/[:@]/.test(c.image.split('/').slice(-1)[0]));
    expect(untagged.map(([owner]) => owner)).toEqual([]);
  });

  if (overlay) {
    it('puts everything in a namespace of its own, which it creates', () => {
      expect(kustomization.namespace).toBeTruthy();
      expect(objects.filter((o) => o.kind !== 'Namespace' && o.metadata.namespace !== kustomization.namespace)).toEqual(
        [],
      );
      expect(ofKind('Namespace').map((n) => n.metadata.name)).toEqual([kustomization.namespace]);
    });
  }

  describe('NetworkPolicies', () => {
    const namespaceName = kustomization.namespace ?? 'account-platform';
    const namespace = { 'kubernetes.io/metadata.name': namespaceName };
    const policies = ofKind<NetworkPolicyObject>('NetworkPolicy');
    const network = networkOf(policies, namespace);
    const podOf = (app: App | 'migrate'): Endpoint => ({
      pod:
        app === 'migrate'
          ? ofKind<JobObject>('Job')[0].spec.template.metadata.labels
          : deployment(app).spec.template.metadata.labels,
      namespace,
    });
    const containerPorts = (app: App) => (mainContainer(app).ports ?? []).map((p) => p.containerPort);
    /** Everyone who is not one of the five processes: the ones a policy must tell apart. */
    const strangers: Record<string, Endpoint> = {
      monitoring: {
        pod: { 'app.kubernetes.io/name': 'prometheus' },
        namespace: { 'kubernetes.io/metadata.name': 'monitoring' },
      },
      'another namespace': { pod: { app: 'someone' }, namespace: { 'kubernetes.io/metadata.name': 'other' } },
      'another pod of this namespace': { pod: { app: 'someone' }, namespace },
      'an outside address': { external: true },
    };
    /** The backing services' ports, from the overlay's addresses and the Secret's (placeholders for its values). */
    const exampleEnvironment = {
      ...parse(readText('k8s', 'overlays', 'example', 'config.yaml')).data,
      ...SECRET_PLACEHOLDERS,
    } as Record<string, string>;

    it('every policy uses numeric TCP ports and label selectors the checks below evaluate', () => {
      const rules = policies.flatMap((p) => [...(p.spec.ingress ?? []), ...(p.spec.egress ?? [])]);
      expect(rules.flatMap((r) => r.ports ?? []).filter((p) => typeof p.port !== 'number')).toEqual([]);
      expect(() => policies.forEach((p) => selects(p.spec.podSelector, {}))).not.toThrow();
    });

    it('a default-deny policy selects every pod, for ingress and egress', () => {
      const denyAll = policies.filter(
        (p) =>
          Object.keys(p.spec.podSelector.matchLabels ?? {}).length === 0 &&
          (p.spec.policyTypes ?? []).includes('Ingress') &&
          (p.spec.policyTypes ?? []).includes('Egress') &&
          (p.spec.ingress ?? []).length === 0 &&
          (p.spec.egress ?? []).length === 0,
      );
      expect(denyAll.map((p) => p.metadata.name)).toEqual(['default-deny']);
    });

    it.each([...APPS, 'migrate' as const])(
      '%s pods are selected by a policy of their own, for ingress and egress',
      (app) => {
        const pod = podOf(app);
        const own = policies.filter(
          (p) =>
            'pod' in pod &&
            Object.keys(p.spec.podSelector.matchLabels ?? {}).length > 0 &&
            selects(p.spec.podSelector, pod.pod),
        );
        expect(own.map((p) => [p.metadata.name, p.spec.policyTypes])).toEqual([[app, ['Ingress', 'Egress']]]);
      },
    );

    it('between the processes, exactly the gRPC calls the code makes are admitted', () => {
      const admitted = APPS.flatMap((from) =>
        [...APPS, 'migrate' as const].flatMap((to) =>
          (to === 'migrate' ? [5432] : containerPorts(to))
            .filter((port) => network.allows(podOf(from), podOf(to), port))
            .map((port) => `${from} -> ${to}:${port}`),
        ),
      );
      const expected = APPS.flatMap((from) =>
        GRPC_CALLS[from].map((to) => `${from} -> ${to}:${PORTS[to].serving?.port}`),
      );
      expect(admitted.sort()).toEqual(expected.sort());
    });

    it('from outside the processes: the public port from anywhere, ops ports from monitoring, no gRPC port at all', () => {
      const admitted = Object.entries(strangers).flatMap(([who, endpoint]) =>
        APPS.flatMap((app) =>
          containerPorts(app)
            .filter((port) => network.allows(endpoint, podOf(app), port))
            .map((port) => `${who} -> ${app}:${port}`),
        ),
      );
      const expected = [
        // A pod of this namespace that is none of the five has no egress at all (default-deny).
        ...Object.keys(strangers)
          .filter((who) => who !== 'another pod of this namespace')
          .map((who) => `${who} -> gateway:8080`),
        ...APPS.map((app) => `monitoring -> ${app}:${PORTS[app].ops}`),
      ];
      expect(admitted.sort()).toEqual(expected.sort());
      const grpcPorts = GRPC_APPS.map((app) => PORTS[app].serving?.port);
      expect(admitted.filter((edge) => grpcPorts.some((port) => edge.endsWith(`:${port}`)))).toEqual([]);
    });

    it('each process reaches exactly the backing services it uses, on the ports of their addresses', () => {
      const ports = new Set([
        ...Object.values(exampleEnvironment)
          .filter((value) => /^\w+:\/\//.test(value))
          .map(portOfUrl),
        25,
        80,
        1025,
        9000,
      ]);
      for (const app of APPS) {
        const allowed = [...ports].filter((port) => network.allows(podOf(app), { external: true }, port)).sort();
        const expected = [...new Set(BACKING_SERVICES[app].map((key) => portOfUrl(exampleEnvironment[key])))].sort();
        expect([app, allowed]).toEqual([app, expected]);
      }
      const migrateAllowed = [...ports].filter((port) => network.allows(podOf('migrate'), { external: true }, port));
      expect(migrateAllowed.sort()).toEqual([5432, portOfUrl(exampleEnvironment.NATS_URL)].sort());
    });

    it("lets the operator's shell (the migrate labels, docs/runbook.md) tell running auth instances of a client change", () => {
      // rotate-client-secret and delete-client send their notice over NATS (README: the old secret
      // "stops working at once"); blocked, the CLI waited out its timeout and every auth instance kept
      // accepting the old secret or the deleted client until its cache expired (CLIENT_CACHE_TTL_MS).
      const nats = portOfUrl(exampleEnvironment.NATS_URL);
      expect(network.allows(podOf('migrate'), { external: true }, nats)).toBe(true);
    });

    it('every pod may ask the cluster DNS', () => {
      const dns: Endpoint = {
        pod: { 'k8s-app': 'kube-dns' },
        namespace: { 'kubernetes.io/metadata.name': 'kube-system' },
      };
      for (const app of [...APPS, 'migrate' as const]) {
        expect([app, network.allows(podOf(app), dns, 53)]).toEqual([app, true]);
      }
    });
  });
});

// ---------------------------------------------------------------------------------------------
// Dockerfile
// ---------------------------------------------------------------------------------------------

const isRootUser = (user: string) => /^(root|0)(:.*)?$/.test(user.trim());

describe('Dockerfile', () => {
  const { globalArgs, stages } = parseDockerfile(readText('Dockerfile'));
  const stage = (name: string) => stages.find((s) => s.name === name) as Stage;
  const lastUser = (s: Stage) => s.instructions.filter((i) => i.keyword === 'USER').pop()?.args;

  it('is multi-stage with named stages, including runtime and migrate', () => {
    const named = stages.filter((s) => s.name);
    expect(named.length).toBeGreaterThanOrEqual(2);
    expect(named.map((s) => s.name)).toEqual(expect.arrayContaining(['runtime', 'migrate']));
  });

  it('builds on node:22-bookworm-slim (Node 22 LTS, package.json engines)', () => {
    const resolveFrom = (from: string) =>
      from.replace(/\$\{?(\w+)\}?/g, (_, name: string) => {
        const arg = globalArgs.find((a) => a.keyword === 'ARG' && a.args.startsWith(`${name}=`));
        return arg ? arg.args.slice(name.length + 1) : `$${name}`;
      });
    const external = stages.map((s) => resolveFrom(s.from)).filter((from) => !stages.some((s) => s.name === from));
    expect(external.length).toBeGreaterThan(0);
    expect(external.every((from) => from === 'node:22-bookworm-slim')).toBe(true);
    const engines = (JSON.parse(readText('package.json')) as { engines: { node: string } }).engines.node;
    expect(engines).toMatch(/^>=22\./);
  });

  it.each(['runtime', 'migrate'])('the %s stage runs as a non-root user', (name) => {
    const user = lastUser(stage(name));
    expect(user).toBeDefined();
    expect(isRootUser(user as string)).toBe(false);
  });

  it('the runtime stage turns ARG APP into ENV and starts dist/apps/$APP/src/main.js', () => {
    const runtime = stage('runtime');
    expect(runtime.instructions).toContainEqual({ keyword: 'ARG', args: 'APP' });
    const env = runtime.instructions
      .filter((i) => i.keyword === 'ENV')
      .map((i) => i.args)
      .join(' ');
    expect(env).toMatch(/\bAPP=\$\{?APP\}?/);
    const cmd = runtime.instructions.filter((i) => i.keyword === 'CMD').pop()?.args ?? '';
    expect(cmd).toMatch(/dist\/apps\/\$\{?APP\}?\/src\/main\.js/);
    // Exec form does not expand variables: a JSON CMD must hand $APP to a shell.
    if (cmd.startsWith('[')) expect((JSON.parse(cmd) as string[])[0]).toMatch(/(^|\/)sh$/);
  });

  it("the runtime stage runs node with tools/node-runtime.json's arguments and environment", () => {
    // The same heap and allocator settings as `npm run up` and the test stack, where the bench measures them.
    const runtimeSettings = JSON.parse(readText('tools', 'node-runtime.json')) as {
      nodeArguments: string[];
      environment: Record<string, string>;
    };
    const runtime = stage('runtime');
    const cmd = runtime.instructions.filter((i) => i.keyword === 'CMD').pop()?.args ?? '';
    expect(cmd).toContain(`exec node ${runtimeSettings.nodeArguments.join(' ')} `);
    const env = runtime.instructions
      .filter((i) => i.keyword === 'ENV')
      .map((i) => i.args)
      .join(' ');
    for (const [name, value] of Object.entries(runtimeSettings.environment)) {
      expect(env).toMatch(new RegExp(`\\b${name}=${value}\\b`));
    }
  });

  it('the runtime stage ships production dependencies, dist and proto only', () => {
    const runtime = stage('runtime');
    const copies = runtime.instructions.filter((i) => i.keyword === 'COPY').map((i) => i.args);
    const fromStage = (dest: string) => copies.find((c) => new RegExp(`\\s\\.?/?(app/)?${dest}/?$`).test(c));
    expect(fromStage('dist')).toMatch(/--from=build\b/);
    expect(fromStage('proto')).toBeDefined();
    const nodeModules = fromStage('node_modules') as string;
    const source = /--from=(\S+)/.exec(nodeModules)?.[1] as string;
    const installs = stage(source).instructions.filter((i) => i.keyword === 'RUN' && /npm (ci|install)/.test(i.args));
    expect(installs.length).toBeGreaterThan(0);
    expect(installs.every((i) => /--omit=dev|--production/.test(i.args))).toBe(true);
  });

  it('installs with npm ci only (the lock file exactly), never npm install', () => {
    const runs = stages.flatMap((s) => s.instructions.filter((i) => i.keyword === 'RUN').map((i) => i.args));
    expect(runs.filter((run) => /npm (i|install)\b/.test(run))).toEqual([]);
    expect(runs.filter((run) => /npm ci\b/.test(run)).length).toBeGreaterThanOrEqual(2);
  });

  it('the migrate stage keeps dev dependencies and runs npm run migrate', () => {
    const migrate = stage('migrate');
    const cmd = migrate.instructions.filter((i) => i.keyword === 'CMD').pop()?.args ?? '';
    expect(cmd.replace(/[[\]",]/g, ' ').replace(/\s+/g, ' ')).toContain('npm run migrate');
    const text = migrate.instructions.map((i) => `${i.keyword} ${i.args}`).join('\n');
    expect(text).not.toMatch(/--omit=dev|--production/);
  });

  it('defines every build target that docker-compose.yml asks for', () => {
    const targets = Object.values(loadCompose().services).flatMap((s) =>
      typeof s.build === 'object' && s.build.target ? [s.build.target] : [],
    );
    expect(targets.length).toBeGreaterThan(0);
    expect(targets.filter((target) => !stages.some((s) => s.name === target))).toEqual([]);
  });

  it('.dockerignore keeps node_modules, dist, .git and .env out of the build context', () => {
    const ignored = readText('.dockerignore')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line && !line.startsWith('#'));
    for (const entry of ['node_modules', 'dist', '.git', '.env']) {
      expect([entry, ignored.some((line) => line === entry || line === `**/${entry}`)]).toEqual([entry, true]);
    }
  });
});
