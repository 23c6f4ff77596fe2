#!/usr/bin/env node
// Readable log lines from the processes' JSON ones (pino: level, time, service, message, request_id,
// …): `HH:MM:SS gateway  INFO message key=value …`. `npm run up` renders its processes' output with
// it; it is also a filter for a process run by hand:
//
//   node dist/apps/gateway/src/main.js | node tools/log-format.mjs
//
// Colour on a terminal, unless NO_COLOR is set; FORCE_COLOR=1 forces it. Lines that are not JSON
// objects pass through behind the time and the service name.
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

/** Service names are padded to this width, so messages line up. */
export const NAME_WIDTH = 8;

const SERVICE_COLORS = {
  identity: '36',
  auth: '35',
  platform: '34',
  mailer: '33',
  gateway: '32',
  s3: '90',
  smtp: '90',
};
const LEVEL_NAMES = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };
const LEVEL_COLORS = { trace: '90', debug: '90', info: '32', warn: '33', error: '31', fatal: '1;31' };

const paint = (code, text, color) => (color && code ? `\x1b[${code}m${text}\x1b[0m` : text);

const clock = (date) =>
  [date.getHours(), date.getMinutes(), date.getSeconds()].map((part) => String(part).padStart(2, '0')).join(':');

/** A value as it reads in `key=value`: bare when it has no spaces, quotes or `=`, else JSON. */
const show = (value) => (typeof value === 'string' && /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value));

/** Colour for a stream: a terminal unless NO_COLOR; FORCE_COLOR (not 0) forces it. */
export function useColor(stream) {
  const force = process.env.FORCE_COLOR;
  if (force !== undefined && force !== '' && force !== '0') return true;
  if (process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== '') return false;
  return Boolean(stream.isTTY);
}

/** One readable line (plus indented blocks for multi-line values such as stack traces). */
export function formatLine(line, { service = '', color = false } = {}) {
  let entry;
  try {
    entry = JSON.parse(line);
  } catch {
    entry = undefined;
  }
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
    const name = paint(SERVICE_COLORS[service], service.padEnd(NAME_WIDTH), color);
    return `${paint('2', clock(new Date()), color)} ${name} ${line}`;
  }
  const { level, time, service: name = service, message, msg, ...fields } = entry;
  const label = typeof level === 'number' ? (LEVEL_NAMES[level] ?? String(level)) : String(level ?? 'info');
  const at = new Date(time ?? Date.now());
  const text = message ?? msg ?? '';
  const [firstLine, ...moreLines] = typeof text === 'string' ? text.split('\n') : [show(text)];
  const pairs = [];
  const blocks = moreLines.length > 0 ? [moreLines.join('\n').replace(/^(?=.)/gm, '    ')] : [];
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    if (typeof value === 'string' && value.includes('\n')) blocks.push(value.replace(/^(?=.)/gm, '    '));
    else pairs.push(`${paint('2', `${key}=`, color)}${show(value)}`);
  }
  const head = [
    paint('2', clock(Number.isNaN(at.getTime()) ? new Date() : at), color),
    paint(SERVICE_COLORS[name], String(name).padEnd(NAME_WIDTH), color),
    paint(LEVEL_COLORS[label], label.toUpperCase(), color),
    firstLine,
    ...pairs,
  ]
    .filter((part) => part !== '')
    .join(' ');
  return [head, ...blocks.map((block) => paint('2', block, color))].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const color = useColor(process.stdout);
  readline
    .createInterface({ input: process.stdin })
    .on('line', (line) => line.trim() && process.stdout.write(`${formatLine(line, { color })}\n`));
}
