// Shared jest settings: TypeScript through SWC (decorator metadata on), workspace path aliases.
const swcrc = require('./.swcrc.json.cjs');

const aliases = Object.fromEntries(
  [...require('./tools/workspace-aliases.cjs')].map(([alias, target]) => [`^${alias}$`, target]),
);

module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['@swc/jest', swcrc] },
  moduleNameMapper: aliases,
  moduleFileExtensions: ['ts', 'js', 'json'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
};
