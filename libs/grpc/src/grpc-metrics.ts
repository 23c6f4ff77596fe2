import { LATENCY_BUCKETS } from '@acct/observability';
import { ServerInterceptingCall, ServerInterceptor, status as Status } from '@grpc/grpc-js';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** `/identity.v1.IdentityService/GetUser` → service and method labels. */
function labelsOf(path: string): { grpc_service: string; grpc_method: string } {
  const [, service = 'unknown', method = 'unknown'] = path.split('/');
  return { grpc_service: service, grpc_method: method };
}

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
    const finish = () => {
      if (finished) return false;
      finished = true;
      inFlight.dec();
      return true;
    };
    inFlight.inc();
    return new ServerInterceptingCall(call, {
      start: (next) => next({ onCancel: () => finish() }),
      sendStatus: (status, next) => {
        if (finish()) {
          handled.inc({ ...labels, grpc_code: Status[status.code] ?? String(status.code) });
          duration.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
        }
        next(status);
      },
    });
  };
}
