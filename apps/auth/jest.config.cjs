// Unit specs and integration specs against the real Postgres (a fresh database per spec file).
const preset = require('../../jest.preset.cjs');
const swcrc = require('../../.swcrc.json.cjs');

// otplib's base32 and hash plugins (@scure/base, @noble/hashes) ship only as ES modules, which Node
// 20.19+ can require but jest cannot: jest compiles them to CommonJS like our own sources.
const ESM_ONLY = '@scure|@noble';

module.exports = {
  ...preset,
  displayName: 'auth',
  rootDir: __dirname,
  testTimeout: 30_000,
  transform: {
    ...preset.transform,
    [`/node_modules/(${ESM_ONLY})/.+\\.js$`]: [
      '@swc/jest',
      { ...swcrc, jsc: { ...swcrc.jsc, parser: { syntax: 'ecmascript' } } },
    ],
  },
  transformIgnorePatterns: [`/node_modules/(?!(${ESM_ONLY})/)`],
};
