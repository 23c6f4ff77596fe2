// .swcrc without the path rewriting (jest resolves aliases itself), shared by jest and the CLI runner.
const fs = require('node:fs');
const path = require('node:path');

const swcrc = JSON.parse(fs.readFileSync(path.join(__dirname, '.swcrc'), 'utf8'));
delete swcrc.$schema;
delete swcrc.jsc.baseUrl;
delete swcrc.jsc.paths;
module.exports = { ...swcrc, swcrc: false };
