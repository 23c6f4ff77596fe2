module.exports = { ...require('../../jest.preset.cjs'), displayName: 'user-fields', rootDir: __dirname };
