import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

import { freePort } from './ports';

export interface CaughtMail {
  to: string;
  subject: string;
  text: string;
  html: string;
  messageId: string;
  /** When the server accepted it (ms since the epoch). */
  receivedAt: number;
}

/** A real SMTP server (the `smtp-server` package) on a spare port that keeps what it receives. */
export class SmtpCatcher {
  private constructor(
    readonly port: number,
    private readonly server: SMTPServer,
    readonly messages: CaughtMail[],
  ) {}

  static async start(): Promise<SmtpCatcher> {
    const port = await freePort();
    const messages: CaughtMail[] = [];
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData(stream, _session, callback) {
        simpleParser(stream)
          .then((parsed) => {
            const to = Array.isArray(parsed.to) ? parsed.to[0] : parsed.to;
            messages.push({
              to: to?.value[0]?.address ?? '',
              subject: parsed.subject ?? '',
              text: parsed.text ?? '',
              html: typeof parsed.html === 'string' ? parsed.html : '',
              messageId: parsed.messageId ?? '',
              receivedAt: Date.now(),
            });
            callback();
          })
          .catch((error: Error) => callback(error));
      },
    });
    const catcher = new SmtpCatcher(port, server, messages);
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    return catcher;
  }

  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  to(address: string): CaughtMail[] {
    return this.messages.filter((message) => message.to.toLowerCase() === address.toLowerCase());
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
