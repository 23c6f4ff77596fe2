// `npm run up` end to end: tools/up.mjs as a child process, on spare ports with its own databases.
module.exports = {
  ...require('../../jest.preset.cjs'),
  displayName: 'quick-start',
  rootDir: __dirname,
  testTimeout: 240000,
};
