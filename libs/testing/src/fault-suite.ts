import {
  Fault,
  FaultObservation,
  faultViolations,
  HealthStatus,
  lostOrDoubledWrites,
  recoveryTable,
  runFault,
} from './faults';
import { request } from './http';
import { SmtpCatcher } from './smtp-catcher';
import { TestStack } from './stack';
import { SteadyLoad } from './steady-load';
import { waitFor } from './wait';

export interface LoadedOrg {
  org_id: string;
  admin_user_id: string;
  client_id: string;
  client_secret: string;
}

/** One row of a fault matrix: the fault, the health it must produce, whether requests may fail meanwhile. */
export interface FaultCell {
  fault: Fault;
  health: HealthStatus;
  requestsMayFail: boolean;
}

/** How long before a mailer crash an accepted mail may still lack its archived copy (one storage write). */
const CRASH_WINDOW_MS = 2000;
/** The crash is timed as the signal is sent; the process dies a moment later. */
const SIGNAL_MARGIN_MS = 500;

/** GRPC_DEADLINE_MS (2 s) plus room for a shared 2-core machine: no request may take longer. */
export const ANSWER_DEADLINE_MS = 6000;

/**
 * What the fault suites share: one org with room to spare (rate limits and the Users quota raised,
 * so the steady load measures faults and not 429s), the steady load against the stack's gateway, a
 * probe of full recovery, and the checks after the last fault.
 */
export class FaultSuite {
  readonly observations: FaultObservation[] = [];
  private probes = 0;

  private constructor(
    private readonly stack: TestStack,
    readonly org: LoadedOrg,
    readonly load: SteadyLoad,
  ) {}

  /**
   * Bootstraps the org, waits for a healthy stack and starts the load. `direct`: run the CLI against
   * Postgres itself, not through the stack's TcpProxy (a synchronous CLI stalls an in-process proxy).
   */
  static async start(
    stack: TestStack,
    options: { org: string; domain: string; direct?: boolean },
  ): Promise<FaultSuite> {
    const cli = <T>(...args: string[]): T => (options.direct ? stack.cliDirect<T>(...args) : stack.cli<T>(...args));
    const org = cli<LoadedOrg>(
      ...['bootstrap', '--org', options.org, '--email', `admin@${options.domain}`, '--password', 'admin-pass-1'],
    );
    for (const group of ['users.write', 'users.read']) {
      cli(
        ...['set-rate-limit', '--org-id', org.org_id, '--group', group],
        ...['--rate-per-minute', '60000', '--burst', '10', '--scope', 'per-token'],
      );
    }
    cli('set-quota', '--org-id', org.org_id, '--dimension', 'api', '--name', 'Users', '--limit', '100000');
    await waitFor('a healthy stack', async () =>
      (await request<{ status: string }>(stack.url('/v2/system/health'))).body.status === 'healthy' ? true : undefined,
    );
    const load = new SteadyLoad({
      gateways: [stack.url('')],
      clientId: org.client_id,
      clientSecret: org.client_secret,
      readUserId: org.admin_user_id,
      emailDomain: options.domain,
    });
    load.start();
    await waitFor('the load under way', () =>
      load.creations.filter((creation) => creation.id).length >= 3 ? true : undefined,
    );
    return new FaultSuite(stack, org, load);
  }

  /** A token grant and an authenticated read (a fresh client address each time: the auth tier is per IP). */
  private readonly probe = async (): Promise<boolean> => {
    this.probes += 1;
    const token = await this.clientToken(`172.16.${(this.probes >> 8) & 255}.${this.probes & 255}`).catch(
      () => undefined,
    );
    if (!token) return false;
    const read = await request(this.stack.url(`/v2/users/${this.org.admin_user_id}`), { token });
    return read.status === 200;
  };

  /** Runs one cell under the load; returns its observation and the deadline/status violations seen. */
  async run({
    fault,
    health,
    requestsMayFail,
  }: FaultCell): Promise<{ observation: FaultObservation; violations: string[] }> {
    const observation = await runFault(fault, {
      gateway: this.stack.url(''),
      load: this.load,
      expectHealth: health,
      probe: this.probe,
    });
    this.observations.push(observation);
    return {
      observation,
      violations: faultViolations(observation, { deadlineMs: ANSWER_DEADLINE_MS, requestsMayFail }),
    };
  }

  /**
   * Stops the load, lets it settle and lists what was lost or doubled (see lostOrDoubledWrites). The
   * one repeat the mailer documents is allowed: a crash (`mailerCrashes`, when they happened) just
   * after the mail server accepted a message and before its archived copy was written sends that
   * message again on redelivery, with the same Message-ID.
   */
  async lostOrDoubledWrites(smtp: SmtpCatcher, mailerCrashes: readonly number[] = []): Promise<string[]> {
    await this.load.stop();
    await this.load.settle(90_000);
    const token = await this.clientToken('192.0.2.201');
    if (!token) return ['no client token after the faults'];
    const repeatExplained = (address: string) => {
      const [first, second] = smtp.to(address);
      return (
        first.messageId === second.messageId &&
        mailerCrashes.some(
          (crash) => first.receivedAt > crash - CRASH_WINDOW_MS && first.receivedAt < crash + SIGNAL_MARGIN_MS,
        )
      );
    };
    return lostOrDoubledWrites(this.load, {
      gateway: this.stack.url(''),
      token,
      mailsTo: (address) => smtp.to(address).length,
      repeatExplained,
    });
  }

  summary(label: string): string {
    return `faults (${label}): ${this.load.creations.length} users created under load, ${this.load.samples.length} requests\n${recoveryTable(this.observations)}`;
  }

  private async clientToken(clientIp: string): Promise<string | undefined> {
    const response = await request<{ access_token: string }>(this.stack.url('/v2/auth/token'), {
      body: { grant_type: 'client_credentials', client_id: this.org.client_id, client_secret: this.org.client_secret },
      headers: { 'x-forwarded-for': clientIp },
    });
    return response.status === 200 ? response.body.access_token : undefined;
  }
}
