import { Caller, INTERNAL_IDENTITY_SCOPE } from '@acct/access-token';
import { requireScope } from '@acct/access-token';
import { identityV1 } from '@acct/contracts';
import { Injectable } from '@nestjs/common';

import { toUserMessage } from '../users/user';
import { normalizeEmail } from '../users/user-rules';
import { CredentialsRepository } from './credentials.repository';
import { PasswordHasher } from './password-hasher';

/**
 * Checks a login for the auth service (scope `internal:identity`). An unknown e-mail, a user without
 * a password and a wrong password all answer `{valid: false}` after the same argon2 work. A correct
 * password answers the user whatever its status: auth decides what `pending` means.
 */
@Injectable()
export class VerifyPasswordService {
  constructor(
    private readonly credentials: CredentialsRepository,
    private readonly hasher: PasswordHasher,
  ) {}

  async verify(caller: Caller, email: string, password: string): Promise<identityV1.VerifyPasswordResponse> {
    requireScope(caller, INTERNAL_IDENTITY_SCOPE);
    const found = await this.credentials.findByEmail(normalizeEmail(email));
    const valid = await this.hasher.verifyOrBurn(found?.passwordHash ?? null, password);
    return valid && found ? { valid: true, user: toUserMessage(found.user) } : { valid: false, user: undefined };
  }
}
