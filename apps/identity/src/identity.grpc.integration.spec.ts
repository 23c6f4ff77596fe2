import path from 'node:path';

import { AccessTokenVerifier, INTERNAL_IDENTITY_SCOPE, scopesOfRoles } from '@acct/access-token';
import { identityV1 } from '@acct/contracts';
import {
  ACCESS_TOKEN_VERIFIER,
  AUTHORIZATION_METADATA_KEY,
  createRawClient,
  grpcFailureToDomainError,
  grpcServerOptions,
  RawClient,
} from '@acct/grpc';
import { DomainError } from '@acct/problem';
import { freePort } from '@acct/testing';
import { Metadata, status as GrpcStatus } from '@grpc/grpc-js';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { exportJWK, generateKeyPair, KeyLike, SignJWT } from 'jose';
import { Registry } from 'prom-client';

import { AppModule } from './app.module';
import { createBootstrapService } from './bootstrap/bootstrap.command';
import { loadIdentityConfig } from './config';
import { PrismaService } from './prisma/prisma.service';
import { createSpecDatabase, REPOSITORY_ROOT, SpecDatabase } from './testing/spec-database';

jest.setTimeout(60_000);

const ISSUER = 'https://issuer.spec';
const AUDIENCE = 'account-platform';
const PROTO_DIR = path.join(REPOSITORY_ROOT, 'proto');

type UnaryCall<Res> = (
  request: object,
  metadata: Metadata,
  options: { deadline: Date },
  callback: (error: (Error & { code?: number }) | null, response?: Res) => void,
) => void;

interface TokenClaims {
  sub: string;
  org_id: string;
  scope: string;
  roles?: string[];
  kind?: 'user' | 'client';
}

/** The identity process as main.ts starts it (real gRPC server, real guard), with a local signing key. */
describe('identity over gRPC', () => {
  let database: SpecDatabase;
  let app: NestFastifyApplication;
  let client: RawClient;
  let signingKey: KeyLike;
  let orgId: string;
  let adminId: string;

  const token = (claims: TokenClaims) =>
    new SignJWT({ client_id: 'web', ...claims })
      .setProtectedHeader({ alg: 'ES256', kid: 'spec-key', typ: 'at+jwt' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt()
      .setJti(crypto.randomUUID())
      .setExpirationTime('10m')
      .sign(signingKey);

  const adminToken = () =>
    token({ sub: adminId, org_id: orgId, scope: scopesOfRoles(['admin']).join(' '), roles: ['admin'] });

  /** One unary call; a failure comes back as the DomainError the gateway would make of it, plus its gRPC status. */
  const call = async <Res>(method: string, request: object, bearer?: string): Promise<Res> => {
    const metadata = new Metadata();
    if (bearer) metadata.set(AUTHORIZATION_METADATA_KEY, `Bearer ${bearer}`);
    const invoke = (client as unknown as Record<string, UnaryCall<Res>>)[method].bind(client);
    return new Promise((resolve, reject) =>
      invoke(request, metadata, { deadline: new Date(Date.now() + 10_000) }, (error, response) => {
        if (!error) return resolve(response as Res);
        const domain = grpcFailureToDomainError(error, 'identity');
        reject(Object.assign(domain, { grpcStatus: error.code }));
      }),
    );
  };

  const failure = async (promise: Promise<unknown>) => {
    try {
      await promise;
    } catch (error) {
      return error as DomainError & { grpcStatus: number };
    }
    throw new Error('the call succeeded');
  };

  beforeAll(async () => {
    const pair = await generateKeyPair('ES256');
    signingKey = pair.privateKey;
    const publicJwk = { ...(await exportJWK(pair.publicKey)), kid: 'spec-key', alg: 'ES256', use: 'sig' };
    const verifier = new AccessTokenVerifier({
      issuer: ISSUER,
      audience: AUDIENCE,
      fetchKeys: () => Promise.resolve({ keys: [publicJwk] }),
    });

    database = await createSpecDatabase();
    const grpcPort = await freePort();
    const config = loadIdentityConfig({
      IDENTITY_DATABASE_URL: database.url,
      IDENTITY_GRPC_PORT: String(grpcPort),
      IDENTITY_OPS_PORT: String(await freePort()),
      TOKEN_ISSUER: ISSUER,
      TOKEN_AUDIENCE: AUDIENCE,
      PROTO_DIR,
      LOG_LEVEL: 'silent',
    });
    const module = await Test.createTestingModule({ imports: [AppModule.forRoot(config, new Registry())] })
      .overrideProvider(ACCESS_TOKEN_VERIFIER)
      .useValue(verifier)
      .compile();
    app = module.createNestApplication<NestFastifyApplication>(new FastifyAdapter(), { logger: false });
    app.connectMicroservice(
      grpcServerOptions({
        package: 'identity.v1',
        protoFile: 'identity/v1/identity.proto',
        url: `127.0.0.1:${grpcPort}`,
        protoDir: PROTO_DIR,
      }),
      { inheritAppConfig: true },
    );
    await app.startAllMicroservices();
    await app.init();
    client = createRawClient(
      'identity/v1/identity.proto',
      'identity.v1.IdentityService',
      `127.0.0.1:${grpcPort}`,
      PROTO_DIR,
    );

    const seeded = await createBootstrapService(app.get(PrismaService), config).bootstrap({
      orgName: 'acme',
      email: 'admin@acme.example',
      password: 'admin password',
    });
    orgId = seeded.orgId;
    adminId = seeded.adminUserId;
  });

  afterAll(async () => {
    client?.close();
    await app?.close();
    await database?.drop();
  });

  it('creates a user from a request without any optional field, and answers it in the contract shape', async () => {
    const response = await call<identityV1.CreateUserResponse>(
      'createUser',
      { email: 'Lin@Example.com', displayName: 'Lin', roles: [], requestFingerprint: '' },
      await adminToken(),
    );
    expect(response).toEqual({
      replayed: false,
      user: {
        id: expect.any(String),
        orgId,
        email: 'Lin@Example.com',
        displayName: 'Lin',
        status: 'pending',
        roles: ['member'],
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        etag: expect.stringMatching(/^[A-Za-z0-9_-]{27}$/),
        _etag: 'etag', // proto-loader's view of an optional field's presence
      },
    });
    const row = await app.get(PrismaService).user.findUniqueOrThrow({ where: { id: response.user!.id } });
    expect(row.passwordHash).toBeNull();
  });

  it('carries the administration calls: list, merge patch (null removes), disable, enable, delete', async () => {
    const bearer = await adminToken();
    const { user } = await call<identityV1.CreateUserResponse>(
      'createUser',
      { email: 'ops@example.com', displayName: 'Ops', roles: [], requestFingerprint: '', phone: '+44 20 7946 0958' },
      bearer,
    );
    expect(user?.phone).toBe('+442079460958');
    const patched = await call<identityV1.UpdateUserResponse>(
      'updateUser',
      { id: user?.id, ifMatch: [user?.etag], roles: { roles: ['viewer'] }, phone: {}, locale: { value: 'en-GB' } },
      bearer,
    );
    expect(patched.user).toMatchObject({ roles: ['viewer'], displayName: 'Ops' });
    expect(patched.user?.phone ?? undefined).toBeUndefined();
    const stale = await failure(call('updateUser', { id: user?.id, ifMatch: [user?.etag], displayName: 'X' }, bearer));
    expect(stale.code).toBe('precondition_failed');
    const page = await call<identityV1.ListUsersResponse>('listUsers', { limit: 1 }, bearer);
    expect(page.users.map((listed) => listed.id)).toEqual([user?.id]);
    expect(page.nextCursor).not.toBe('');
    const disabled = await call<identityV1.DisableUserResponse>('disableUser', { id: user?.id }, bearer);
    expect(disabled.user?.status).toBe('disabled');
    const enabled = await call<identityV1.EnableUserResponse>('enableUser', { id: user?.id }, bearer);
    expect(enabled.user?.status).toBe('pending');
    expect(await call('deleteUser', { id: user?.id, ifMatch: [enabled.user?.etag] }, bearer)).toEqual({});
    expect((await failure(call('getUser', { id: user?.id }, bearer))).code).toBe('not_found');
    const lastAdmin = await failure(call('disableUser', { id: adminId }, bearer));
    expect({ code: lastAdmin.code, grpcStatus: lastAdmin.grpcStatus }).toEqual({ code: 'last_admin', grpcStatus: 9 });
  });

  it('replays with replayed: true, and a stored error with Idempotent-Replayed: true in its payload', async () => {
    const request = {
      email: 'kim@example.com',
      displayName: 'Kim',
      password: 'kim password',
      roles: ['viewer'],
      idempotencyKey: 'grpc-key-1',
      requestFingerprint: 'fp-1',
    };
    const first = await call<identityV1.CreateUserResponse>('createUser', request, await adminToken());
    const again = await call<identityV1.CreateUserResponse>('createUser', request, await adminToken());
    expect(again).toEqual({ ...first, replayed: true });

    const taken = { ...request, idempotencyKey: 'grpc-key-2' };
    expect((await failure(call('createUser', taken, await adminToken()))).code).toBe('email_taken');
    const replayed = await failure(call('createUser', taken, await adminToken()));
    expect(replayed).toMatchObject({ code: 'email_taken', grpcStatus: GrpcStatus.ALREADY_EXISTS });
    expect(replayed.options.headers).toEqual({ 'Idempotent-Replayed': 'true' });
  });

  it('maps every refusal to its code and gRPC status', async () => {
    const user = await adminToken();
    const cases: Array<[() => Promise<unknown>, string, GrpcStatus]> = [
      [
        () => call('createUser', { email: 'x', displayName: '', roles: [], requestFingerprint: '' }, user),
        'validation_failed',
        GrpcStatus.INVALID_ARGUMENT,
      ],
      [
        () =>
          call(
            'createUser',
            { email: 'o@example.com', displayName: 'O', roles: [], orgId: crypto.randomUUID(), requestFingerprint: '' },
            user,
          ),
        'forbidden',
        GrpcStatus.PERMISSION_DENIED,
      ],
      [
        () =>
          call(
            'createUser',
            {
              email: 'k@example.com',
              displayName: 'K',
              roles: [],
              idempotencyKey: 'grpc-key-1',
              requestFingerprint: 'fp-other',
            },
            user,
          ),
        'idempotency_key_reused',
        GrpcStatus.FAILED_PRECONDITION,
      ],
      [() => call('getUser', { id: crypto.randomUUID() }, user), 'not_found', GrpcStatus.NOT_FOUND],
      [
        () => call('verifyPassword', { email: 'admin@acme.example', password: 'admin password' }, user),
        'insufficient_scope',
        GrpcStatus.PERMISSION_DENIED,
      ],
      [() => call('getUser', { id: 'me' }), 'unauthenticated', GrpcStatus.UNAUTHENTICATED],
    ];
    for (const [attempt, code, grpcStatus] of cases) {
      expect(await failure(attempt())).toMatchObject({ code, grpcStatus });
    }
  });

  it('answers GetUser "me" and VerifyPassword for the auth service', async () => {
    const me = await call<identityV1.GetUserResponse>('getUser', { id: 'me' }, await adminToken());
    expect(me.user).toMatchObject({ id: adminId, status: 'active', roles: ['admin'] });

    const auth = await token({ sub: 'auth', org_id: orgId, scope: INTERNAL_IDENTITY_SCOPE, kind: 'client' });
    const valid = await call<identityV1.VerifyPasswordResponse>(
      'verifyPassword',
      { email: 'ADMIN@acme.example', password: 'admin password' },
      auth,
    );
    expect(valid).toEqual({ valid: true, user: me.user });
    const invalid = await call<identityV1.VerifyPasswordResponse>(
      'verifyPassword',
      { email: 'nobody@acme.example', password: 'x' },
      auth,
    );
    expect(invalid.valid).toBe(false);
    expect(invalid.user ?? undefined).toBeUndefined();
  });
});
