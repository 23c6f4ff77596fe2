import { z } from 'zod';

import { commonEnv, databaseUrl, grpcAddresses, perDeployment, port, tokenEnv } from './common-env';
import { ConfigError, loadConfig } from './load-config';

const problemsOf = (attempt: () => unknown): string[] => {
  try {
    attempt();
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
};

describe('loadConfig with NODE_ENV=production', () => {
  const shape = {
    ...commonEnv,
    ...grpcAddresses,
    ...tokenEnv,
    DATABASE_URL: databaseUrl('identity'),
    MAIL_FROM: perDeployment(z.string().min(3).default('dev <dev@localhost>')),
    OPS_PORT: port(9081),
  };
  const perDeploymentKeys = [
    'REGION',
    'BIND_HOST',
    'IDENTITY_GRPC_ADDR',
    'AUTH_GRPC_ADDR',
    'PLATFORM_GRPC_ADDR',
    'TOKEN_ISSUER',
    'DATABASE_URL',
    'MAIL_FROM',
  ];
  const production = {
    NODE_ENV: 'production',
    REGION: 'eu-west-1',
    BIND_HOST: '0.0.0.0',
    IDENTITY_GRPC_ADDR: 'identity:50051',
    AUTH_GRPC_ADDR: 'auth:50052',
    PLATFORM_GRPC_ADDR: 'platform:50053',
    TOKEN_ISSUER: 'https://accounts.example.com',
    DATABASE_URL: 'postgresql://app:secret@db.example:5432/identity',
    MAIL_FROM: 'Accounts <no-reply@example.com>',
  };

  it('names every per-deployment variable that is missing, all at once', () => {
    const problems = problemsOf(() => loadConfig(shape, { NODE_ENV: 'production' }));
    expect(problems.map((problem) => problem.split(':')[0]).sort()).toEqual([...perDeploymentKeys].sort());
    expect(problems.every((problem) => problem.includes('must be set when NODE_ENV=production'))).toBe(true);
  });

  it('names the missing variables and the invalid ones in one error', () => {
    const { DATABASE_URL: _unset, ...rest } = production;
    const problems = problemsOf(() => loadConfig(shape, { ...rest, TOKEN_ISSUER: ' ', OPS_PORT: '70000' }));
    expect(problems.map((problem) => problem.split(':')[0]).sort()).toEqual([
      'DATABASE_URL',
      'OPS_PORT',
      'TOKEN_ISSUER',
    ]);
  });

  it('starts when every per-deployment variable is set, with the defaults of the others', () => {
    const config = loadConfig(shape, production);
    expect(config).toMatchObject({
      ...production,
      OPS_PORT: 9081,
      TOKEN_AUDIENCE: 'account-platform',
      LOG_LEVEL: 'info',
    });
  });

  it.each(['development', 'test', undefined])('keeps the developer defaults with NODE_ENV=%s', (nodeEnv) => {
    const config = loadConfig(shape, nodeEnv ? { NODE_ENV: nodeEnv } : {});
    expect(config.DATABASE_URL).toBe('postgresql://postgres@127.0.0.1:5432/identity');
    expect(config.IDENTITY_GRPC_ADDR).toBe('127.0.0.1:50051');
  });
});
