import { randomBytes } from 'node:crypto';

import { freePort, secretTracesIn, SmtpCatcher } from '@acct/testing';
import { simpleParser } from 'mailparser';

import { classifyFailure } from './delivery-policy';
import { MailSender } from './mail-sender';
import { REDACTED_TOKEN_HEADER, renderWithArchivedCopy, tokenDigest } from './redaction';

const linkFor = (token: string) => `https://accounts.example.test/activate?token=${encodeURIComponent(token)}`;

/** Against a real SMTP server (smtp-server): what nodemailer's failures are classified as, and what is archived. */
describe('MailSender', () => {
  let smtp: SmtpCatcher;
  let sender: MailSender;
  let sequence = 0;
  const address = (label: string) => `${label}-${(sequence += 1)}@sender.test`;
  const send = (to: string, token = randomBytes(32).toString('base64url')) => {
    const { mail, archived } = renderWithArchivedCopy('activation', 'en', 'Ada', token, linkFor);
    return sender.send({ to, messageId: `<${to}@account-platform>`, ...mail }, archived);
  };
  const failureOf = (promise: Promise<unknown>) =>
    promise.then(
      () => {
        throw new Error('sent');
      },
      (error: unknown) => classifyFailure(error),
    );

  beforeAll(async () => {
    smtp = await SmtpCatcher.start();
    sender = new MailSender(smtp.url, 'Account Platform <no-reply@sender.test>');
  });

  afterAll(async () => {
    sender?.close();
    await smtp?.close();
  });

  it('classifies a permanent refusal as permanent, with its reply code', async () => {
    const to = address('gone');
    smtp.refuse(to, 'permanent');
    expect(await failureOf(send(to))).toMatchObject({ permanent: true, smtpCode: 550, code: 'EENVELOPE' });
    expect(smtp.to(to)).toHaveLength(0);
  });

  it('classifies a temporary refusal and a dropped connection as transient; the next attempt goes through', async () => {
    const busy = address('busy');
    smtp.refuse(busy, 'temporary', 1);
    expect(await failureOf(send(busy))).toMatchObject({ permanent: false, smtpCode: 451 });
    await send(busy);
    expect(smtp.to(busy)).toHaveLength(1);

    const cut = address('cut');
    smtp.refuse(cut, 'drop', 1);
    const dropped = await failureOf(send(cut));
    expect(dropped.permanent).toBe(false);
    expect(dropped.smtpCode).toBeUndefined();
    await send(cut);
    expect(smtp.to(cut)).toHaveLength(1);
    expect(smtp.attemptsTo(cut).map((attempt) => attempt.answer)).toEqual(['drop', 'accepted']);
  });

  it('classifies a server that does not answer at all as transient', async () => {
    const nobody = new MailSender(`smtp://127.0.0.1:${await freePort()}`, 'no-reply@sender.test');
    expect(
      await failureOf(
        nobody.send(
          { to: 'x@sender.test', messageId: '<x@y>', subject: 's', text: 't', html: 'h' },
          { subject: 's', text: 't', html: 'h', headers: {} },
        ),
      ),
    ).toMatchObject({ permanent: false });
    nobody.close();
  });

  it('reaches an SMTP server named by its IPv6 address (`smtp://[::1]:port`)', async () => {
    const v6 = await SmtpCatcher.start('::1');
    const v6Sender = new MailSender(v6.url, 'no-reply@sender.test');
    try {
      const to = address('ipv6');
      const { mail, archived } = renderWithArchivedCopy('activation', 'en', 'Ada', 'token', linkFor);
      await v6Sender.send({ to, messageId: `<${to}@account-platform>`, ...mail }, archived);
      expect(v6.to(to)).toHaveLength(1);
    } finally {
      v6Sender.close();
      await v6.close();
    }
  });

  it.each([
    ['a token as identity issues them', randomBytes(32).toString('base64url')],
    ['a long one (quoted-printable wraps its link)', randomBytes(96).toString('base64url')],
    [
      'one with characters HTML and URLs escape',
      `${randomBytes(8).toString('hex')}&<>"'=+/%?#${randomBytes(8).toString('hex')}`,
    ],
  ])('archives a copy without %s, in any form; the mail itself carries it', async (_name, token) => {
    const to = address('archive');
    const archived = await send(to, token);
    expect(await secretTracesIn(archived, token)).toEqual([]);
    const copy = await simpleParser(archived);
    expect(copy.headers.get(REDACTED_TOKEN_HEADER.toLowerCase())).toBe(tokenDigest(token));
    expect(copy.messageId).toBe(`<${to}@account-platform>`);
    expect(copy.text).toContain(linkFor('REDACTED'));
    // The same check finds the token in the message that was sent.
    const { mail } = renderWithArchivedCopy('activation', 'en', 'Ada', token, linkFor);
    const sent = await sender.build({ to, messageId: '<m@x>', ...mail }, new Date());
    expect(await secretTracesIn(sent, token)).not.toEqual([]);
    expect(smtp.to(to)[0].text).toContain(linkFor(token));
  });
});
