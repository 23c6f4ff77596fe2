import { Clock } from '@acct/clock';
import { USER_CREATED } from '@acct/events';
import { DomainError } from '@acct/problem';
import { displayNameProblem, emailProblem, passwordProblem } from '@acct/user-fields';
import { Injectable } from '@nestjs/common';

import { newId } from '../ids';
import { orgNameProblem } from '../orgs/org-rules';
import { OrgsRepository } from '../orgs/orgs.repository';
import { OutboxRepository } from '../outbox/outbox.repository';
import { PasswordHasher } from '../passwords/password-hasher';
import { Transactions } from '../prisma/transactions';
import { DEFAULT_LOCALE, DEFAULT_TIME_ZONE, normalizeEmail } from '../users/user-rules';
import { UsersRepository } from '../users/users.repository';
import { FieldErrors } from '../validation';

export const DEFAULT_ADMIN_DISPLAY_NAME = 'Administrator';

export interface BootstrapInput {
  orgName: string;
  email: string;
  password: string;
  displayName?: string;
}

export interface BootstrapResult {
  orgId: string;
  adminUserId: string;
  /** False when both already existed and nothing changed. */
  created: boolean;
}

interface ValidBootstrap {
  orgName: string;
  email: string;
  emailNormalized: string;
  password: string;
  displayName: string;
}

/** The same rules as CreateUser; fields are named after the CLI's options. */
export function validateBootstrapInput(input: BootstrapInput): ValidBootstrap {
  const errors = new FieldErrors();
  const orgName = input.orgName.trim();
  errors.check('org', orgNameProblem(orgName));
  const email = input.email.trim();
  errors.check('email', emailProblem(email));
  errors.check('password', passwordProblem(input.password));
  const displayName = (input.displayName ?? DEFAULT_ADMIN_DISPLAY_NAME).trim();
  errors.check('display-name', displayNameProblem(displayName));
  errors.throwIfAny();
  return { orgName, email, emailNormalized: normalizeEmail(email), password: input.password, displayName };
}

/**
 * Contract §0 bootstrap, identity's part: an org and an **active** admin in it. Idempotent: with the
 * same org name and e-mail it changes nothing (the password is not rehashed) and answers the same ids.
 * An e-mail registered elsewhere (another org, not as an admin, or as an admin who never activated its
 * account) is refused.
 */
@Injectable()
export class BootstrapService {
  constructor(
    private readonly orgs: OrgsRepository,
    private readonly users: UsersRepository,
    private readonly hasher: PasswordHasher,
    private readonly transactions: Transactions,
    private readonly outbox: OutboxRepository,
    private readonly clock: Clock,
  ) {}

  async bootstrap(input: BootstrapInput): Promise<BootstrapResult> {
    const valid = validateBootstrapInput(input);
    for (let attempt = 1; ; attempt += 1) {
      const existing = await this.existing(valid);
      if (existing) return existing;
      try {
        return await this.create(valid);
      } catch (error) {
        // A concurrent bootstrap registered the e-mail first: look again (it may be this very admin).
        if (attempt < 2 && error instanceof DomainError && error.code === 'email_taken') continue;
        throw error;
      }
    }
  }

  private async existing(valid: ValidBootstrap): Promise<BootstrapResult | undefined> {
    const user = await this.users.findByEmailInAnyOrg(valid.emailNormalized);
    if (!user) return undefined;
    const org = await this.orgs.findById(user.orgId);
    if (!org || org.name !== valid.orgName) {
      throw new DomainError('email_taken', `${valid.email} already belongs to a user of another organization.`);
    }
    if (!user.roles.includes('admin')) {
      throw new DomainError('email_taken', `${valid.email} already belongs to a user of ${org.name} who is no admin.`);
    }
    // The bootstrap's own admin is active from the start; one that never set a password was created
    // over the API (pending): answering its ids would report an admin who cannot sign in, with a
    // password that was never set.
    if (user.activatedAt === null) {
      throw new DomainError(
        'email_taken',
        `${valid.email} already belongs to an admin of ${org.name} who has not activated the account.`,
      );
    }
    return { orgId: org.id, adminUserId: user.id, created: false };
  }

  private async create(valid: ValidBootstrap): Promise<BootstrapResult> {
    const passwordHash = await this.hasher.hash(valid.password);
    return this.transactions.run(async (db) => {
      const now = this.clock.date();
      const org = await this.orgs.ensure(valid.orgName, newId(), now, db);
      const admin = await this.users.create(
        org.id,
        {
          id: newId(),
          email: valid.email,
          emailNormalized: valid.emailNormalized,
          phone: null,
          displayName: valid.displayName,
          passwordHash,
          status: 'active',
          roles: ['admin'],
          locale: DEFAULT_LOCALE,
          timeZone: DEFAULT_TIME_ZONE,
          createdAt: now,
          activatedAt: now,
        },
        db,
      );
      // Counted like every other user (the platform's "Users" quota); no e-mail: the admin is active.
      await this.outbox.append(
        db,
        USER_CREATED,
        {
          user_id: admin.id,
          org_id: org.id,
          email: admin.email,
          display_name: admin.displayName,
          locale: DEFAULT_LOCALE,
          send_activation: false,
        },
        now,
      );
      return { orgId: org.id, adminUserId: admin.id, created: true };
    });
  }
}
