// What the local development servers share: their port and data folder, one log line per event
// (JSON with --json, the way `npm run up` reads its processes' output), a ready message to the
// parent that started them, and a clean stop on a signal or when that parent goes away.
import net from 'node:net';
import path from 'node:path';

import { root } from '../lib.mjs';

const json = process.argv.includes('--json');

/** `log(message, fields, level)` for one service name. */
export function logger(service) {
  return (message, fields = {}, level = 'info') => {
    if (json) {
      console.log(JSON.stringify({ level, time: new Date().toISOString(), service, message, ...fields }));
      return;
    }
    const extra = Object.entries(fields).map(([key, value]) => ` ${key}=${value}`);
    (level === 'error' ? console.error : console.log)(`${service}: ${message}${extra.join('')}`);
  };
}

/**
 * The port to listen on: `portVariable` when set, else the port of the URL the apps are given
 * (`urlVariable`) when that is set, else `fallback`.
 */
export function localPort(portVariable, urlVariable, fallback) {
  const explicit = process.env[portVariable];
  if (explicit) {
    const port = Number(explicit);
    if (!Number.isInteger(port) || port < 1 || port > 65535) {
      throw Object.assign(new Error(`${portVariable} is not a port: ${explicit}`), { code: 'ECONFIG' });
    }
    return port;
  }
  const url = process.env[urlVariable];
  if (url) {
    try {
      const { port } = new URL(url);
      if (port) return Number(port);
    } catch {
      // not a URL: the default port
    }
  }
  return fallback;
}

/** `<LOCAL_DATA_DIR>/<name>`; LOCAL_DATA_DIR is `.data` of the repository unless set (relative to it). */
export const dataDir = (name) => path.resolve(root, process.env.LOCAL_DATA_DIR || '.data', name);

/** Shown relative to the repository when inside it. */
export const shortPath = (file) => {
  const relative = path.relative(root, file);
  return relative.startsWith('..') ? file : relative;
};

/** Fails with EADDRINUSE when something listens on the port already (s3rver would crash on it instead). */
export const ensurePortFree = (port) =>
  new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve()));
  });

/** Tells the parent that started this server over IPC (`npm run up`) that it is ready. */
export const announceReady = (details) => process.send?.({ ready: true, ...details });

/** Stops on SIGINT, SIGTERM or SIGHUP, or when the parent that started it goes away. */
export function stopOn(close, log) {
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    try {
      await close();
    } catch (error) {
      log(`stopping failed: ${error.message}`, {}, 'error');
    }
    log('stopped');
    process.exit(0);
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, stop);
  process.on('disconnect', stop);
}

/** Ends the server with the reason; a port in use says how to move it. */
export function fail(log, error, { port, portVariable }) {
  const reason =
    error.code === 'EADDRINUSE'
      ? `port ${port} is already in use; stop what listens there, or set ${portVariable} to a free port`
      : error.code === 'ECONFIG'
        ? error.message
        : (error.stack ?? String(error));
  log(reason, {}, 'error');
  process.exit(1);
}
