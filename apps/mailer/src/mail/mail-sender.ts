import nodemailer, { Transporter } from 'nodemailer';

import { RenderedMail } from './templates';

export interface OutgoingMail extends RenderedMail {
  to: string;
  /** Stable per event, so a receiving server can recognise a resend. */
  messageId: string;
}

/** The archived version of a mail: its content with the secrets left out, and headers that say so. */
export interface ArchivedContent extends RenderedMail {
  headers: Record<string, string>;
}

/** RFC 5321 §4.5.3.2.6: how long a client waits for the reply to the end of the data. */
const SMTP_REPLY_TIMEOUT_MS = 10 * 60_000;

/**
 * Builds the raw RFC 5322 message, sends exactly those bytes over SMTP, and returns the copy to
 * archive: the same message (sender, recipient, date, Message-ID) built from the archived content.
 */
export class MailSender {
  private readonly smtp: Transporter;
  private readonly builder = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });

  constructor(
    smtpUrl: string,
    private readonly from: string,
  ) {
    const url = new URL(smtpUrl);
    this.smtp = nodemailer.createTransport({
      // An IPv6 address without the brackets a URL writes it in (`smtp://[::1]:25`), which no lookup finds.
      host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: Number(url.port) || (url.protocol === 'smtps:' ? 465 : 587),
      secure: url.protocol === 'smtps:',
      auth: url.username
        ? { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) }
        : undefined,
      // A server that is not there, or does not greet, is found out at once; one in a session is given
      // the time RFC 5321 §4.5.3.2 gives it, 10 minutes at most for the reply to the data: a relay still
      // checking a message it took (content filters take seconds) would otherwise deliver it and have it
      // sent again, every retry another copy.
      connectionTimeout: 5000,
      greetingTimeout: 5000,
      socketTimeout: SMTP_REPLY_TIMEOUT_MS,
    });
  }

  async send(mail: OutgoingMail, archived: ArchivedContent): Promise<Buffer> {
    const date = new Date();
    const raw = await this.build(mail, date);
    const copy = await this.build({ ...mail, ...archived }, date, archived.headers);
    await this.smtp.sendMail({ envelope: { from: this.from, to: [mail.to] }, raw });
    return copy;
  }

  /** The raw message, without sending it. */
  async build(mail: OutgoingMail, date: Date, headers: Record<string, string> = {}): Promise<Buffer> {
    const built = (await this.builder.sendMail({
      from: this.from,
      to: mail.to,
      subject: mail.subject,
      text: mail.text,
      html: mail.html,
      messageId: mail.messageId,
      date,
      headers,
    })) as unknown as { message: Buffer };
    return built.message;
  }

  close() {
    this.smtp.close();
  }
}
