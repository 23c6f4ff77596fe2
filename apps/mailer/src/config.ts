import {
  commonEnv,
  loadConfig,
  millis,
  natsUrl,
  objectStorageEnv,
  perDeployment,
  port,
  urlWithScheme,
} from '@acct/config';
import addressparser from 'nodemailer/lib/addressparser';
import { z } from 'zod';

/**
 * One mailbox with an address, as nodemailer (which sends with it) reads the value: `name@domain`,
 * or a display name and the address in `<>`.
 */
const isOneMailbox = (value: string) => {
  const mailboxes = addressparser(value, { flatten: true });
  return mailboxes.length === 1 && /^[^\s@]+@[^\s@]+$/.test(mailboxes[0].address);
};

export const mailerEnv = {
  ...commonEnv,
  ...natsUrl,
  ...objectStorageEnv,
  MAILER_OPS_PORT: port(9084),
  /** The default is the local mail catcher (tools/dev-servers/smtp-catcher.mjs). */
  SMTP_URL: perDeployment(urlWithScheme(['smtp', 'smtps'], 'smtp://127.0.0.1:1025')),
  /** The sender: its address is also the envelope's (MAIL FROM), so it must have one. */
  MAIL_FROM: perDeployment(
    z.string().default('Account Platform <no-reply@account-platform.local>').refine(isOneMailbox, {
      message: 'must be one mailbox: name@domain, or Name <name@domain>',
    }),
  ),
  /** The gateway's public address: the links in the mail point there. */
  PUBLIC_URL: perDeployment(urlWithScheme(['http', 'https'], 'http://127.0.0.1:8080')),
  /** Retries of mail the SMTP server refused for now (docs/events.md, "The mailer"). */
  MAIL_RETRY_BASE_MS: millis(1000),
  MAIL_RETRY_MAX_MS: millis(60_000),
  MAIL_MAX_AGE_MS: millis(24 * 3600 * 1000),
};

export type MailerConfig = ReturnType<typeof loadMailerConfig>;
export const loadMailerConfig = (env: NodeJS.ProcessEnv = process.env) => loadConfig(mailerEnv, env);
export const MAILER_CONFIG = Symbol('MAILER_CONFIG');
/** The process's pino logger: mail log lines carry the event and request ids as fields. */
export const MAILER_LOGGER = Symbol('MAILER_LOGGER');
