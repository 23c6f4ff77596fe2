#!/usr/bin/env node
// A local S3-compatible object store for development (s3rver), with the bucket the apps use.
// `npm run up` starts it when S3_ENDPOINT is not set; it also runs alone:
//
//   node tools/dev-servers/object-storage.mjs       # http://127.0.0.1:9000, bucket account-platform
//
// Port: LOCAL_S3_PORT, else the port of S3_ENDPOINT when set, else 9000. Bucket: S3_BUCKET (default
// account-platform). Data: <LOCAL_DATA_DIR>/s3 (default .data/s3, git-ignored). Credentials: s3rver's
// S3RVER/S3RVER (the apps' defaults), and S3_ACCESS_KEY_ID/S3_SECRET_ACCESS_KEY too when both are set.
import fs from 'node:fs';

import S3rver from 's3rver';
import AWSAccount from 's3rver/lib/models/account.js';

import { announceReady, dataDir, ensurePortFree, fail, localPort, logger, shortPath, stopOn } from './dev-server.mjs';

const log = logger('s3');
const portVariable = 'LOCAL_S3_PORT';
let port;
try {
  port = localPort(portVariable, 'S3_ENDPOINT', 9000);
} catch (error) {
  fail(log, error, { port, portVariable });
}
const bucket = process.env.S3_BUCKET || 'account-platform';
const directory = dataDir('s3');
fs.mkdirSync(directory, { recursive: true });

const { S3_ACCESS_KEY_ID: accessKeyId, S3_SECRET_ACCESS_KEY: secretAccessKey } = process.env;
if (accessKeyId && secretAccessKey) AWSAccount.DUMMY_ACCOUNT.createKeyPair(accessKeyId, secretAccessKey);

const server = new S3rver({
  port,
  address: '127.0.0.1',
  silent: true,
  directory,
  configureBuckets: [{ name: bucket }],
});
try {
  await ensurePortFree(port);
  await server.run();
} catch (error) {
  fail(log, error, { port, portVariable });
}

const url = `http://127.0.0.1:${port}`;
log(`object storage on ${url}, bucket ${bucket}, data in ${shortPath(directory)}`);
announceReady({ url });
stopOn(() => server.close(), log);
