// The baseline: a bare Fastify handler, no framework, no middleware, no backends. Port from argv.
import Fastify from 'fastify';

const port = Number(process.argv[2]);
const app = Fastify({ logger: false });
app.get('/', async () => ({ ok: true }));
await app.listen({ port, host: '127.0.0.1' });

for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, () => {
    app.close().finally(() => process.exit(0));
  });
}
