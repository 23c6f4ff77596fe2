module.exports = { ...require('../../jest.preset.cjs'), displayName: 'access-token', rootDir: __dirname };
