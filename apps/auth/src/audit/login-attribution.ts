/** The known user a refused login was for: the login audit records it with its org (contract §7). */
export interface LoginAttribution {
  subject: string;
  orgId: string;
}

const attributions = new WeakMap<object, LoginAttribution>();

/**
 * Marks a login refusal as one of a known user, so the login audit attributes it to the user's org
 * (the org's admins see failed logins of their users). Says nothing to the client: the refusal is
 * answered as it is.
 */
export function attributeFailure(refusal: unknown, who: LoginAttribution): void {
  if (refusal !== null && typeof refusal === 'object') attributions.set(refusal, who);
}

/** The known user a refusal was marked with, if any. */
export function attributionOf(refusal: unknown): Partial<LoginAttribution> {
  return (refusal !== null && typeof refusal === 'object' && attributions.get(refusal)) || {};
}
