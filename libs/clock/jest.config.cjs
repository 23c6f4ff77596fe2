module.exports = { ...require('../../jest.preset.cjs'), displayName: 'clock', rootDir: __dirname };
