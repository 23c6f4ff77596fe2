import { ConfigError } from '@acct/config';

import { loadIdentityConfig } from './config';

describe('identity configuration', () => {
  it('refuses less argon2 memory than its lanes need, naming the variable', () => {
    const load = () => loadIdentityConfig({ ARGON2_MEMORY_KIB: '16', ARGON2_PARALLELISM: '4' });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(/ARGON2_MEMORY_KIB: must be at least 8 × ARGON2_PARALLELISM \(32\)/);
    expect(loadIdentityConfig({ ARGON2_MEMORY_KIB: '32', ARGON2_PARALLELISM: '4' })).toMatchObject({
      ARGON2_MEMORY_KIB: 32,
      ARGON2_PARALLELISM: 4,
    });
  });

  it('refuses in production less argon2 work than the weakest of OWASP’s settings, and allows it in tests', () => {
    const cheap = { ARGON2_MEMORY_KIB: '1024', ARGON2_ITERATIONS: '2' };
    const production = (env: NodeJS.ProcessEnv) =>
      loadIdentityConfig({ ...env, ...requiredInProduction(), NODE_ENV: 'production' });
    expect(() => production(cheap)).toThrow(/ARGON2_MEMORY_KIB × ARGON2_ITERATIONS: must be at least 35840/);
    expect(production({ ARGON2_MEMORY_KIB: '7168', ARGON2_ITERATIONS: '5' })).toMatchObject({ ARGON2_ITERATIONS: 5 });
    expect(production({})).toMatchObject({ ARGON2_MEMORY_KIB: 19_456, ARGON2_ITERATIONS: 2 });
    expect(loadIdentityConfig({ ...cheap, NODE_ENV: 'test' })).toMatchObject({ ARGON2_MEMORY_KIB: 1024 });
  });
});

/** What identity must be told in production (`perDeployment`), so that only argon2 is judged. */
function requiredInProduction(): NodeJS.ProcessEnv {
  return {
    REGION: 'eu-1',
    BIND_HOST: '0.0.0.0',
    IDENTITY_GRPC_ADDR: 'identity:50051',
    AUTH_GRPC_ADDR: 'auth:50052',
    PLATFORM_GRPC_ADDR: 'platform:50053',
    TOKEN_ISSUER: 'https://accounts.example.com',
    REDIS_URL: 'redis://redis:6379',
    NATS_URL: 'nats://nats:4222',
    IDENTITY_DATABASE_URL: 'postgresql://identity@db:5432/identity',
  };
}
