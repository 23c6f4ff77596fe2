import { LATENCY_BUCKETS } from '@acct/observability';
import { ServerInterceptingCall, ServerInterceptor, status as Status } from '@grpc/grpc-js';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** `/identity.v1.IdentityService/GetUser` → service and method labels. */
function labelsOf(path: string): { grpc_service: string; grpc_method: string } {
  const [, service = 'unknown', method = 'unknown'] = path.split('/');
  return { grpc_service: service, grpc_method: method };
}

/** How early a cancel may land before the call's deadline and still be its expiry (see onCancel). */
const DEADLINE_SLACK_MS = 100;

/**
 * Server metrics for every call a service answers (including the ones its caller guard refuses):
 * calls by method and status code, handling time by method, calls in flight. A grpc-js server
 * interceptor, so it sees the status that really left, whatever produced it.
 */
export function grpcServerMetrics(registry: Registry): ServerInterceptor {
  const handled = new Counter({
    name: 'grpc_server_handled_total',
    help: 'gRPC calls answered, by service, method and status code.',
    labelNames: ['grpc_service', 'grpc_method', 'grpc_code'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'grpc_server_handling_seconds',
    help: 'Time to answer a gRPC call, by service and method.',
    labelNames: ['grpc_service', 'grpc_method'],
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const inFlight = new Gauge({
    name: 'grpc_server_in_flight',
    help: 'gRPC calls received and not answered yet.',
    registers: [registry],
  });
  return (descriptor, call) => {
    const labels = labelsOf(descriptor.path);
    const started = process.hrtime.bigint();
    let finished = false;
    const finish = (code: Status) => {
      if (finished) return;
      finished = true;
      inFlight.dec();
      handled.inc({ ...labels, grpc_code: Status[code] ?? String(code) });
      duration.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
    };
    inFlight.inc();
    return new ServerInterceptingCall(call, {
      // A call that ends before its handler answers is counted too: grpc-js answers a call past its
      // deadline itself (DEADLINE_EXCEEDED, not through this interceptor) and only tells it "cancelled";
      // uncounted, the slowest calls were missing from both metrics and the alerts on them never fired.
      start: (next) =>
        next({
          onCancel: () => {
            // The caller gives up at its own deadline, which is ours less the time the call took to
            // arrive: its cancel may land just before our timer fires, and is the same expiry.
            const deadline = Number(call.getDeadline());
            const expired = Number.isFinite(deadline) && Date.now() >= deadline - DEADLINE_SLACK_MS;
            finish(expired ? Status.DEADLINE_EXCEEDED : Status.CANCELLED);
          },
        }),
      sendStatus: (status, next) => {
        finish(status.code);
        next(status);
      },
    });
  };
}
