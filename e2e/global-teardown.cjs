// Stops what the global setup started (same process: jest runs both).
require('../tools/run-ts.cjs');
module.exports = require('./support/stack.ts').stopStack;
