// The whole suite: every project that has a jest.config.cjs. The acceptance suite (e2e/) is not
// among them: it starts the whole stack once in its global setup and runs alone (tools/test.mjs).
module.exports = {
  projects: [
    '<rootDir>/libs/*/jest.config.cjs',
    '<rootDir>/apps/*/jest.config.cjs',
    '<rootDir>/tests/*/jest.config.cjs',
  ],
};
