// Jest applies neither its transform's module aliases nor TypeScript to a global setup: load it
// through the same runner the processes use.
require('../../tools/run-ts.cjs');
module.exports = require('./migrate-templates.ts').default;
