// The architecture floors: for each scenario of the bench, the least a request of that shape can cost
// when it makes the hops this architecture requires (the gateway's rate-limit bucket, shared in Redis or
// its own in memory, a gRPC call to the service that owns the data, that service's Postgres) with the same libraries and
// nothing else: no NestJS, no Prisma, no validation, no logging, no metrics, no authentication. What a
// scenario costs above its floor is the service's own code; what the floor costs is the architecture.
// Two processes:
//   node bench/floors.mjs grpc <port>             the service: grpc-js, pg, fast-jwt (FLOOR_DATABASE_URL)
//   node bench/floors.mjs http <port> <grpcPort>  the gateway: Fastify, the gateway's own token buckets
//                                                 (FLOOR_TOKEN_BUCKETS, REDIS_URL), one grpc-js channel
// Routes of the http side, one per scenario (see bench/README.md, "The floors"):
//   GET /health                     the per-IP bucket in this process's memory, then a body from memory
//   GET /rate-limits                the per-token bucket in Redis, then a body from memory
//   GET /users-read                 the bucket, a gRPC call, one prepared SELECT by primary key
//   POST /token-client-credentials  the bucket (per IP), a gRPC call, an ES256 access token signed
//   POST /token-refresh             the bucket (per IP), a gRPC call, a one-statement rotation, a signed token
import { createHash, generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { credentials, loadPackageDefinition, Server, ServerCredentials } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import Fastify from 'fastify';
import Redis from 'ioredis';
import { createSigner } from 'fast-jwt';
import pg from 'pg';

const [mode, portArgument, grpcPortArgument] = process.argv.slice(2);
const port = Number(portArgument);
const here = path.dirname(fileURLToPath(import.meta.url));
const definition = loadSync(path.join(here, 'floors.proto'), {
  keepCase: false,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
});
const { Floor } = loadPackageDefinition(definition).bench.floors.v1;
// The services' channel settings that matter for cost (libs/grpc: channelz off).
const CHANNEL_OPTIONS = { 'grpc.enable_channelz': 0 };
const SEEDED = 1000;

/** The service side: its tables in a database of its own, seeded, then one handler per shape. */
async function service() {
  const pool = new pg.Pool({ connectionString: process.env.FLOOR_DATABASE_URL, max: 10 });
  // A throw-away database of the bench's: the tables are made anew at every start.
  await pool.query(`
    DROP TABLE IF EXISTS users, refresh_tokens;
    CREATE TABLE users (id uuid PRIMARY KEY, org_id uuid NOT NULL, email text NOT NULL,
      display_name text NOT NULL, status text NOT NULL, roles text[] NOT NULL, locale text, timezone text,
      created_at timestamptz NOT NULL DEFAULT now(), updated_at timestamptz NOT NULL DEFAULT now());
    CREATE TABLE refresh_tokens (id uuid PRIMARY KEY, token_hash bytea NOT NULL UNIQUE,
      family_id uuid NOT NULL, used_at timestamptz, created_at timestamptz NOT NULL DEFAULT now());
    CREATE INDEX refresh_tokens_family ON refresh_tokens (family_id);
    INSERT INTO users (id, org_id, email, display_name, status, roles, locale, timezone)
      SELECT gen_random_uuid(), gen_random_uuid(), 'user' || n || '@floor.test', 'User ' || n, 'active',
        '{admin}', 'en', 'UTC' FROM generate_series(1, ${SEEDED}) n;
    INSERT INTO refresh_tokens (id, token_hash, family_id)
      SELECT gen_random_uuid(), sha256(n::text::bytea), gen_random_uuid() FROM generate_series(1, ${SEEDED}) n;`);
  const userIds = (await pool.query('SELECT id FROM users')).rows.map((row) => row.id);
  const refreshHashes = (await pool.query('SELECT token_hash FROM refresh_tokens')).rows.map((row) => row.token_hash);
  const pick = (list) => list[Math.floor(Math.random() * list.length)];
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  // Signed as auth signs (apps/auth/src/keys/signing-key.service.ts): fast-jwt, on the calling thread.
  const signer = createSigner({
    key: privateKey.export({ type: 'pkcs8', format: 'pem' }),
    algorithm: 'ES256',
    kid: 'floor',
    header: { alg: 'ES256', typ: 'at+jwt' },
  });
  const sign = (subject) => {
    const now = Math.floor(Date.now() / 1000);
    return signer({
      iss: 'http://127.0.0.1',
      sub: subject,
      aud: 'account-platform',
      iat: now,
      exp: now + 7200,
      jti: randomUUID(),
      scope: 'users:read system:read',
      org_id: randomUUID(),
      client_id: 'floor',
    });
  };

  const handlers = {
    async 'users-read'() {
      const { rows } = await pool.query({
        name: 'user',
        text: 'SELECT id, org_id, email, display_name, status, roles, locale, timezone, created_at, updated_at FROM users WHERE id = $1',
        values: [pick(userIds)],
      });
      return JSON.stringify(rows[0]);
    },
    // The client is cached and the login audit written by group commit in the service: no statement here.
    async 'token-client-credentials'() {
      return JSON.stringify({ access_token: sign('floor'), token_type: 'Bearer', expires_in: 7200 });
    },
    // Mark the presented token used and store its successor in the same family: one statement.
    async 'token-refresh'() {
      const next = randomBytes(32);
      await pool.query({
        name: 'rotate',
        text: `WITH used AS (UPDATE refresh_tokens SET used_at = now() WHERE token_hash = $1 RETURNING family_id)
               INSERT INTO refresh_tokens (id, token_hash, family_id) SELECT $2, $3, family_id FROM used`,
        values: [pick(refreshHashes), randomUUID(), createHash('sha256').update(next).digest()],
      });
      const accessToken = sign(randomUUID());
      return JSON.stringify({ access_token: accessToken, refresh_token: next.toString('base64url') });
    },
  };
  const server = new Server(CHANNEL_OPTIONS);
  server.addService(Floor.service, {
    call: (call, callback) =>
      handlers[call.request.shape]().then(
        (body) => callback(null, { body }),
        (error) => callback(error),
      ),
  });
  await new Promise((resolve, reject) =>
    server.bindAsync(`127.0.0.1:${port}`, ServerCredentials.createInsecure(), (error) =>
      error ? reject(error) : resolve(),
    ),
  );
  return async () => {
    await new Promise((resolve) => server.tryShutdown(resolve));
    await pool.end();
  };
}

/** The gateway side: the gateway's own token-bucket code, in Redis or in memory, then the call, if any. */
async function gateway() {
  const require = createRequire(import.meta.url);
  const { InProcessTokenBuckets, RedisTokenBuckets } = require(process.env.FLOOR_TOKEN_BUCKETS);
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { enableAutoPipelining: true });
  const buckets = new RedisTokenBuckets(redis);
  // system.health's buckets are each gateway's own (apps/gateway/src/rate-limits/rate-limiter.ts).
  const instanceBuckets = new InProcessTokenBuckets();
  const client = new Floor(`127.0.0.1:${Number(grpcPortArgument)}`, credentials.createInsecure(), CHANNEL_OPTIONS);
  const call = (shape) =>
    new Promise((resolve, reject) =>
      client.call({ shape }, { deadline: Date.now() + 5000 }, (error, reply) =>
        error ? reject(error) : resolve(reply.body),
      ),
    );
  // Raised tiers like the bench org's, so nothing is refused: only the decision's cost is measured.
  // 100 tokens a millisecond, a capacity of 1 000 000.
  const raised = { ratePerMinute: 6_000_000, burst: 10 };
  const clientKey = (request) => `floor:ip:${request.headers['x-forwarded-for'] ?? request.ip}`;
  const perIp = (request) => buckets.take(clientKey(request), raised);
  const perToken = () => buckets.take('floor:token:bench', raised);
  // The system.health tier: 600/min, a capacity of 100 (every address of the bench is new).
  const perIpInMemory = (request) => instanceBuckets.take(clientKey(request), { ratePerMinute: 600, burst: 10 });
  const health = { status: 'healthy', version: '0.0.0', region: 'local', checks: [] };

  const app = Fastify({ logger: false });
  app.get('/health', async (request) => {
    await perIpInMemory(request);
    return health;
  });
  app.get('/rate-limits', async () => {
    await perToken();
    return { tiers: [], notice: 'floor' };
  });
  const forward = (shape) => async (request, reply) => {
    await (shape === 'users-read' ? perToken() : perIp(request));
    reply.type('application/json');
    return call(shape);
  };
  app.get('/users-read', forward('users-read'));
  app.post('/token-client-credentials', forward('token-client-credentials'));
  app.post('/token-refresh', forward('token-refresh'));
  await app.listen({ port, host: '127.0.0.1' });
  return async () => {
    await app.close();
    client.close();
    redis.disconnect();
  };
}

let close;
if (mode === 'grpc') close = await service();
else if (mode === 'http') close = await gateway();
else {
  console.error('usage: node bench/floors.mjs grpc <port> | http <port> <grpcPort>');
  process.exit(2);
}

for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, () => {
    close().finally(() => process.exit(0));
  });
}
