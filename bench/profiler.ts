// CPU profiles of running processes through their inspector (Chrome DevTools Protocol over a
// WebSocket), and their summary: self time by function and by layer (framework, JWT, Redis, …).
import fs from 'node:fs';
import path from 'node:path';

/** A V8 CPU profile (`Profiler.stop`'s answer), the fields the summary reads. */
interface CpuProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
export interface CpuProfile {
  nodes: CpuProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
}

/** One inspector connection: commands by id, answers matched to them. */
export class InspectorSession {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  private onEvent?: (method: string, params: Record<string, unknown>) => void;

  private constructor(private readonly socket: WebSocket) {
    socket.addEventListener('message', (event) => {
      const message = JSON.parse(String(event.data)) as {
        id?: number;
        method?: string;
        params?: Record<string, unknown>;
        result?: unknown;
        error?: { message: string };
      };
      if (message.id === undefined) {
        if (message.method) this.onEvent?.(message.method, message.params ?? {});
        return;
      }
      const waiting = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.error) waiting?.reject(new Error(message.error.message));
      else waiting?.resolve(message.result);
    });
    socket.addEventListener('close', () => {
      for (const waiting of this.pending.values()) waiting.reject(new Error('inspector connection closed'));
      this.pending.clear();
    });
  }

  static connect(url: string): Promise<InspectorSession> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url);
      socket.addEventListener('open', () => resolve(new InspectorSession(socket)), { once: true });
      socket.addEventListener('error', () => reject(new Error(`cannot reach the inspector at ${url}`)), {
        once: true,
      });
    });
  }

  send<T>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.socket.send(JSON.stringify({ id, method, params }));
    });
  }

  /** Writes a heap snapshot of the process (for Chrome DevTools' Memory panel) to `file`. */
  async heapSnapshot(file: string): Promise<void> {
    const out = fs.createWriteStream(file);
    this.onEvent = (method, params) => {
      if (method === 'HeapProfiler.addHeapSnapshotChunk') out.write(String(params.chunk));
    };
    try {
      await this.send('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
    } finally {
      this.onEvent = undefined;
      await new Promise((resolve) => out.end(resolve));
    }
  }

  close(): void {
    this.socket.close();
  }
}

/** Profiles several processes over the same interval. */
export class Profiler {
  private constructor(private readonly sessions: Map<string, InspectorSession>) {}

  /** Connects to every process's inspector; one that cannot be reached is left out (and said). */
  static async attach(targets: Record<string, string | undefined>, log: (line: string) => void): Promise<Profiler> {
    const sessions = new Map<string, InspectorSession>();
    for (const [name, url] of Object.entries(targets)) {
      if (!url) {
        log(`no inspector for ${name}: it is not profiled`);
        continue;
      }
      try {
        const session = await InspectorSession.connect(url);
        await session.send('Profiler.enable');
        // 1 ms: V8's default; enough samples in a few seconds, little overhead.
        await session.send('Profiler.setSamplingInterval', { interval: 1000 });
        sessions.set(name, session);
      } catch (error) {
        log(`${name}: ${error instanceof Error ? error.message : String(error)}; it is not profiled`);
      }
    }
    return new Profiler(sessions);
  }

  async start(): Promise<void> {
    await Promise.all([...this.sessions.values()].map((session) => session.send('Profiler.start')));
  }

  /** Stops every profile and answers each process's summary; `keep` gets each raw profile. */
  async stop(top: number, keep?: (name: string, profile: CpuProfile) => void): Promise<Record<string, ProfileSummary>> {
    const stopped = await Promise.all(
      [...this.sessions.entries()].map(async ([name, session]) => {
        const { profile } = await session.send<{ profile: CpuProfile }>('Profiler.stop');
        keep?.(name, profile);
        return [name, summarise(profile, top)] as const;
      }),
    );
    return Object.fromEntries(stopped);
  }

  close(): void {
    for (const session of this.sessions.values()) session.close();
  }
}

/** The layers a sample is counted in, in the order the report shows them. */
export const LAYERS = [
  'framework',
  'JWT',
  'Redis',
  'gRPC',
  'Prisma/pg',
  'argon2',
  'logging',
  'metrics',
  'tracing',
  'NATS',
  'app',
  'async context',
  'Node core',
  'GC',
  'V8/native',
  'other',
  'idle',
] as const;
export type Layer = (typeof LAYERS)[number];

/** What each layer holds, for the report's legend. */
export const LAYER_LEGEND: Record<Layer, string> = {
  framework: 'NestJS, Fastify and their helpers (find-my-way, avvio, rxjs, reflect-metadata, ajv, fast-json-stringify)',
  JWT: 'jose and fast-jwt: signing and verifying tokens',
  Redis: 'ioredis and its parser',
  gRPC: '@grpc/grpc-js, proto-loader, protobufjs',
  'Prisma/pg': "Prisma's client and query compiler (WebAssembly), @prisma/adapter-pg, pg",
  argon2: 'the argon2 binding (the hashing itself runs on libuv threads, outside the profile)',
  logging: 'pino and its helpers',
  metrics: 'prom-client',
  tracing: 'OpenTelemetry',
  NATS: 'the nats client',
  app: "the project's own code (apps/, libs/)",
  'async context': 'AsyncLocalStorage and async_hooks bookkeeping (a hook on every promise and callback)',
  'Node core':
    "Node's own code with no library above it: the HTTP parser, timers, the event loop's callbacks " +
    "(Node code a library calls, e.g. a socket write or a signature check, counts in that library's layer)",
  GC: 'garbage collection',
  'V8/native': 'V8 and native code the profiler cannot attribute to a function ("(program)")',
  other: 'every other package (zod, lru-cache, …)',
  idle: 'waiting on the event loop: for Postgres, Redis, another service or the next request; not CPU',
};

const PACKAGE_LAYERS: Array<[RegExp, Layer]> = [
  [
    /^(@nestjs\/|@fastify\/|fastify$|fastify-plugin$|find-my-way$|avvio$|light-my-request$|fast-json-stringify$|fast-querystring$|fast-uri$|fast-decode-uri-component$|fast-content-type-parse$|secure-json-parse$|safe-regex2$|ret$|toad-cache$|rfdc$|process-warning$|abstract-logging$|reflect-metadata$|rxjs$|tslib$|iterare$|path-to-regexp$|ajv|json-schema-ref-resolver$|content-disposition$|mime|@lukeed\/|proxy-addr$|forwarded$|ipaddr\.js$|semver$|passport)/,
    'framework',
  ],
  [/^(jose|fast-jwt|ecdsa-sig-formatter|asn1\.js|bn\.js|mnemonist|obliterator)$/, 'JWT'],
  [/^(ioredis$|@ioredis\/|redis-parser$|redis-errors$|cluster-key-slot$|denque$|standard-as-callback$)/, 'Redis'],
  [/^(@grpc\/|protobufjs$|@protobufjs\/|long$|grpc-health-check$|lodash\.camelcase$)/, 'gRPC'],
  [/^(@prisma\/|\.prisma$|prisma$|pg$|pg-|postgres-|pgpass$|split2$)/, 'Prisma/pg'],
  [/^(argon2$|@node-rs\/argon2|node-gyp-build$|@phc\/)/, 'argon2'],
  [
    /^(pino$|pino-|sonic-boom$|thread-stream$|@pinojs\/|fast-redact$|quick-format-unescaped$|on-exit-leak-free$|atomic-sleep$|safe-stable-stringify$|real-require$)/,
    'logging',
  ],
  [/^(prom-client$|tdigest$|bintrees$)/, 'metrics'],
  [/^@opentelemetry\//, 'tracing'],
  [/^(nats$|nkeys\.js$)/, 'NATS'],
];

/** The package a file belongs to (`@scope/name` or `name`), from its last node_modules segment. */
function packageOf(file: string): string | undefined {
  const index = file.lastIndexOf('/node_modules/');
  if (index < 0) return undefined;
  const [first, second] = file.slice(index + '/node_modules/'.length).split('/');
  return first.startsWith('@') ? `${first}/${second}` : first;
}

const repositoryRoot = path.resolve(__dirname, '..');

/** A short, readable location: `pkg/file.js:12`, `apps/x/src/y.ts:3`, `node:internal/…:4`. */
function location(url: string, line: number): string {
  if (!url) return '';
  let file = url.replace(/^file:\/\//, '');
  const index = file.lastIndexOf('/node_modules/');
  if (index >= 0) file = file.slice(index + '/node_modules/'.length);
  else if (file.startsWith(`${repositoryRoot}/`)) file = file.slice(repositoryRoot.length + 1);
  return `${file}:${line + 1}`;
}

/**
 * The layer of one frame by itself, or undefined when it counts in its caller's: builtins without a
 * file (`JSON.parse`, a signature check's native half) and Node's own JavaScript (a socket write, a
 * crypto call), so that time lands in the library that asked for it. Node code with no library or
 * app frame above it (the HTTP parser, timers, the event loop) is `Node core`.
 */
function ownLayer(frame: CpuProfileNode['callFrame']): Layer | undefined {
  const { functionName, url } = frame;
  if (functionName === '(idle)') return 'idle';
  if (functionName === '(garbage collector)') return 'GC';
  if (functionName === '(program)') return 'V8/native';
  if (!url) return undefined;
  // Prisma's query compiler is the only WebAssembly these processes run.
  if (url.startsWith('wasm://')) return 'Prisma/pg';
  if (/^node:(internal\/)?async_(hooks|local_storage|context_frame)/.test(url)) return 'async context';
  if (url.startsWith('node:')) return undefined;
  const file = url.replace(/^file:\/\//, '');
  const pkg = packageOf(file);
  if (pkg) return PACKAGE_LAYERS.find(([pattern]) => pattern.test(pkg))?.[1] ?? 'other';
  // Generated code of the repository: the Prisma clients; the rest of apps/ and libs/ is the app's own.
  if (/\/src\/generated\/prisma\//.test(file)) return 'Prisma/pg';
  if (file.startsWith(`${repositoryRoot}/`)) return 'app';
  return 'other';
}

export interface FunctionTime {
  function: string;
  location: string;
  layer: Layer;
  self_ms: number;
  self_percent: number;
}

export interface ProfileSummary {
  /** Length of the profile, ms. */
  duration_ms: number;
  /** Time in the process's main thread that was not idle, as a share of the profile's length. */
  busy_percent: number;
  /** Self time per layer, ms (idle included: it is waiting, not CPU). */
  layers: Partial<Record<Layer, number>>;
  /** The functions with the most self time, idle left out. */
  top: FunctionTime[];
}

const round1 = (value: number) => Math.round(value * 10) / 10;

/** Self time by function and by layer; a builtin without a file counts in its caller's layer. */
export function summarise(profile: CpuProfile, top: number): ProfileSummary {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const layerOf = new Map<number, Layer>();
  const resolveLayer = (id: number): Layer => {
    const known = layerOf.get(id);
    if (known) return known;
    const node = byId.get(id)!;
    const caller = parent.get(id);
    const layer = ownLayer(node.callFrame) ?? (caller === undefined ? 'Node core' : resolveLayer(caller));
    layerOf.set(id, layer);
    return layer;
  };
  /** A builtin's location: the nearest caller's that has a file (`via node:internal/crypto/sig:235`). */
  const whereOf = (id: number): string => {
    const { url, lineNumber } = byId.get(id)!.callFrame;
    if (url) return location(url, lineNumber);
    for (let caller = parent.get(id); caller !== undefined; caller = parent.get(caller)) {
      const frame = byId.get(caller)!.callFrame;
      if (frame.url) return `via ${location(frame.url, frame.lineNumber)}`;
    }
    return '';
  };

  const samples = profile.samples ?? [];
  const duration = (profile.endTime - profile.startTime) / 1000;
  const perSample = samples.length > 0 ? duration / samples.length : 0;
  const hits = new Map<number, number>();
  for (const id of samples) hits.set(id, (hits.get(id) ?? 0) + 1);

  const layers: Partial<Record<Layer, number>> = {};
  const functions = new Map<string, FunctionTime>();
  for (const [id, count] of hits) {
    const node = byId.get(id);
    if (!node) continue;
    const layer = resolveLayer(id);
    const ms = count * perSample;
    layers[layer] = (layers[layer] ?? 0) + ms;
    if (layer === 'idle') continue;
    const name = node.callFrame.functionName || '(anonymous)';
    const where = whereOf(id);
    const key = `${name}\u0000${where}\u0000${layer}`;
    const entry = functions.get(key) ?? { function: name, location: where, layer, self_ms: 0, self_percent: 0 };
    entry.self_ms += ms;
    functions.set(key, entry);
  }
  for (const layer of Object.keys(layers) as Layer[]) layers[layer] = round1(layers[layer]!);
  return {
    duration_ms: Math.round(duration),
    busy_percent: duration > 0 ? round1(100 - ((layers.idle ?? 0) / duration) * 100) : 0,
    layers,
    top: [...functions.values()]
      .sort((a, b) => b.self_ms - a.self_ms)
      .slice(0, top)
      .map((entry) => ({
        ...entry,
        self_ms: round1(entry.self_ms),
        self_percent: duration > 0 ? round1((entry.self_ms / duration) * 100) : 0,
      })),
  };
}
