import { GATEWAY_CLIENT_ID } from '@acct/access-token';
import { authV1 } from '@acct/contracts';
import { RequestOf, ResponseOf } from '@acct/grpc';
import { DomainError } from '@acct/problem';
import { Inject, Injectable, Logger } from '@nestjs/common';

import { GATEWAY_CONFIG, GatewayConfig } from '../config';
import { AuthBackend } from './backends.module';

type Auth = authV1.AuthServiceClient;
/** The calls that name the end user (IP, device, user agent): auth believes those from the gateway only. */
type NamingCall = 'issueToken' | 'authorize';

/**
 * The gateway's own service identity towards auth: a short-lived access token (scope
 * `internal:gateway`) that auth issues to the built-in client `gateway` for GATEWAY_CLIENT_SECRET,
 * reused until a quarter of its lifetime is left. Auth refuses client attributes from any call
 * without it, so nobody who merely reaches the auth port can pick the IP its lockout keys on.
 */
@Injectable()
export class GatewayIdentity {
  private readonly logger = new Logger(GatewayIdentity.name);
  private cached?: { token: string; expiresAt: number; lifetimeMs: number };
  private fetching?: Promise<string>;

  constructor(
    private readonly auth: AuthBackend,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  /** Calls auth with the gateway's token; once more with a new one when auth refused the token. */
  async call<Name extends NamingCall>(name: Name, request: RequestOf<Auth[Name]>): Promise<ResponseOf<Auth[Name]>> {
    try {
      return await this.auth.call(name, request, { accessToken: await this.token() });
    } catch (error) {
      if (!(error instanceof DomainError) || error.code !== 'unauthenticated') throw error;
      this.cached = undefined;
      return this.auth.call(name, request, { accessToken: await this.token() });
    }
  }

  private token(): Promise<string> {
    const cached = this.cached;
    if (cached && cached.expiresAt - Date.now() > cached.lifetimeMs / 4) return Promise.resolve(cached.token);
    this.fetching ??= this.fetch().finally(() => (this.fetching = undefined));
    return this.fetching;
  }

  private async fetch(): Promise<string> {
    let issued: authV1.IssueTokenResponse;
    try {
      issued = await this.auth.call('issueToken', {
        grantType: 'client_credentials',
        clientId: GATEWAY_CLIENT_ID,
        clientSecret: this.config.GATEWAY_CLIENT_SECRET,
        username: '',
        password: '',
        scope: '',
        mfaCode: '',
        refreshToken: '',
        code: '',
        redirectUri: '',
        codeVerifier: '',
        clientIp: '',
        deviceId: '',
        userAgent: '',
        deviceToken: '',
      });
    } catch (error) {
      if (error instanceof DomainError && error.code === 'service_unavailable') throw error;
      // Auth refused the gateway's own secret: a deployment fault, never the end user's.
      this.logger.error(
        `auth refused the gateway's client credentials (GATEWAY_CLIENT_SECRET): ${error instanceof Error ? error.message : String(error)}`,
      );
      throw new DomainError('internal_error', 'An unexpected error occurred.');
    }
    const lifetimeMs = issued.expiresIn * 1000;
    this.cached = { token: issued.accessToken, expiresAt: Date.now() + lifetimeMs, lifetimeMs };
    return issued.accessToken;
  }
}
