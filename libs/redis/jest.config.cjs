module.exports = { ...require('../../jest.preset.cjs'), displayName: 'redis', rootDir: __dirname };
