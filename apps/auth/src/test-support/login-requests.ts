import { DomainError } from '@acct/problem';

import { TokenRequest } from '../tokens/grants/grant';

/** A password-grant request as the gateway passes it on; a test overrides what it is about. */
export const passwordLogin = (fields: Partial<TokenRequest> = {}): TokenRequest => ({
  grantType: 'password',
  username: '',
  password: 'right-password',
  scope: '',
  mfaCode: '',
  clientId: '',
  clientSecret: '',
  refreshToken: '',
  clientIp: '203.0.113.10',
  deviceId: '',
  userAgent: 'jest',
  ...fields,
});

/** `ok`, or the code of the DomainError the request was refused with (for counting outcomes). */
export async function outcomeOf(work: Promise<unknown>): Promise<string> {
  try {
    await work;
    return 'ok';
  } catch (error) {
    if (error instanceof DomainError) return error.code;
    throw error;
  }
}
