import { randomUUID } from 'node:crypto';

/** One answer the load got (status 0: no answer at all, e.g. the connection failed or timed out). */
export interface LoadSample {
  operation: LoadOperation;
  at: number;
  ms: number;
  status: number;
  code?: string;
  /** Whether a non-2xx answer was problem+json (or, for health, the JSON report). */
  problemJson: boolean;
  retryAfter?: string;
}

export type LoadOperation = 'create' | 'health' | 'read' | 'token';

/** A user creation as a careful client makes it: one Idempotency-Key, retried until it succeeds. */
export interface Creation {
  key: string;
  email: string;
  attempts: number;
  /** The answers that were not 201, in order. */
  failures: Array<{ status: number; code?: string }>;
  /** Set once a 201 came back; every 201 for this key must carry the same id. */
  id?: string;
  ids: Set<string>;
}

export interface SteadyLoadOptions {
  /** Gateway base URLs; requests go round-robin. */
  gateways: string[];
  /** A client_credentials client whose token can create and read users. */
  clientId: string;
  clientSecret: string;
  /** A user id the client may read. */
  readUserId: string;
  /** Pause between rounds; one round is one request of each operation. */
  intervalMs?: number;
  /** The longest any single request may take before the load gives up on it. */
  requestTimeoutMs?: number;
  emailDomain?: string;
}

/**
 * A small, steady stream of real client traffic for fault tests: user creations with
 * Idempotency-Keys (retried with the same key until they succeed, as a client would), health
 * checks, authenticated reads and client_credentials grants, at a modest rate. It records every
 * answer and every creation so a test can check the behaviour during a fault and that nothing was
 * lost or doubled afterwards.
 */
export class SteadyLoad {
  readonly samples: LoadSample[] = [];
  readonly creations: Creation[] = [];
  private running = false;
  private loop?: Promise<void>;
  private token?: string;
  private sequence = 0;
  private ipCounter = 0;
  /** Requests under way, by the time they were sent. */
  private readonly inFlight = new Map<Promise<unknown>, number>();

  constructor(private readonly options: SteadyLoadOptions) {}

  start(): void {
    this.running = true;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  /** Creations still waiting for their 201. */
  get pending(): Creation[] {
    return this.creations.filter((creation) => creation.id === undefined);
  }

  /** Samples since `since` (ms epoch), optionally of one operation. */
  since(since: number, operation?: LoadOperation): LoadSample[] {
    return this.samples.filter((sample) => sample.at >= since && (!operation || sample.operation === operation));
  }

  /** Waits for every request sent before `time` (ms epoch) to be answered or given up on. */
  async answeredBefore(time: number): Promise<void> {
    await Promise.all([...this.inFlight].filter(([, at]) => at < time).map(([request]) => request));
  }

  /** Retries every pending creation until each has its 201 (after a fault is over). */
  async settle(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.pending.length > 0) {
      if (Date.now() > deadline) throw new Error(`${this.pending.length} creations never succeeded`);
      for (const creation of this.pending) await this.create(creation);
      if (this.pending.length > 0) await sleep(200);
    }
  }

  private async run(): Promise<void> {
    while (this.running) {
      const round = [this.health(), this.tokenGrant().then(() => this.read())];
      // Retry one pending creation (same key, same body) or start a new one.
      const retry = this.pending[0];
      round.push(this.create(retry ?? this.newCreation()));
      await Promise.all(round);
      await sleep(this.options.intervalMs ?? 100);
    }
  }

  private gateway(): string {
    const { gateways } = this.options;
    return gateways[(this.sequence += 1) % gateways.length];
  }

  private newCreation(): Creation {
    const id = randomUUID();
    const creation: Creation = {
      key: `load-${id}`,
      email: `load-${id.slice(0, 13)}@${this.options.emailDomain ?? 'load.test'}`,
      attempts: 0,
      failures: [],
      ids: new Set(),
    };
    this.creations.push(creation);
    return creation;
  }

  private async create(creation: Creation): Promise<void> {
    if (!this.token) return;
    creation.attempts += 1;
    const answer = await this.send('create', '/v2/users', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${this.token}`,
        'content-type': 'application/json',
        'idempotency-key': creation.key,
      },
      body: JSON.stringify({ email: creation.email, display_name: 'Load' }),
    });
    if (answer.status === 201 && typeof answer.body?.id === 'string') {
      creation.id ??= answer.body.id;
      creation.ids.add(answer.body.id);
    } else {
      creation.failures.push({ status: answer.status, code: answer.sample.code });
    }
  }

  private async health(): Promise<void> {
    await this.send('health', '/v2/system/health', {});
  }

  private async tokenGrant(): Promise<void> {
    const answer = await this.send('token', '/v2/auth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': this.freshIp() },
      body: JSON.stringify({
        grant_type: 'client_credentials',
        client_id: this.options.clientId,
        client_secret: this.options.clientSecret,
      }),
    });
    if (answer.status === 200 && typeof answer.body?.access_token === 'string') this.token = answer.body.access_token;
  }

  private async read(): Promise<void> {
    if (!this.token) return;
    await this.send('read', `/v2/users/${this.options.readUserId}`, {
      headers: { authorization: `Bearer ${this.token}` },
    });
  }

  /** A fresh client address per grant: the auth tier is per IP, and this load is many clients. */
  private freshIp(): string {
    this.ipCounter += 1;
    return `10.${(this.ipCounter >> 16) & 255}.${(this.ipCounter >> 8) & 255}.${this.ipCounter & 255}`;
  }

  private send(operation: LoadOperation, path: string, init: RequestInit): Promise<Exchange> {
    const at = Date.now();
    const exchange = this.exchange(operation, path, init, at);
    this.inFlight.set(exchange, at);
    void exchange.finally(() => this.inFlight.delete(exchange));
    return exchange;
  }

  private async exchange(operation: LoadOperation, path: string, init: RequestInit, at: number): Promise<Exchange> {
    let sample: LoadSample;
    let body: Record<string, unknown> | undefined;
    try {
      const response = await fetch(`${this.gateway()}${path}`, {
        ...init,
        signal: AbortSignal.timeout(this.options.requestTimeoutMs ?? 15_000),
      });
      const text = await response.text();
      try {
        body = text ? (JSON.parse(text) as Record<string, unknown>) : undefined;
      } catch {
        body = undefined;
      }
      const type = response.headers.get('content-type') ?? '';
      sample = {
        operation,
        at,
        ms: Date.now() - at,
        status: response.status,
        code: typeof body?.code === 'string' ? body.code : undefined,
        problemJson:
          type.startsWith('application/problem+json') ||
          (operation === 'health' && type.startsWith('application/json')),
        retryAfter: response.headers.get('retry-after') ?? undefined,
      };
    } catch {
      sample = { operation, at, ms: Date.now() - at, status: 0, problemJson: false };
    }
    this.samples.push(sample);
    return { status: sample.status, body, sample };
  }
}

interface Exchange {
  status: number;
  body?: Record<string, unknown>;
  sample: LoadSample;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
