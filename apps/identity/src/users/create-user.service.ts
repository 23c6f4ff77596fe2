import { Caller, mayGrant } from '@acct/access-token';
import { requireScope } from '@acct/access-token';
import { Clock } from '@acct/clock';
import { identityV1 } from '@acct/contracts';
import { USER_CREATED } from '@acct/events';
import { DomainError } from '@acct/problem';
import { Injectable } from '@nestjs/common';
import { z } from 'zod';

import { fingerprintOf } from '../idempotency/fingerprint';
import { KeyScope } from '../idempotency/idempotency.repository';
import { Claim, IdempotencyService, NO_CLAIM, OutcomeCodec } from '../idempotency/idempotency.service';
import { newId } from '../ids';
import { OrgRecord } from '../orgs/org';
import { OrgsRepository } from '../orgs/orgs.repository';
import { OutboxRelay } from '../outbox/outbox.relay';
import { OutboxRepository } from '../outbox/outbox.repository';
import { PasswordSetTokensRepository } from '../password-set-tokens/password-set-tokens.repository';
import { PasswordHasher } from '../passwords/password-hasher';
import { Transactions } from '../prisma/transactions';
import { UsersQuota } from '../quota/users-quota';
import { CallerRoles } from './caller-roles';
import { toUserMessage } from './user';
import { NewUserRequest, validateNewUser, ValidNewUser } from './user-rules';
import { UsersRepository } from './users.repository';

export const USERS_WRITE_SCOPE = 'users:write';

export interface CreateUserCommand extends NewUserRequest {
  /** The Idempotency-Key, when the client sent one. */
  idempotencyKey?: string;
  /** The gateway's keyed fingerprint of the HTTP request (method, path, canonical body); empty from other callers. */
  requestFingerprint: string;
}

export interface CreateUserResult {
  user: identityV1.User;
  /** True when this is the stored answer to an earlier request with the same key. */
  replayed: boolean;
}

/** A created user as stored under its idempotency key, and read back for a replay. */
const storedUser = z.object({
  id: z.string(),
  orgId: z.string(),
  email: z.string(),
  displayName: z.string(),
  status: z.string(),
  roles: z.array(z.string()),
  createdAt: z.string(),
  phone: z.string().optional(),
  /** Answers stored before entity tags existed have none. */
  etag: z.string().default(''),
});

const createdUser: OutcomeCodec<identityV1.User> = {
  successStatus: 201,
  encode: (user) => user,
  decode: (body) => storedUser.parse(body),
};

/** Callers never share keys: the org and who exactly is calling (a user and a client may share an id). */
const idempotencyScopeOf = (caller: Caller): KeyScope => ({
  orgId: caller.orgId,
  subject: `${caller.kind}:${caller.subject}`,
});

const forbidden = (detail: string) => new DomainError('forbidden', detail);
const cannotGrant = () => forbidden('You may not grant a role above your own.');

/**
 * `CreateUser` (interface §4.1, contract §3): a `pending` user in the caller's own org, with roles
 * the caller holds itself. With an Idempotency-Key the first outcome is stored and replayed.
 */
@Injectable()
export class CreateUserService {
  constructor(
    private readonly users: UsersRepository,
    private readonly orgs: OrgsRepository,
    private readonly hasher: PasswordHasher,
    private readonly idempotency: IdempotencyService,
    private readonly transactions: Transactions,
    private readonly outbox: OutboxRepository,
    private readonly relay: OutboxRelay,
    private readonly passwordSetTokens: PasswordSetTokensRepository,
    private readonly quota: UsersQuota,
    private readonly callerRoles: CallerRoles,
    private readonly clock: Clock,
  ) {}

  /** `accessToken`: the caller's own token, to ask the platform for the org's Users quota on its behalf. */
  async create(caller: Caller, command: CreateUserCommand, accessToken?: string): Promise<CreateUserResult> {
    requireScope(caller, USERS_WRITE_SCOPE);
    const { idempotencyKey, requestFingerprint, ...request } = command;
    const result = await this.createWithKey(caller, request, idempotencyKey, requestFingerprint, accessToken);
    if (!result.replayed) this.relay.nudge();
    return result;
  }

  private async createWithKey(
    caller: Caller,
    request: NewUserRequest,
    idempotencyKey: string | undefined,
    requestFingerprint: string,
    accessToken: string | undefined,
  ): Promise<CreateUserResult> {
    if (idempotencyKey === undefined) {
      return { user: await this.createOnce(caller, request, NO_CLAIM, accessToken), replayed: false };
    }
    // The gateway's fingerprint covers the HTTP request (keyed, so its password too); ours the request
    // as it reached this service, but only whether it had a password: the fingerprint is kept 24 h,
    // and a plain SHA-256 over the password would let a reader of the database test guesses at it
    // without argon2's cost.
    const { password, ...withoutPassword } = request;
    const { value, replayed } = await this.idempotency.run(
      {
        scope: idempotencyScopeOf(caller),
        key: idempotencyKey,
        fingerprint: fingerprintOf({
          operation: 'identity.v1.CreateUser',
          request: withoutPassword,
          password: password !== undefined,
          requestFingerprint,
        }),
      },
      createdUser,
      (claim) => this.createOnce(caller, request, claim, accessToken),
    );
    return { user: value, replayed };
  }

  private async createOnce(
    caller: Caller,
    request: NewUserRequest,
    claim: Claim<identityV1.User>,
    accessToken: string | undefined,
  ): Promise<identityV1.User> {
    const user = validateNewUser(request);
    const org = await this.authorize(caller, user);
    const [passwordHash, usersLimit] = await Promise.all([
      user.password === undefined ? null : this.hasher.hash(user.password),
      this.quota.limit(accessToken),
    ]);
    return this.transactions.run(async (db) => {
      // Judged again as the caller is now, its row held until the user is committed: a caller disabled,
      // deleted or demoted since its token was issued, or while this request ran, creates nothing.
      if (!mayGrant(await this.callerRoles.ofActive(caller, db, USERS_WRITE_SCOPE), user.roles)) throw cannotGrant();
      await this.quota.enforce(db, org.id, usersLimit);
      const now = this.clock.date();
      const created = await this.users.create(
        org.id,
        {
          id: newId(),
          email: user.email,
          emailNormalized: user.emailNormalized,
          phone: user.phone,
          displayName: user.displayName,
          passwordHash,
          status: 'pending',
          roles: user.roles,
          locale: user.locale,
          timeZone: user.timeZone,
          createdAt: this.clock.date(),
          activatedAt: null,
        },
        db,
      );
      const message = toUserMessage(created);
      // Contract §3: with send_activation the event carries a one-time password:set token for the
      // mailer's link; without it, the reset-password operation issues one. Same transaction as the
      // user: the event exists exactly when the user does (transactional outbox).
      const activation = user.sendActivation ? await this.passwordSetTokens.issue(db, created.id, now) : undefined;
      await this.outbox.append(
        db,
        USER_CREATED,
        {
          user_id: created.id,
          org_id: org.id,
          email: message.email,
          display_name: message.displayName,
          locale: user.locale,
          send_activation: user.sendActivation,
          ...(activation
            ? { activation_token: activation.token, activation_expires_at: activation.expiresAt.toISOString() }
            : {}),
        },
        now,
        caller,
      );
      await claim.complete(message, db);
      return message;
    });
  }

  /** Contract §3: only into the caller's own (existing) org, and only roles the caller holds itself. */
  private async authorize(caller: Caller, user: ValidNewUser): Promise<OrgRecord> {
    if (user.orgId !== undefined && user.orgId.toLowerCase() !== caller.orgId.toLowerCase()) {
      throw forbidden('Users can only be created in your own organization.');
    }
    const org = await this.orgs.findById(caller.orgId);
    if (!org) throw forbidden('Your organization does not exist.');
    if (!mayGrant(await this.callerRoles.of(caller), user.roles)) throw cannotGrant();
    return org;
  }
}
