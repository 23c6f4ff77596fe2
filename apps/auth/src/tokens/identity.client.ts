import { identityV1 } from '@acct/contracts';
import { AUTHORIZATION_METADATA_KEY, deadline, outgoingMetadata, unary } from '@acct/grpc';
import { DomainError } from '@acct/problem';
import { Metadata } from '@grpc/grpc-js';
import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import type { ClientGrpc } from '@nestjs/microservices';
import { Observable } from 'rxjs';

import { AUTH_CONFIG, AuthConfig } from '../config';
import { ServiceToken } from './service-token';

export const IDENTITY_GRPC_CLIENT = 'IDENTITY_GRPC_CLIENT';

/** The user behind a correct password. */
export interface VerifiedUser {
  id: string;
  orgId: string;
  email: string;
  status: string;
  roles: string[];
}

/** The generated client, with the call options (deadline) grpc-js takes after the metadata. */
interface IdentityCalls {
  verifyPassword(
    request: identityV1.VerifyPasswordRequest,
    metadata: Metadata,
    options: { deadline: Date },
  ): Observable<identityV1.VerifyPasswordResponse>;
  getUser(
    request: identityV1.GetUserRequest,
    metadata: Metadata,
    options: { deadline: Date },
  ): Observable<identityV1.GetUserResponse>;
}

/** Identity's VerifyPassword, called with auth's own `internal:identity` token; GetUser on a caller's behalf. */
@Injectable()
export class IdentityClient implements OnModuleInit {
  private readonly logger = new Logger(IdentityClient.name);
  private identity!: IdentityCalls;

  constructor(
    @Inject(IDENTITY_GRPC_CLIENT) private readonly grpc: ClientGrpc,
    private readonly serviceToken: ServiceToken,
    @Inject(AUTH_CONFIG) private readonly config: AuthConfig,
  ) {}

  onModuleInit() {
    this.identity = this.grpc.getService<IdentityCalls>(identityV1.IDENTITY_SERVICE_NAME);
  }

  /**
   * The user, when the password is right; undefined for an unknown e-mail and a wrong password alike.
   * An unreachable identity is `service_unavailable`.
   */
  async verifyPassword(email: string, password: string): Promise<VerifiedUser | undefined> {
    const metadata = outgoingMetadata({ [AUTHORIZATION_METADATA_KEY]: `Bearer ${await this.serviceToken.get()}` });
    let answer: identityV1.VerifyPasswordResponse;
    try {
      answer = await unary('identity', () =>
        this.identity.verifyPassword({ email, password }, metadata, deadline(this.config.GRPC_DEADLINE_MS)),
      );
    } catch (error) {
      if (error instanceof DomainError && error.code === 'service_unavailable') throw error;
      // Anything else is auth's fault (identity refused its token, say), not the user's.
      this.serviceToken.forget();
      this.logger.error(`identity refused VerifyPassword: ${error instanceof Error ? error.message : String(error)}`);
      throw new DomainError('internal_error', 'An unexpected error occurred.');
    }
    if (!answer.valid || !answer.user) return undefined;
    const { id, orgId, email: userEmail, status, roles } = answer.user;
    return { id, orgId, email: userEmail, status, roles };
  }

  /**
   * The e-mail of the user whose access token this is (`GetUser me` with that token, so identity
   * applies its own rules); undefined when identity cannot tell (it is only a label for MFA enrolment).
   */
  async emailOf(callerToken: string): Promise<string | undefined> {
    const metadata = outgoingMetadata({ [AUTHORIZATION_METADATA_KEY]: `Bearer ${callerToken}` });
    try {
      const { user } = await unary('identity', () =>
        this.identity.getUser({ id: 'me' }, metadata, deadline(this.config.GRPC_DEADLINE_MS)),
      );
      return user?.email || undefined;
    } catch (error) {
      this.logger.warn(`identity did not answer GetUser me: ${error instanceof Error ? error.message : String(error)}`);
      return undefined;
    }
  }
}
