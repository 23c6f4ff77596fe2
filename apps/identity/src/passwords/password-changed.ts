import { EventData, USER_PASSWORD_CHANGED } from '@acct/events';

/**
 * The data of `identity.user.password_changed`, written in the transaction that sets the password:
 * auth ends the user's sessions begun before `at` and its access tokens issued before then.
 */
export const passwordChanged = (
  user: { id: string; orgId: string },
  at: Date,
): EventData<typeof USER_PASSWORD_CHANGED> => ({
  user_id: user.id,
  org_id: user.orgId,
  occurred_at: at.toISOString(),
});
