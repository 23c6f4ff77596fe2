import { commonEnv, loadConfig, natsUrl, objectStorageEnv, port, urlWithScheme } from '@acct/config';
import { z } from 'zod';

export const mailerEnv = {
  ...commonEnv,
  ...natsUrl,
  ...objectStorageEnv,
  MAILER_OPS_PORT: port(9084),
  SMTP_URL: urlWithScheme(['smtp', 'smtps'], 'smtp://127.0.0.1:1025'),
  MAIL_FROM: z.string().min(3).default('Account Platform <no-reply@account-platform.local>'),
  PUBLIC_URL: urlWithScheme(['http', 'https'], 'http://127.0.0.1:8080'),
};

export type MailerConfig = ReturnType<typeof loadMailerConfig>;
export const loadMailerConfig = (env: NodeJS.ProcessEnv = process.env) => loadConfig(mailerEnv, env);
export const MAILER_CONFIG = Symbol('MAILER_CONFIG');
