import { ConfigError } from '@acct/config';

import { loadMailerConfig } from './config';

describe('mailer configuration', () => {
  it.each([
    'Account Platform <no-reply@account-platform.local>',
    'no-reply@example.com',
    '"Example, Inc." <no-reply@example.com>',
  ])('takes MAIL_FROM %j, one address with or without a name', (value) => {
    expect(loadMailerConfig({ MAIL_FROM: value }).MAIL_FROM).toBe(value);
  });

  // Each of these started the mailer, which then sent every mail with an empty envelope sender
  // (MAIL FROM:<>) and a From header without an address, for the relay to refuse.
  it.each(['Account Platform', 'no-reply', 'Accounts <no-reply>', 'a@example.com, b@example.com'])(
    'refuses MAIL_FROM %j at start-up, naming the variable',
    (value) => {
      const attempt = () => loadMailerConfig({ MAIL_FROM: value });
      expect(attempt).toThrow(ConfigError);
      expect(attempt).toThrow(/MAIL_FROM: /);
    },
  );
});
