module.exports = { ...require('../../jest.preset.cjs'), displayName: 'problem', rootDir: __dirname };
