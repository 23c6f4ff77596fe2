module.exports = { ...require('../../jest.preset.cjs'), displayName: 'limits', rootDir: __dirname };
