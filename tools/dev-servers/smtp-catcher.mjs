#!/usr/bin/env node
// A local SMTP server for development that delivers nothing: every message is kept as an .eml file
// and logged as `mail to <recipients>: <subject>`. Any login (or none) is accepted; no TLS.
// `npm run up` starts it when SMTP_URL is not set; it also runs alone:
//
//   node tools/dev-servers/smtp-catcher.mjs        # smtp://127.0.0.1:1025
//
// Port: LOCAL_SMTP_PORT, else the port of SMTP_URL when set, else 1025. Messages:
// <LOCAL_DATA_DIR>/mail/*.eml (default .data/mail, git-ignored).
import fs from 'node:fs';
import path from 'node:path';

import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

import { announceReady, dataDir, fail, localPort, logger, shortPath, stopOn } from './dev-server.mjs';

const log = logger('smtp');
const portVariable = 'LOCAL_SMTP_PORT';
let port;
try {
  port = localPort(portVariable, 'SMTP_URL', 1025);
} catch (error) {
  fail(log, error, { port, portVariable });
}
const directory = dataDir('mail');
fs.mkdirSync(directory, { recursive: true });

async function keep(raw, session) {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const file = path.join(directory, `${stamp}-${session.id}.eml`);
  fs.writeFileSync(file, raw);
  let subject = '(no subject)';
  try {
    subject = (await simpleParser(raw)).subject || subject;
  } catch {
    // kept as received; the summary goes without a subject
  }
  const recipients = session.envelope.rcptTo.map((recipient) => recipient.address).join(', ');
  log(`mail to ${recipients}: ${subject}`, { file: shortPath(file) });
  return path.basename(file);
}

const server = new SMTPServer({
  banner: 'account-platform local mail catcher',
  authOptional: true,
  allowInsecureAuth: true,
  disabledCommands: ['STARTTLS'],
  logger: false,
  closeTimeout: 2000,
  onAuth(auth, _session, callback) {
    callback(null, { user: auth.username || 'anyone' });
  },
  onData(stream, session, callback) {
    const chunks = [];
    stream.on('data', (chunk) => chunks.push(chunk));
    stream.on('error', callback);
    stream.on('end', () => {
      keep(Buffer.concat(chunks), session).then(
        (name) => callback(null, `kept as ${name}`),
        (error) => callback(error),
      );
    });
  },
});

let listening = false;
server.on('error', (error) => {
  if (!listening) fail(log, error, { port, portVariable });
  else log(`connection error: ${error.message}`, {}, 'warn');
});
server.listen(port, '127.0.0.1', () => {
  listening = true;
  const url = `smtp://127.0.0.1:${port}`;
  log(`mail catcher on ${url}, messages in ${shortPath(directory)}`);
  announceReady({ url });
  stopOn(() => new Promise((resolve) => server.close(resolve)), log);
});
