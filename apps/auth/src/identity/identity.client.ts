import { identityV1 } from '@acct/contracts';
import { GrpcClient } from '@acct/grpc';
import { DomainError } from '@acct/problem';
import { Injectable, Logger } from '@nestjs/common';

import { ServiceToken } from './service-token';

/** The identity service as auth calls it (typed by its generated client). */
export class IdentityGrpc extends GrpcClient<identityV1.IdentityServiceClient> {}

/** The user behind a correct password. */
export interface VerifiedUser {
  id: string;
  orgId: string;
  email: string;
  status: string;
  roles: string[];
}

/** A user's id and the names it can log in with. */
export interface UserLoginNames {
  id: string;
  email: string;
  /** E.164, when the user has a phone. */
  phone?: string;
}

/** Identity's VerifyPassword, called with auth's own `internal:identity` token; GetUser on a caller's behalf. */
@Injectable()
export class IdentityClient {
  private readonly logger = new Logger(IdentityClient.name);

  constructor(
    private readonly identity: IdentityGrpc,
    private readonly serviceToken: ServiceToken,
  ) {}

  /**
   * The user, when the password is right; undefined for an unknown e-mail and a wrong password alike.
   * An unreachable identity is `service_unavailable`.
   */
  async verifyPassword(email: string, password: string): Promise<VerifiedUser | undefined> {
    const accessToken = await this.serviceToken.get();
    let answer: identityV1.VerifyPasswordResponse;
    try {
      answer = await this.identity.call('verifyPassword', { email, password }, { accessToken });
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
   * Whether the user is one the caller may see (`GetUser` with the caller's own token, so identity
   * applies its org boundary); an unknown user and another org's alike answer false.
   */
  async visibleTo(callerToken: string, userId: string): Promise<boolean> {
    try {
      await this.identity.call('getUser', { id: userId }, { accessToken: callerToken });
      return true;
    } catch (error) {
      if (error instanceof DomainError && error.code === 'not_found') return false;
      throw error;
    }
  }

  /**
   * The user's login names (e-mail and, when set, phone), when the caller may see the user (`GetUser`
   * with the caller's own token, as `visibleTo`); undefined for an unknown user and another org's alike.
   */
  async loginNamesOf(callerToken: string, userId: string): Promise<UserLoginNames | undefined> {
    try {
      const { user } = await this.identity.call('getUser', { id: userId }, { accessToken: callerToken });
      return user ? { id: user.id, email: user.email, phone: user.phone || undefined } : undefined;
    } catch (error) {
      if (error instanceof DomainError && error.code === 'not_found') return undefined;
      throw error;
    }
  }

  /**
   * The e-mail of the user whose access token this is (`GetUser me` with that token, so identity
   * applies its own rules); undefined when identity cannot tell (it is only a label for MFA enrolment).
   */
  async emailOf(callerToken: string): Promise<string | undefined> {
    try {
      const { user } = await this.identity.call('getUser', { id: 'me' }, { accessToken: callerToken });
      return user?.email || undefined;
    } catch (error) {
      this.logger.warn(`identity did not answer GetUser me: ${error instanceof Error ? error.message : String(error)}`);
      return undefined;
    }
  }
}
