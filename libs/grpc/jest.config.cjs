module.exports = { ...require('../../jest.preset.cjs'), displayName: 'grpc', rootDir: __dirname };
