// End-to-end tests: real processes, real Postgres, Redis, NATS and an S3-compatible store. One file at a time.
module.exports = {
  ...require('../../jest.preset.cjs'),
  displayName: 'e2e',
  rootDir: __dirname,
  globalSetup: '<rootDir>/global-setup.cjs',
  testTimeout: 120_000,
  maxWorkers: 1,
};
