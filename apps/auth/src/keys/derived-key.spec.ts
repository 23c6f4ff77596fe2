import { DEV_KEY_ENCRYPTION_KEY } from '../config';
import { deriveKey } from './derived-key';

describe('deriveKey', () => {
  // Recorded from the derivation device credentials and sign-in seals made before it was shared:
  // a change here would invalidate every device credential, CSRF token and MFA ticket in use.
  it('derives the same keys as before for the device credentials and the sign-in seals', () => {
    const sevens = Buffer.alloc(32, 7).toString('base64');
    expect(deriveKey(sevens, 'auth:device-credentials').toString('hex')).toBe(
      '1e7a4f427cbf3485e7a61b92dcdba3083904c52f73406f1794be7da7692dd716',
    );
    expect(deriveKey(sevens, 'auth:sign-in-seals').toString('hex')).toBe(
      '8addef5f425d4c6245708f1bb84b3a78326aadf17b410653db709158587a896e',
    );
    expect(deriveKey(DEV_KEY_ENCRYPTION_KEY, 'auth:device-credentials').toString('hex')).toBe(
      '438522d03cedf0ffd880b8235d5b5683a56c4f2daba5c50e4b708715f11005b3',
    );
    expect(deriveKey(DEV_KEY_ENCRYPTION_KEY, 'auth:sign-in-seals').toString('hex')).toBe(
      '8a29fba0fb2883c2f6d381006bab15f0084b00c2d096d6ee3273b3452df362c4',
    );
  });
});
