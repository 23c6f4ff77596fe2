import { GATEWAY_CLIENT_ID, INTERNAL_GATEWAY_SCOPE } from '@acct/access-token';
import { DEV_GATEWAY_CLIENT_SECRET } from '@acct/config';
import { callRaw, createRawClient, grpcFailureToDomainError, jwksFromAuthService, RawClient } from '@acct/grpc';
import { DomainError } from '@acct/problem';
import { Metadata, status } from '@grpc/grpc-js';
import { decodeJwt } from 'jose';

import { ClientService } from '../clients/client.service';
import { AuthHarness } from '../test-support/auth-harness';
import { FakeIdentity, PROTO_DIR } from '../test-support/fake-identity';
import { createTestDatabase, TestDatabase } from '../test-support/test-database';

const ORG = 'b3bb189e-8bf9-4888-9912-ace4e6543002';
const USER = 'ada@example.test';
const PASSWORD = 'right-pass-1';

interface TokenResponse {
  accessToken: string;
}

const withToken = (token: string) => {
  const metadata = new Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  return metadata;
};

/**
 * Issue 11 item 1: IssueToken and Authorize are public, but the end user's IP, device and user agent
 * (the lockout's key, the ceiling's exemptions, the audit) are believed only from a call carrying the
 * gateway's own token (scope internal:gateway), verified by auth like any caller's.
 */
describe('client attributes come from the gateway only (gRPC)', () => {
  let database: TestDatabase;
  let identity: FakeIdentity;
  let harness: AuthHarness;
  let client: RawClient;

  const call = <T>(method: string, request: Record<string, unknown>, metadata?: Metadata) =>
    callRaw<Record<string, unknown>, T>(client, method, request, 5000, metadata);
  const refusal = async (work: Promise<unknown>): Promise<{ grpcCode: number; error: DomainError }> => {
    try {
      await work;
    } catch (error) {
      return { grpcCode: (error as { code: number }).code, error: grpcFailureToDomainError(error, 'auth') };
    }
    throw new Error('the call succeeded');
  };
  const gatewayToken = async (secret = DEV_GATEWAY_CLIENT_SECRET) =>
    (
      await call<TokenResponse>('issueToken', {
        grantType: 'client_credentials',
        clientId: GATEWAY_CLIENT_ID,
        clientSecret: secret,
      })
    ).accessToken;
  const login = (fields: Record<string, string>) => ({
    grantType: 'password',
    username: USER,
    password: 'wrong-pass',
    ...fields,
  });
  const auditRows = (ip: string) =>
    database.query<{ client_ip: string; device_id: string; user_agent: string; reason: string }>(
      'SELECT client_ip, device_id, user_agent, reason FROM login_audit WHERE client_ip = $1 ORDER BY at',
      [ip],
    );
  const throttles = (ip: string) =>
    database.query<{ attempts: number }>('SELECT attempts FROM login_throttles WHERE client_ip = $1', [ip]);

  beforeAll(async () => {
    database = await createTestDatabase();
    identity = await FakeIdentity.start();
    harness = await AuthHarness.start({ databaseUrl: database.url, identityAddress: identity.address, grpc: true });
    identity.trust({
      issuer: harness.config.TOKEN_ISSUER,
      audience: harness.config.TOKEN_AUDIENCE,
      fetchKeys: jwksFromAuthService(harness.address, PROTO_DIR),
    });
    identity.addUser(USER, PASSWORD, {
      id: 'c47ac10b-58cc-4372-a567-0e02b2c3d479',
      orgId: ORG,
      status: 'active',
      roles: ['admin'],
    });
    client = createRawClient('auth/v1/auth.proto', 'auth.v1.AuthService', harness.address, PROTO_DIR);
  });

  afterAll(async () => {
    client?.close();
    await harness?.close();
    await identity?.close();
    await database?.drop();
  });

  it('gives the gateway, for its secret, a short-lived token of scope internal:gateway only', async () => {
    const claims = decodeJwt(await gatewayToken());
    expect(claims).toMatchObject({
      sub: 'service:gateway',
      client_id: GATEWAY_CLIENT_ID,
      scope: INTERNAL_GATEWAY_SCOPE,
    });
    expect(claims.exp! - claims.iat!).toBe(harness.config.SERVICE_TOKEN_TTL_SECONDS);
    const wrong = await refusal(gatewayToken('not-the-gateway-secret-but-long-enough'));
    expect([wrong.grpcCode, wrong.error.code]).toEqual([status.UNAUTHENTICATED, 'invalid_client']);
  });

  it.each([
    ['a client IP', { clientIp: '192.0.2.10' }],
    ['a device id', { deviceId: 'phone-1', clientIp: '' }],
    ['a user agent', { userAgent: 'curl/8' }],
  ])('refuses IssueToken naming %s without any token: PERMISSION_DENIED, nothing counted', async (_, named) => {
    const refused = await refusal(call('issueToken', login({ password: PASSWORD, ...named })));
    expect([refused.grpcCode, refused.error.code]).toEqual([status.PERMISSION_DENIED, 'forbidden']);
    expect(await auditRows('192.0.2.10')).toEqual([]);
    expect(await throttles('192.0.2.10')).toEqual([]);
  });

  it("refuses client attributes with anyone else's token: a user's, another client's, a forged one", async () => {
    const userToken = (await call<TokenResponse>('issueToken', login({ password: PASSWORD }))).accessToken;
    const { clientId, clientSecret } = await harness.get(ClientService).ensureBootstrap(ORG);
    const clientToken = (
      await call<TokenResponse>('issueToken', { grantType: 'client_credentials', clientId, clientSecret })
    ).accessToken;
    const spoofed = login({ clientIp: '192.0.2.20' });
    for (const token of [userToken, clientToken]) {
      const refused = await refusal(call('issueToken', spoofed, withToken(token)));
      expect([refused.grpcCode, refused.error.code]).toEqual([status.PERMISSION_DENIED, 'insufficient_scope']);
    }
    const [header, , signature] = (await gatewayToken()).split('.');
    const forgedBody = Buffer.from(JSON.stringify({ sub: 'x', scope: INTERNAL_GATEWAY_SCOPE })).toString('base64url');
    const forged = await refusal(call('issueToken', spoofed, withToken(`${header}.${forgedBody}.${signature}`)));
    expect([forged.grpcCode, forged.error.code]).toEqual([status.UNAUTHENTICATED, 'unauthenticated']);
    expect(await auditRows('192.0.2.20')).toEqual([]);
  });

  it("believes the gateway's client attributes: the audit records them and the lockout keys on its IP", async () => {
    const token = await gatewayToken();
    const named = { clientIp: '192.0.2.30', deviceId: 'phone-2', userAgent: 'Firefox/140' };
    const outcomes: string[] = [];
    for (let attempt = 0; attempt < 6; attempt += 1) {
      outcomes.push(
        await call('issueToken', login(named), withToken(token)).then(
          () => 'issued',
          (failure: unknown) => grpcFailureToDomainError(failure, 'auth').code as string,
        ),
      );
    }
    expect(outcomes).toEqual([...Array<string>(5).fill('invalid_grant'), 'login_locked']);
    const rows = await auditRows('192.0.2.30');
    expect(rows).toHaveLength(6);
    expect(rows[0]).toEqual({
      client_ip: '192.0.2.30',
      device_id: 'phone-2',
      user_agent: 'Firefox/140',
      reason: 'invalid_grant',
    });
    // Another IP through the gateway is not locked.
    await expect(
      call<TokenResponse>('issueToken', login({ password: PASSWORD, clientIp: '192.0.2.31' }), withToken(token)),
    ).resolves.toMatchObject({ accessToken: expect.any(String) });
  });

  it('lets a call that names no client through as an unknown client (no IP of its choosing)', async () => {
    await expect(call<TokenResponse>('issueToken', login({ password: PASSWORD }))).resolves.toMatchObject({
      accessToken: expect.any(String),
    });
  });

  it('refuses Authorize naming the client without the gateway token, and serves the gateway', async () => {
    const request = {
      parameters: { responseType: 'code', clientId: 'no-such-client' },
      username: USER,
      password: PASSWORD,
      clientIp: '192.0.2.40',
      userAgent: 'Firefox/140',
    };
    const refused = await refusal(call('authorize', request));
    expect([refused.grpcCode, refused.error.code]).toEqual([status.PERMISSION_DENIED, 'forbidden']);
    // With the gateway's token the call is decided on its merits (an unknown client: the error page).
    await expect(call('authorize', request, withToken(await gatewayToken()))).resolves.toMatchObject({
      errorPage: true,
    });
  });
});
