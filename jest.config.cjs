// The whole suite: every project that has a jest.config.cjs. The acceptance suite (e2e/) is not
// among them: it starts the whole stack once in its global setup and runs alone (tools/test.mjs).
module.exports = {
  // Jest reads testTimeout from the root config only when it runs several projects: without it every
  // hook of an integration spec has 5 s, which a busy machine's database set-up can exceed.
  testTimeout: 30_000,
  projects: [
    '<rootDir>/libs/*/jest.config.cjs',
    '<rootDir>/apps/*/jest.config.cjs',
    '<rootDir>/tests/*/jest.config.cjs',
  ],
};
