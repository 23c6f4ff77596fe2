module.exports = { ...require('../../jest.preset.cjs'), displayName: 'mailer', rootDir: __dirname };
