// The whole suite: every project that has a jest.config.cjs.
module.exports = {
  projects: [
    '<rootDir>/libs/*/jest.config.cjs',
    '<rootDir>/apps/*/jest.config.cjs',
    '<rootDir>/tests/*/jest.config.cjs',
  ],
};
