import {
  ApiClient,
  bootstrapOrg,
  DedicatedServer,
  freshIp,
  HealthReport,
  TcpProxy,
  TestStack,
  waitFor,
} from '@acct/testing';

/**
 * A Redis failover or a network partition leaves every process's Redis connection stranded: nothing
 * answers on it and no reset comes, while a new connection reaches Redis again. Meanwhile health
 * names the cache `down` and a revocation answers 503 (README "Outages"), but every process recovers on its own:
 * a connection that answered nothing for a while is closed and another one opened. (Each command
 * timed out on the stranded connection for ever: the cache stayed `down`, every revocation 503.)
 */
describe('processes whose Redis connections are stranded', () => {
  let redis: DedicatedServer;
  let proxy: TcpProxy;
  let stack: TestStack;
  let api: ApiClient;
  let org: ReturnType<typeof bootstrapOrg>;

  beforeAll(async () => {
    redis = await DedicatedServer.redis();
    proxy = await TcpProxy.start(redis.port);
    stack = await TestStack.start({
      apps: ['identity', 'auth', 'platform', 'gateway'],
      redisUrl: `redis://127.0.0.1:${proxy.port}`,
      env: { TRUSTED_PROXIES: '127.0.0.1' },
    });
    api = new ApiClient(stack.url(''), { ip: freshIp });
    org = bootstrapOrg(stack, 'redis-stranded', 'admin@redis-stranded.test', 'admin-password-1');
  }, 180_000);

  afterAll(async () => {
    await stack?.close();
    await proxy?.cut();
    await redis?.stop();
  });

  /** What the health report says of Redis (object storage is not part of this stack). */
  const health = async () =>
    (await api.call<HealthReport>('/v2/system/health')).body.checks.find((check) => check.component === 'cache')
      ?.status;

  const client = () => ({ client_id: org.client_id, client_secret: org.client_secret ?? '' });

  /** How many of the gateway's rate-limit decisions were taken on Redis's shared buckets. */
  const sharedDecisions = async () => {
    const metrics = await (await fetch(stack.opsUrl('gateway', '/metrics'))).text();
    const counts = metrics.matchAll(/^gateway_rate_limit_decisions_total\{[^}]*source="redis"[^}]*\} (\d+)$/gm);
    return [...counts].reduce((sum, match) => sum + Number(match[1]), 0);
  };

  /** Whether the gateway's next token request is limited on Redis's shared buckets. */
  const limitedOnRedis = async () => {
    const before = await sharedDecisions();
    await api.tokenRequest({ grant_type: 'client_credentials', ...client() });
    return (await sharedDecisions()) > before;
  };

  /** A client token, then its revocation (RFC 7009): stored in Redis, or 503. */
  const revocation = async () => {
    const token = await api.tokenRequest({ grant_type: 'client_credentials', ...client() });
    if (token.status !== 200) return `token ${token.status}`;
    const revoked = await api.call('/v2/auth/revoke', { form: { token: token.body.access_token, ...client() } });
    return revoked.status === 200 ? 200 : `revoke ${revoked.status} ${revoked.text.slice(0, 100)}`;
  };

  /** Health names the cache up, a revocation is stored and the gateway limits on Redis's buckets. */
  const servedOnRedis = async () =>
    (await health()) === 'up' && (await revocation()) === 200 && (await limitedOnRedis()) ? true : undefined;

  it('reports the cache up and stores revocations again on new connections, without a restart', async () => {
    await waitFor('everything served on Redis', servedOnRedis);
    proxy.strand();
    await waitFor('Redis down', async () => ((await health()) === 'down' ? true : undefined));
    await waitFor('everything served on Redis again', servedOnRedis, { timeoutMs: 30_000, intervalMs: 500 });
  });
});
