// autocannon has no types of its own; the little of its API the bench uses is typed here.

/** One request template; `setupRequest` runs before every send, `onResponse` after every answer. */
export interface LoadRequest {
  method?: 'GET' | 'POST';
  path?: string;
  headers?: Record<string, string>;
  body?: string;
  setupRequest?: (request: LoadRequest) => LoadRequest;
  onResponse?: (status: number, body: string) => void;
}

/** One autocannon connection; `setRequests` gives it requests of its own (per-connection state). */
export interface LoadClient {
  setRequests(requests: LoadRequest[]): void;
}

interface AutocannonOptions {
  url: string;
  connections: number;
  duration: number;
  timeout: number;
  requests: LoadRequest[];
  setupClient?: (client: LoadClient) => void;
}

interface Histogram {
  average: number;
  mean: number;
  p50: number;
  p99: number;
  max: number;
  total: number;
}

interface AutocannonResult {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  '2xx': number;
  statusCodeStats: Record<string, { count: number }>;
  latency: Histogram;
  requests: Histogram & { sent: number };
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const autocannon = require('autocannon') as (options: AutocannonOptions) => PromiseLike<AutocannonResult>;

export interface LoadOptions {
  url: string;
  connections: number;
  durationSeconds: number;
  /** A fresh request template per connection (so a connection can keep state, e.g. its refresh token). */
  requestsFor: () => LoadRequest[];
}

/** The numbers of one measured run. */
export interface LoadResult {
  requests_per_second: number;
  latency_p50_ms: number;
  latency_p99_ms: number;
  latency_mean_ms: number;
  latency_max_ms: number;
  responses: number;
  responses_2xx: number;
  non_2xx: number;
  errors: number;
  timeouts: number;
  status_codes: Record<string, number>;
  duration_s: number;
}

const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

/** Runs autocannon against `url` for `durationSeconds` with `connections` keep-alive connections. */
export async function load(options: LoadOptions): Promise<LoadResult> {
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.durationSeconds,
    timeout: 10,
    // Only a placeholder: every connection replaces it with its own templates in setupClient.
    requests: [{ method: 'GET', path: '/' }],
    setupClient: (client) => client.setRequests(options.requestsFor()),
  });
  return {
    requests_per_second: round(result.requests.average, 1),
    latency_p50_ms: result.latency.p50,
    latency_p99_ms: result.latency.p99,
    latency_mean_ms: round(result.latency.mean),
    latency_max_ms: result.latency.max,
    responses: result.requests.total,
    responses_2xx: result['2xx'],
    non_2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    status_codes: Object.fromEntries(
      Object.entries(result.statusCodeStats).map(([status, { count }]) => [status, count]),
    ),
    duration_s: result.duration,
  };
}
