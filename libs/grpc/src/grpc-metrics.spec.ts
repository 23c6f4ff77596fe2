import { freePort } from '@acct/testing';
import {
  credentials,
  makeGenericClientConstructor,
  Metadata,
  sendUnaryData,
  Server,
  ServerCredentials,
  ServerUnaryCall,
  ServiceDefinition,
} from '@grpc/grpc-js';
import { Registry } from 'prom-client';

import { grpcServerMetrics } from './grpc-metrics';

const passThrough = (value: Buffer) => value;
const service: ServiceDefinition = {
  Slow: {
    path: '/test.v1.TestService/Slow',
    requestStream: false,
    responseStream: false,
    requestSerialize: passThrough,
    requestDeserialize: passThrough,
    responseSerialize: passThrough,
    responseDeserialize: passThrough,
  },
};

describe('gRPC server metrics', () => {
  let server: Server;
  let registry: Registry;
  let client: InstanceType<ReturnType<typeof makeGenericClientConstructor>>;

  beforeAll(async () => {
    registry = new Registry();
    server = new Server({ interceptors: [grpcServerMetrics(registry)] });
    server.addService(service, {
      // Answers after the caller's deadline, as a handler stuck on a slow dependency does.
      Slow: (_call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>) => {
        setTimeout(() => callback(null, Buffer.alloc(0)), 400);
      },
    });
    const port = await freePort();
    await new Promise<void>((resolve, reject) =>
      server.bindAsync(`127.0.0.1:${port}`, ServerCredentials.createInsecure(), (error) =>
        error ? reject(error) : resolve(),
      ),
    );
    const Client = makeGenericClientConstructor(service, 'TestService');
    client = new Client(`127.0.0.1:${port}`, credentials.createInsecure());
  });

  afterAll(async () => {
    client?.close();
    await new Promise<void>((resolve) => server?.tryShutdown(() => resolve()));
  });

  it('counts a call that ran past its deadline as DEADLINE_EXCEEDED, with its time (the BackendFailing alert names it)', async () => {
    const failure = await new Promise<{ code?: number }>((resolve) =>
      (client as unknown as Record<string, (...args: unknown[]) => void>).Slow(
        Buffer.alloc(0),
        new Metadata(),
        { deadline: Date.now() + 100 },
        (error: { code?: number }) => resolve(error),
      ),
    );
    expect(failure.code).toBe(4);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const handled = await registry.getSingleMetric('grpc_server_handled_total')!.get();
    expect(handled.values).toEqual([
      expect.objectContaining({
        labels: { grpc_service: 'test.v1.TestService', grpc_method: 'Slow', grpc_code: 'DEADLINE_EXCEEDED' },
        value: 1,
      }),
    ]);
    // Its time is in the histogram too (GrpcMethodSlow), not just the calls that were answered in time.
    expect(await registry.metrics()).toMatch(/^grpc_server_handling_seconds_count\{[^}]*grpc_method="Slow"[^}]*\} 1$/m);
    const inFlight = await registry.getSingleMetric('grpc_server_in_flight')!.get();
    expect(inFlight.values[0]?.value).toBe(0);
  });

  it('counts a call its caller cancelled long before the deadline as CANCELLED', async () => {
    registry.resetMetrics();
    const call = (client as unknown as Record<string, (...args: unknown[]) => { cancel(): void }>).Slow(
      Buffer.alloc(0),
      new Metadata(),
      { deadline: Date.now() + 10_000 },
      () => undefined,
    );
    setTimeout(() => call.cancel(), 50);
    await new Promise((resolve) => setTimeout(resolve, 600));
    const handled = await registry.getSingleMetric('grpc_server_handled_total')!.get();
    expect(handled.values).toEqual([
      expect.objectContaining({ labels: expect.objectContaining({ grpc_code: 'CANCELLED' }), value: 1 }),
    ]);
  });
});
