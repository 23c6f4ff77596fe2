import nodemailer, { Transporter } from 'nodemailer';

import { RenderedMail } from './templates';

export interface OutgoingMail extends RenderedMail {
  to: string;
  /** Stable per event, so a receiving server can recognise a resend. */
  messageId: string;
}

/** Builds the raw RFC 5322 message once, sends exactly those bytes over SMTP and returns them. */
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

  async send(mail: OutgoingMail): Promise<Buffer> {
    const built = (await this.builder.sendMail({
      from: this.from,
      to: mail.to,
      subject: mail.subject,
      text: mail.text,
      html: mail.html,
      messageId: mail.messageId,
    })) as unknown as { message: Buffer };
    await this.smtp.sendMail({ envelope: { from: this.from, to: [mail.to] }, raw: built.message });
    return built.message;
  }

  close() {
    this.smtp.close();
  }
}
