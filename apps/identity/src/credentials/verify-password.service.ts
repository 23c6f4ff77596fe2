import { Caller, INTERNAL_IDENTITY_SCOPE } from '@acct/access-token';
import { requireScope } from '@acct/access-token';
import { identityV1 } from '@acct/contracts';
import { Injectable, Logger } from '@nestjs/common';

import { PasswordHasher } from '../passwords/password-hasher';
import { toUserMessage } from '../users/user';
import { CredentialsRepository, loginNameOf } from './credentials.repository';

/**
 * Checks a login for the auth service (scope `internal:identity`). The username is an e-mail or a
 * mobile number. An unknown username, a user without a password and a wrong password all answer
 * `{valid: false}` after the same argon2 work. A correct password answers the user whatever its
 * status: auth decides what `pending` and `disabled` mean. A correct password whose hash was made with
 * other argon2 parameters is stored again with the configured ones.
 */
@Injectable()
export class VerifyPasswordService {
  private readonly logger = new Logger(VerifyPasswordService.name);

  constructor(
    private readonly credentials: CredentialsRepository,
    private readonly hasher: PasswordHasher,
  ) {}

  async verify(caller: Caller, username: string, password: string): Promise<identityV1.VerifyPasswordResponse> {
    requireScope(caller, INTERNAL_IDENTITY_SCOPE);
    const found = await this.credentials.findForPasswordCheck(loginNameOf(username));
    const valid = await this.hasher.verifyOrBurn(found?.passwordHash ?? null, password);
    if (!valid || !found) return { valid: false, user: undefined };
    if (found.passwordHash && this.hasher.isOutdated(found.passwordHash)) {
      // Not waited for: a login costs one hash, whatever the stored one's age (auth's deadline is 2 s).
      void this.rehash(found.user.id, found.passwordHash, password);
    }
    return { valid: true, user: toUserMessage(found.user) };
  }

  /**
   * Stores the password at the configured argon2 cost (PasswordHasher.isOutdated). Best effort: the
   * login was right either way, and the next one tries again. Never rejects.
   */
  private async rehash(userId: string, checked: string, password: string): Promise<void> {
    try {
      await this.credentials.upgradeHash(userId, checked, await this.hasher.hash(password));
    } catch (error) {
      this.logger.warn(`password hash not upgraded: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /**
   * The one key auth counts a username's failed logins under (contract §7: the lockout and the
   * ceiling key on the user's canonical identity): `user:<id>` for a known user, so its e-mail and its
   * phone share one count; the normalised username (`email:…`, `phone:…`) for nobody's. A known
   * user's id and org come with it, so auth's login audit can attribute failed logins to the org.
   */
  async loginKey(caller: Caller, username: string): Promise<identityV1.ResolveLoginKeyResponse> {
    requireScope(caller, INTERNAL_IDENTITY_SCOPE);
    const name = loginNameOf(username);
    const found = await this.credentials.find(name);
    if (found) return { key: `user:${found.user.id}`, userId: found.user.id, orgId: found.user.orgId };
    return { key: 'phone' in name ? `phone:${name.phone}` : `email:${name.email}` };
  }
}
