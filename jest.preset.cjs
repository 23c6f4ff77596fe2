// Shared jest settings: TypeScript through SWC (decorator metadata on), workspace path aliases.
const path = require('node:path');
const swcrc = require('./.swcrc.json.cjs');

const root = __dirname;
const aliases = {
  '^@acct/(contracts|config|problem|observability|grpc|testing|database|access-token|limits|events|clock|revocation)$':
    path.join(root, 'libs/$1/src/index.ts'),
};

module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['@swc/jest', swcrc] },
  moduleNameMapper: aliases,
  moduleFileExtensions: ['ts', 'js', 'json'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
};
