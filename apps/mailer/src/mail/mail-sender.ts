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
      host: url.hostname,
      port: Number(url.port) || (url.protocol === 'smtps:' ? 465 : 587),
      secure: url.protocol === 'smtps:',
      auth: url.username
        ? { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) }
        : undefined,
      connectionTimeout: 5000,
      greetingTimeout: 5000,
      socketTimeout: 10_000,
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
