import { ConfigError } from '@acct/config';

import { loadGatewayConfig } from './config';

const problemsOf = (env: NodeJS.ProcessEnv): string[] => {
  try {
    loadGatewayConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
};

describe('gateway configuration', () => {
  it.each(['', '127.0.0.1', '10.0.0.0/8, 192.168.1.1', 'loopback,uniquelocal', '::1,fd00::/8'])(
    'takes TRUSTED_PROXIES %j',
    (value) => {
      expect(loadGatewayConfig({ TRUSTED_PROXIES: value }).TRUSTED_PROXIES).toBe(value);
    },
  );

  it.each(['10.0.0.0/33', 'ingress.internal', '10.0.0.1,not-an-address', '300.1.1.1'])(
    'refuses TRUSTED_PROXIES %j at start-up, naming the variable (not a stack trace of the HTTP server)',
    (value) => {
      const problems = problemsOf({ TRUSTED_PROXIES: value });
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(/^TRUSTED_PROXIES: /);
    },
  );
});
