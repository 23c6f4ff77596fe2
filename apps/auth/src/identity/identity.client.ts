import { Caller, requireRole } from '@acct/access-token';
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

/** The one key a login username counts under, and the known user behind it (LoginKey of identity). */
export interface LoginKey {
  /** `user:<id>` for a known user (its e-mail and phone alike), else the normalised username. */
  key: string;
  /** The known user's id and org; unset for an unknown username. */
  userId?: string;
  orgId?: string;
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
    const answer = await this.internal('VerifyPassword', (accessToken) =>
      this.identity.call('verifyPassword', { email, password }, { accessToken }),
    );
    if (!answer.valid || !answer.user) return undefined;
    const { id, orgId, email: userEmail, status, roles } = answer.user;
    return { id, orgId, email: userEmail, status, roles };
  }

  /**
   * The key a login username's failures count under (contract §7: e-mail and phone of one user share
   * one count) and, for a known user, who it is (the login audit attributes failures to its org).
   * Asked for every username, known or not, so the answer's timing says nothing about which it is.
   */
  async resolveLoginKey(username: string): Promise<LoginKey> {
    const { key, userId, orgId } = await this.internal('ResolveLoginKey', (accessToken) =>
      this.identity.call('resolveLoginKey', { username }, { accessToken }),
    );
    return { key, ...(userId && orgId ? { userId, orgId } : {}) };
  }

  /**
   * A call with auth's own `internal:identity` token; an unreachable identity is `service_unavailable`.
   * A token identity refuses (its signing key withdrawn, say) is replaced, and the call made once more.
   */
  private async internal<T>(method: string, call: (accessToken: string) => Promise<T>): Promise<T> {
    try {
      return await call(await this.serviceToken.get());
    } catch (error) {
      if (!(error instanceof DomainError) || error.code !== 'unauthenticated') this.refused(method, error);
      this.serviceToken.forget();
    }
    try {
      return await call(await this.serviceToken.get());
    } catch (error) {
      this.refused(method, error);
    }
  }

  private refused(method: string, error: unknown): never {
    if (error instanceof DomainError && error.code === 'service_unavailable') throw error;
    // Anything else is auth's fault (identity refused its token, say), not the user's.
    this.serviceToken.forget();
    this.logger.error(`identity refused ${method}: ${error instanceof Error ? error.message : String(error)}`);
    throw new DomainError('internal_error', 'An unexpected error occurred.');
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
   * Whether the user whose access token this is is still an active admin of its org, as identity says
   * now (`GetUser me` with that token): its token may predate a disable, deletion or demotion whose
   * revocation has not reached this process (up to a second, and while NATS is down until it is back).
   */
  async isActiveAdmin(callerToken: string): Promise<boolean> {
    try {
      const { user } = await this.identity.call('getUser', { id: 'me' }, { accessToken: callerToken });
      return user?.status === 'active' && user.roles.includes('admin');
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
   * applies its own rules); undefined when identity does not know it. An unreachable identity is
   * `service_unavailable`: the password check it precedes could not be made either.
   */
  async emailOf(callerToken: string): Promise<string | undefined> {
    try {
      const { user } = await this.identity.call('getUser', { id: 'me' }, { accessToken: callerToken });
      return user?.email || undefined;
    } catch (error) {
      if (error instanceof DomainError && error.code === 'service_unavailable') throw error;
      this.logger.warn(`identity did not answer GetUser me: ${error instanceof Error ? error.message : String(error)}`);
      return undefined;
    }
  }
}

/**
 * A caller acting as an admin must hold the role, and a user must still be one (identity's word, not
 * its token's: a disabled, deleted or demoted admin's token works until its revocation arrives); a
 * client acts with its configured roles. Refused with `detail` either way.
 */
export async function requireStillAdmin(
  identity: IdentityClient,
  caller: Caller,
  callerToken: string,
  detail: string,
): Promise<void> {
  requireRole(caller, 'admin', detail);
  if (caller.kind === 'user' && !(await identity.isActiveAdmin(callerToken))) {
    throw new DomainError('forbidden', detail);
  }
}
