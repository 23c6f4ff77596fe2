// Runs a TypeScript entry point straight from source (SWC, decorator metadata, workspace aliases):
// `node -r ./tools/run-ts.cjs apps/platform/src/main.ts`. Builds for production use `npm run build`.
const Module = require('node:module');

const aliases = require('./workspace-aliases.cjs');
const resolve = Module._resolveFilename;
Module._resolveFilename = function resolveAlias(request, ...rest) {
  return resolve.call(this, aliases.get(request) ?? request, ...rest);
};

const { transformSync } = require('@swc/core');
const swcrc = require('../.swcrc.json.cjs');
require.extensions['.ts'] = function compile(module, filename) {
  const source = require('node:fs').readFileSync(filename, 'utf8');
  const { code } = transformSync(source, { ...swcrc, filename, sourceMaps: 'inline' });
  module._compile(code, filename);
};
