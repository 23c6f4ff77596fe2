// The lint rules of our own (tools/lint): each fails on what it guards against and passes on the repository.
module.exports = { ...require('../../jest.preset.cjs'), displayName: 'lint', rootDir: __dirname };
