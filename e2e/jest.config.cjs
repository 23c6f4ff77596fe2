// The acceptance suite: black-box, against one stack started as `npm run up` starts it (global setup),
// through HTTP, SMTP and NATS only. One file at a time: they share the stack.
module.exports = {
  ...require('../jest.preset.cjs'),
  displayName: 'acceptance',
  rootDir: __dirname,
  testMatch: ['<rootDir>/**/*.acceptance.spec.ts'],
  globalSetup: '<rootDir>/global-setup.cjs',
  globalTeardown: '<rootDir>/global-teardown.cjs',
  testTimeout: 60_000,
  maxWorkers: 1,
};
