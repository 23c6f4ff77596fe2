import { loadAuthConfig } from '../config';
import { totpUri } from './totp';

describe('totpUri', () => {
  it('names the configured issuer and the account in a label an authenticator splits at its colon', () => {
    const uri = new URL(totpUri('JBSWY3DPEHPK3PXP', 'Acme & Co', 'a+b@example.com'));
    const label = decodeURIComponent(uri.pathname.slice(1));
    // Key URI format: issuer and account name are split at the label's (first) colon.
    expect(label.split(':')).toEqual(['Acme & Co', 'a+b@example.com']);
    expect(uri.searchParams.get('issuer')).toBe('Acme & Co');
  });

  it('refuses an issuer with a colon at start-up: authenticators would read its tail as the account', () => {
    // "Acme: Prod" made the label `Acme:%20Prod:alice@…`, shown as issuer "Acme", account " Prod:alice@…".
    expect(() => loadAuthConfig({ MFA_TOTP_ISSUER: 'Acme: Prod' })).toThrow(/MFA_TOTP_ISSUER/);
    expect(loadAuthConfig({ MFA_TOTP_ISSUER: 'Acme Prod' }).MFA_TOTP_ISSUER).toBe('Acme Prod');
  });
});
