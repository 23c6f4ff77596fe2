// Runs a TypeScript entry point straight from source (SWC, decorator metadata, workspace aliases):
// `node -r ./tools/run-ts.cjs apps/platform/src/main.ts`. Builds for production use `npm run build`.
const path = require('node:path');
const Module = require('node:module');

const root = path.resolve(__dirname, '..');
const libs = new Set([
  'contracts',
  'config',
  'problem',
  'observability',
  'grpc',
  'testing',
  'database',
  'access-token',
  'limits',
  'events',
  'clock',
  'revocation',
]);
const resolve = Module._resolveFilename;
Module._resolveFilename = function resolveAlias(request, ...rest) {
  const match = /^@acct\/([\w-]+)$/.exec(request);
  if (match && libs.has(match[1])) request = path.join(root, 'libs', match[1], 'src', 'index.ts');
  return resolve.call(this, request, ...rest);
};

const { transformSync } = require('@swc/core');
const swcrc = require('../.swcrc.json.cjs');
require.extensions['.ts'] = function compile(module, filename) {
  const source = require('node:fs').readFileSync(filename, 'utf8');
  const { code } = transformSync(source, { ...swcrc, filename, sourceMaps: 'inline' });
  module._compile(code, filename);
};
