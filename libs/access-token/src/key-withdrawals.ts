import { AccessTokenVerifier } from './verifier';

/**
 * The notice topic (on the revocations' NATS connection) of signing keys auth withdrew: the message
 * is the JSON array of their `kid`s.
 */
export const KEY_WITHDRAWAL_TOPIC = 'signing-keys-withdrawn';

/** The most kids one notice names (a withdrawal deletes the few keys a rotation leaves). */
const MAX_WITHDRAWN_KIDS = 100;

/** Where notices come from (libs/revocation's `Revocations`). */
export interface NoticeSource {
  onNotice(topic: string, handler: (message: string) => void): Promise<void>;
}

/** The kids of a withdrawal notice; none for a malformed one. */
export function withdrawnKidsOf(message: string): string[] {
  try {
    const kids: unknown = JSON.parse(message);
    if (!Array.isArray(kids) || kids.length > MAX_WITHDRAWN_KIDS) return [];
    return kids.filter((kid): kid is string => typeof kid === 'string' && kid.length > 0 && kid.length <= 200);
  } catch {
    return [];
  }
}

/**
 * Has `verifier` refuse the tokens of a withdrawn key as soon as the withdrawal is announced, rather
 * than once its key set is a minute old (KEY_SET_MAX_AGE_MS, which still applies to a notice NATS lost).
 */
export function followKeyWithdrawals(verifier: AccessTokenVerifier, notices: NoticeSource): AccessTokenVerifier {
  void notices.onNotice(KEY_WITHDRAWAL_TOPIC, (message) => verifier.withdrawKeys(withdrawnKidsOf(message)));
  return verifier;
}
