// Jest applies neither its transform's module aliases nor TypeScript to a global setup: load it
// through the same runner the processes use. Starts the stack once for the whole suite.
require('../tools/run-ts.cjs');
module.exports = require('./support/stack.ts').startStack;
