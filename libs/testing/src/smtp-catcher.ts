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

/**
 * How the catcher answers a recipient it was told to refuse: `permanent` is `550 5.1.1` (no such
 * mailbox), `temporary` is `451 4.2.1` (try again later), `drop` closes the connection without a reply.
 */
export type SmtpRefusal = 'permanent' | 'temporary' | 'drop';

/** One attempt to deliver to a recipient (its `RCPT TO`) and how the catcher answered it. */
export interface SmtpAttempt {
  to: string;
  /** When the catcher answered (ms since the epoch). */
  at: number;
  answer: 'accepted' | SmtpRefusal;
}

/** A real SMTP server (the `smtp-server` package) on a spare port that keeps what it receives. */
export class SmtpCatcher {
  private constructor(
    readonly port: number,
    private readonly server: SMTPServer,
    readonly messages: CaughtMail[],
    /** Every `RCPT TO` seen, in order, with its answer. */
    readonly attempts: SmtpAttempt[],
    private readonly refusals: Map<string, { refusal: SmtpRefusal; remaining: number }>,
    private readonly acceptance: { delayMs: number },
    /** The address it listens on (IPv4 loopback unless given). */
    readonly host: string,
  ) {}

  static async start(host = '127.0.0.1'): Promise<SmtpCatcher> {
    const port = await freePort();
    const messages: CaughtMail[] = [];
    const attempts: SmtpAttempt[] = [];
    const refusals = new Map<string, { refusal: SmtpRefusal; remaining: number }>();
    const acceptance = { delayMs: 0 };
    const answerFor = (address: string): SmtpAttempt['answer'] => {
      const rule = refusals.get(address.toLowerCase());
      if (!rule || rule.remaining <= 0) return 'accepted';
      rule.remaining -= 1;
      return rule.refusal;
    };
    const server: SMTPServer = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onRcptTo(address, session, callback) {
        const answer = answerFor(address.address);
        attempts.push({ to: address.address, at: Date.now(), answer });
        if (answer === 'accepted') return callback();
        if (answer === 'permanent')
          return callback(
            Object.assign(new Error(`5.1.1 <${address.address}>: Recipient address rejected: User unknown`), {
              responseCode: 550,
            }),
          );
        if (answer === 'temporary')
          return callback(
            Object.assign(new Error('4.2.1 Mailbox temporarily unavailable, try again later'), { responseCode: 451 }),
          );
        // drop: the connection ends without an answer, as a crashing or cut-off server's would
        [...server.connections].find((connection) => connection.session === session)?._socket.destroy();
      },
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
            // The message is kept (it will be delivered) before the client hears so, as a slow relay's is.
            setTimeout(() => callback(), acceptance.delayMs);
          })
          .catch((error: Error) => callback(error));
      },
    });
    // A client's socket error (a mailer killed or stopped mid-conversation by the fault suites resets
    // its connection) is emitted on the server; unheard, it ended the test process (read ECONNRESET).
    server.on('error', () => undefined);
    const catcher = new SmtpCatcher(port, server, messages, attempts, refusals, acceptance, host);
    await new Promise<void>((resolve) => server.listen(port, host, resolve));
    return catcher;
  }

  get url(): string {
    return `smtp://${this.host.includes(':') ? `[${this.host}]` : this.host}:${this.port}`;
  }

  /** Answers the next `times` attempts to deliver to `address` with `refusal` (all of them by default). */
  refuse(address: string, refusal: SmtpRefusal, times = Number.POSITIVE_INFINITY): void {
    this.refusals.set(address.toLowerCase(), { refusal, remaining: times });
  }

  /**
   * Keeps every message it receives from now on at once but sends its `250` only `delayMs` later (a
   * relay slow to confirm): a client that goes away meanwhile has had its mail delivered all the same.
   */
  confirmAfter(delayMs: number): void {
    this.acceptance.delayMs = delayMs;
  }

  /**
   * Answers every `MAIL FROM` of a client that did not authenticate with `530 Error: authentication
   * Required` (RFC 4954 §6), as a relay does that the mailer reaches without (or with lost) credentials,
   * until told otherwise.
   */
  requireAuthentication(required: boolean): void {
    this.server.options.authOptional = !required;
  }

  to(address: string): CaughtMail[] {
    return this.messages.filter((message) => message.to.toLowerCase() === address.toLowerCase());
  }

  attemptsTo(address: string): SmtpAttempt[] {
    return this.attempts.filter((attempt) => attempt.to.toLowerCase() === address.toLowerCase());
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
