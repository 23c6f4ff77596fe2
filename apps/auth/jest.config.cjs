// Unit specs and integration specs against the real Postgres (a fresh database per spec file).
module.exports = { ...require('../../jest.preset.cjs'), displayName: 'auth', rootDir: __dirname, testTimeout: 30_000 };
