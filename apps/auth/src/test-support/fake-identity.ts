import path from 'node:path';

import { AccessTokenVerifier, Caller, INTERNAL_IDENTITY_SCOPE } from '@acct/access-token';
import { identityV1 } from '@acct/contracts';
import { PROTO_LOADER_OPTIONS } from '@acct/grpc';
import {
  GrpcObject,
  loadPackageDefinition,
  Metadata,
  Server,
  ServerCredentials,
  ServerUnaryCall,
  ServiceClientConstructor,
  status,
  UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import type { JSONWebKeySet } from 'jose';

export const PROTO_DIR = path.resolve(__dirname, '../../../../proto');

type Callback = (error: { code: number; details: string } | null, response?: identityV1.VerifyPasswordResponse) => void;

/**
 * A stand-in for the identity service over real gRPC: VerifyPassword and ResolveLoginKey only, with the same answer for an
 * unknown e-mail and a wrong password. It checks the caller's token like identity does (against the
 * auth service's own published keys, scope `internal:identity`) and remembers who called.
 */
export class FakeIdentity {
  readonly callers: Caller[] = [];
  private readonly users = new Map<string, { password: string; user: identityV1.User }>();
  private verifier?: AccessTokenVerifier;

  private constructor(
    private readonly server: Server,
    readonly address: string,
  ) {}

  static async start(): Promise<FakeIdentity> {
    const definition = loadSync(path.join(PROTO_DIR, 'identity/v1/identity.proto'), {
      ...PROTO_LOADER_OPTIONS,
      includeDirs: [PROTO_DIR],
    });
    const identity = (loadPackageDefinition(definition).identity as GrpcObject).v1 as GrpcObject;
    const server = new Server();
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) =>
        error ? reject(error) : resolve(bound),
      ),
    );
    const fake = new FakeIdentity(server, `127.0.0.1:${port}`);
    const implementation: UntypedServiceImplementation = {
      verifyPassword: (call: ServerUnaryCall<identityV1.VerifyPasswordRequest, unknown>, callback: Callback) =>
        void fake.verifyPassword(call.request, call.metadata).then(
          (response) => callback(null, response),
          (error: Error) => callback({ code: status.UNAUTHENTICATED, details: error.message }),
        ),
    };
    implementation.resolveLoginKey = (
      call: ServerUnaryCall<identityV1.ResolveLoginKeyRequest, unknown>,
      callback: (error: null, response: identityV1.ResolveLoginKeyResponse) => void,
    ) => {
      const username = call.request.username.trim().toLowerCase();
      const known = fake.users.get(username)?.user;
      callback(
        null,
        known ? { key: `user:${known.id}`, userId: known.id, orgId: known.orgId } : { key: `email:${username}` },
      );
    };
    server.addService((identity.IdentityService as ServiceClientConstructor).service, implementation);
    return fake;
  }

  /** Callers are verified as identity would: with the auth service's published keys. */
  trust(options: { issuer: string; audience: string; fetchKeys: () => Promise<JSONWebKeySet> }) {
    this.verifier = new AccessTokenVerifier({ ...options, refetchIntervalMs: 0 });
  }

  addUser(email: string, password: string, user: Omit<identityV1.User, 'email' | 'displayName' | 'createdAt'>) {
    this.users.set(email.toLowerCase(), {
      password,
      user: { ...user, email, displayName: email.split('@')[0] ?? email, createdAt: new Date().toISOString() },
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.tryShutdown(() => resolve()));
  }

  private async verifyPassword(
    request: identityV1.VerifyPasswordRequest,
    metadata: Metadata,
  ): Promise<identityV1.VerifyPasswordResponse> {
    const [header] = metadata.get('authorization');
    const token = typeof header === 'string' ? header.replace(/^Bearer /, '') : '';
    if (!this.verifier) throw new Error('no keys to verify callers with');
    const caller = await this.verifier.verify(token);
    if (!caller.scopes.has(INTERNAL_IDENTITY_SCOPE)) throw new Error('caller lacks internal:identity');
    this.callers.push(caller);
    const known = this.users.get(request.email.toLowerCase());
    return known && known.password === request.password
      ? { valid: true, user: known.user }
      : { valid: false, user: undefined };
  }
}
