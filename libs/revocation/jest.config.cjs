module.exports = { ...require('../../jest.preset.cjs'), displayName: 'revocation', rootDir: __dirname };
