import { createHmac } from 'node:crypto';

import { call, expectProblem, issue, newOrg, raiseLimit, tokenRequest, uniqueEmail, User } from './support/client';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** RFC 4648 base32 (no padding), as otpauth:// secrets are written. */
function base32Decode(text: string): Buffer {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const character of text.replace(/=+$/, '').toUpperCase()) {
    const value = alphabet.indexOf(character);
    if (value < 0) throw new Error(`not base32: ${character}`);
    bits += value.toString(2).padStart(5, '0');
  }
  const bytes = bits.match(/.{8}/g) ?? [];
  return Buffer.from(bytes.map((byte) => parseInt(byte, 2)));
}

/** RFC 6238 TOTP: SHA-1, 30 s steps, 6 digits; `stepOffset` moves to a neighbouring step. */
function totp(secret: string, stepOffset = 0): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(Date.now() / 1000 / 30) + stepOffset));
  const digest = createHmac('sha1', base32Decode(secret)).update(counter).digest();
  const offset = digest[digest.length - 1] & 0x0f;
  const value = (digest.readUInt32BE(offset) & 0x7fffffff) % 1_000_000;
  return String(value).padStart(6, '0');
}

/** Contract §4 MFA: TOTP enrolment and confirmation, then mfa_code at login (interface §5.5, §7). */
describe('two-step verification (TOTP)', () => {
  it('enrols, confirms, then requires mfa_code: 403 mfa_required without it, invalid_grant for a wrong or reused code', async () => {
    const org = await newOrg('mfa');
    raiseLimit(org.org_id, 'users.write');
    const email = uniqueEmail('mfa');
    const password = 'mfa-password-1';
    const created = await call<User>('/v2/users', {
      token: org.clientToken,
      json: { email, display_name: 'Mfa', send_activation: false },
    });
    const reset = await call<{ token: string }>(`/v2/users/${created.body.id}/reset-password`, {
      token: org.clientToken,
      json: { send_email: false },
    });
    await call('/v2/users/me/password', { token: reset.body.token, json: { password } });
    const login = (mfaCode?: string) =>
      tokenRequest({ grant_type: 'password', username: email, password, ...(mfaCode ? { mfa_code: mfaCode } : {}) });
    const { access_token: token } = await issue({ grant_type: 'password', username: email, password });

    const enrolled = await call<{ secret: string; otpauth_uri: string }>('/v2/users/me/mfa/totp', {
      token,
      json: { password },
    });
    expect(enrolled.status).toBe(201);
    expect(enrolled.headers.get('cache-control')).toBe('no-store');
    expect(Object.keys(enrolled.body).sort()).toEqual(['otpauth_uri', 'secret']);
    expect(enrolled.body.secret).toMatch(/^[A-Z2-7]{16,}$/);
    expect(enrolled.body.otpauth_uri).toMatch(/^otpauth:\/\/totp\//);
    expect(new URL(enrolled.body.otpauth_uri).searchParams.get('secret')).toBe(enrolled.body.secret);

    // Not confirmed yet: the password alone still logs in.
    expect((await login()).status).toBe(200);

    const wrong = String((Number(totp(enrolled.body.secret)) + 1) % 1_000_000).padStart(6, '0');
    expectProblem(
      await call('/v2/users/me/mfa/totp/confirm', { token, json: { code: wrong } }),
      400,
      'invalid_mfa_code',
    );
    const confirmed = await call<{ enabled: boolean; confirmed_at: string }>('/v2/users/me/mfa/totp/confirm', {
      token,
      json: { code: totp(enrolled.body.secret) },
    });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toEqual({ enabled: true, confirmed_at: expect.stringMatching(ISO) });

    const missing = expectProblem(await login(), 403, 'mfa_required');
    expect(missing).toEqual(expect.objectContaining({ error: 'mfa_required', error_description: expect.any(String) }));
    expect(expectProblem(await login(wrong), 400, 'invalid_grant').error).toBe('invalid_grant');

    // The next step's code is within ±1 step; it works once.
    const next = totp(enrolled.body.secret, 1);
    const accepted = await login(next);
    expect(accepted.status).toBe(200);
    expect(accepted.body.token_type).toBe('Bearer');
    expectProblem(await login(next), 400, 'invalid_grant');
  });
});
