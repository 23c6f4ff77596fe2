// The documentation: every relative link in the README and docs resolves inside the repository.
module.exports = { ...require('../../jest.preset.cjs'), displayName: 'docs', rootDir: __dirname };
