// The workspace's library aliases (`@acct/clock` → the absolute path of libs/clock/src/index.ts), read
// from .swcrc's paths (the build's), so jest and the CLI runner resolve what the build resolves.
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const { paths } = JSON.parse(fs.readFileSync(path.join(root, '.swcrc'), 'utf8')).jsc;

module.exports = new Map(Object.entries(paths).map(([alias, [target]]) => [alias, path.join(root, target)]));
