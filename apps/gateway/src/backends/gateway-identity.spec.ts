import { GATEWAY_CLIENT_ID } from '@acct/access-token';
import { authV1 } from '@acct/contracts';
import { DomainError } from '@acct/problem';
import { Logger } from '@nestjs/common';

import { GatewayConfig } from '../config';
import { AuthBackend } from './backends.module';
import { GatewayIdentity } from './gateway-identity';

interface Call {
  name: string;
  request: Record<string, string>;
  accessToken?: string;
}

/** Auth as the gateway sees it: issues numbered gateway tokens; `refuse` decides the other calls. */
class FakeAuth {
  calls: Call[] = [];
  issued = 0;
  secretAccepted = true;
  refuse?: (call: Call) => DomainError | undefined;

  call(name: string, request: Record<string, string>, options: { accessToken?: string } = {}): Promise<unknown> {
    const call = { name, request, accessToken: options.accessToken };
    this.calls.push(call);
    if (name === 'issueToken' && request.clientId === GATEWAY_CLIENT_ID) {
      if (!this.secretAccepted)
        return Promise.reject(new DomainError('invalid_client', 'Client authentication failed.'));
      this.issued += 1;
      return Promise.resolve({ accessToken: `gateway-token-${this.issued}`, expiresIn: 60 });
    }
    const refusal = this.refuse?.(call);
    return refusal ? Promise.reject(refusal) : Promise.resolve({ accessToken: 'user-token', deviceToken: '' });
  }
}

const login: authV1.IssueTokenRequest = {
  grantType: 'password',
  username: 'ada@example.test',
  password: 'pw',
  scope: '',
  mfaCode: '',
  clientId: '',
  clientSecret: '',
  refreshToken: '',
  code: '',
  redirectUri: '',
  codeVerifier: '',
  clientIp: '192.0.2.1',
  deviceId: '',
  userAgent: 'jest',
  deviceToken: '',
};

describe('GatewayIdentity', () => {
  let auth: FakeAuth;
  let identity: GatewayIdentity;

  beforeEach(() => {
    auth = new FakeAuth();
    const config = { GATEWAY_CLIENT_SECRET: 'the-gateway-secret-of-this-deployment' } as GatewayConfig;
    identity = new GatewayIdentity(auth as unknown as AuthBackend, config);
    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
  });

  afterEach(() => jest.restoreAllMocks());

  const issueToken = () => identity.call('issueToken', login);

  it('calls auth with its own token, got with client_credentials for GATEWAY_CLIENT_SECRET, and reuses it', async () => {
    await issueToken();
    await issueToken();
    expect(auth.calls.map((call) => [call.name, call.request.grantType, call.accessToken])).toEqual([
      ['issueToken', 'client_credentials', undefined],
      ['issueToken', 'password', 'gateway-token-1'],
      ['issueToken', 'password', 'gateway-token-1'],
    ]);
    expect(auth.calls[0].request).toMatchObject({
      clientId: GATEWAY_CLIENT_ID,
      clientSecret: 'the-gateway-secret-of-this-deployment',
      clientIp: '',
    });
  });

  it('asks for its token once however many requests arrive together', async () => {
    await Promise.all([issueToken(), issueToken(), issueToken()]);
    expect(auth.issued).toBe(1);
  });

  it('gets a new token and retries once when auth refuses the one it has', async () => {
    await issueToken();
    auth.refuse = (call) =>
      call.accessToken === 'gateway-token-1' ? new DomainError('unauthenticated', 'The token has expired.') : undefined;
    await expect(issueToken()).resolves.toMatchObject({ accessToken: 'user-token' });
    expect(auth.calls.at(-1)?.accessToken).toBe('gateway-token-2');
  });

  it("passes auth's answer to the request on (a refused login is the user's, not the gateway's)", async () => {
    auth.refuse = () => new DomainError('invalid_grant', 'The username or password is incorrect.');
    await expect(issueToken()).rejects.toMatchObject({ code: 'invalid_grant' });
    expect(auth.issued).toBe(1);
  });

  it('answers 500, never invalid_client, when auth refuses the gateway secret (a deployment fault)', async () => {
    auth.secretAccepted = false;
    await expect(issueToken()).rejects.toMatchObject({ code: 'internal_error', status: 500 });
    expect(auth.calls.filter((call) => call.request.grantType === 'password')).toEqual([]);
  });
});
