// The passthrough floor: the least any request that must reach a service can cost. Two processes:
//   node bench/passthrough.mjs grpc <port>             a trivial grpc-js server: Health/Check → SERVING
//   node bench/passthrough.mjs http <port> <grpcPort>  bare Fastify: GET / → one grpc-js unary call → JSON
// The same libraries and loader settings as the services (grpc-js, proto-loader, protobufjs), one
// channel, no framework, no middleware, no database.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { credentials, loadPackageDefinition, Server, ServerCredentials } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import Fastify from 'fastify';

const [mode, portArgument, grpcPortArgument] = process.argv.slice(2);
const port = Number(portArgument);
const protoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'proto');
const definition = loadSync(path.join(protoRoot, 'grpc/health/v1/health.proto'), {
  keepCase: false,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
  includeDirs: [protoRoot],
});
const { Health } = loadPackageDefinition(definition).grpc.health.v1;

let close;
if (mode === 'grpc') {
  const server = new Server();
  server.addService(Health.service, {
    check: (_call, callback) => callback(null, { status: 'SERVING' }),
    watch: (call) => call.end(),
  });
  await new Promise((resolve, reject) =>
    server.bindAsync(`127.0.0.1:${port}`, ServerCredentials.createInsecure(), (error) =>
      error ? reject(error) : resolve(),
    ),
  );
  close = () => new Promise((resolve) => server.tryShutdown(resolve));
} else if (mode === 'http') {
  const client = new Health(`127.0.0.1:${Number(grpcPortArgument)}`, credentials.createInsecure());
  const check = () =>
    new Promise((resolve, reject) =>
      client.check({ service: '' }, { deadline: Date.now() + 5000 }, (error, response) =>
        error ? reject(error) : resolve(response),
      ),
    );
  const app = Fastify({ logger: false });
  app.get('/', async () => {
    const { status } = await check();
    return { status };
  });
  await app.listen({ port, host: '127.0.0.1' });
  close = async () => {
    await app.close();
    client.close();
  };
} else {
  console.error('usage: node bench/passthrough.mjs grpc <port> | http <port> <grpcPort>');
  process.exit(2);
}

for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, () => {
    close().finally(() => process.exit(0));
  });
}
