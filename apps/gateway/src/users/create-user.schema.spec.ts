import { DomainError } from '@acct/problem';

import { parseOrFail } from '../http/validation';
import { createUserBody } from './create-user.schema';

const valid = { email: '  Ada@Example.COM ', display_name: ' Ada ' };

const errorsOf = (body: unknown) => {
  try {
    parseOrFail(createUserBody, body);
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    return (error as DomainError).options.errors;
  }
  throw new Error('body was accepted');
};

describe('POST /v2/users body', () => {
  it('accepts the minimal body, trimming e-mail and display name', () => {
    expect(parseOrFail(createUserBody, valid)).toEqual({ email: 'Ada@Example.COM', display_name: 'Ada' });
  });

  it('accepts every optional field', () => {
    const body = {
      ...valid,
      password: 'correct horse',
      roles: ['admin', 'viewer'],
      org_id: 'org-1',
      send_activation: false,
      profile: { locale: 'en-GB', timezone: 'Europe/Berlin' },
    };
    expect(parseOrFail(createUserBody, body)).toMatchObject({ roles: ['admin', 'viewer'], send_activation: false });
  });

  it('lists every failing field at once', () => {
    const errors = errorsOf({
      email: 'not-an-email',
      display_name: '',
      password: 'short',
      roles: [],
      profile: { locale: 'not a locale!', timezone: 'Mars/Olympus' },
      extra: 1,
    });
    expect(errors?.map((error) => error.field).sort()).toEqual(
      ['display_name', 'email', 'extra', 'password', 'profile.locale', 'profile.timezone', 'roles'].sort(),
    );
  });

  it('says which required fields are missing', () => {
    expect(errorsOf({})).toEqual([
      { field: 'email', message: 'is required' },
      { field: 'display_name', message: 'is required' },
    ]);
  });

  it('says a field sent with the wrong type has the wrong type, not that it is missing', () => {
    expect(errorsOf({ ...valid, display_name: null, send_activation: 'true', roles: 'admin' })).toEqual([
      { field: 'display_name', message: 'must be a string' },
      { field: 'roles', message: 'must be an array' },
      { field: 'send_activation', message: 'must be a boolean' },
    ]);
  });

  it.each([
    [{ ...valid, email: `${'a'.repeat(250)}@b.co` }, 'email'],
    [{ ...valid, display_name: 'x'.repeat(65) }, 'display_name'],
    [{ ...valid, display_name: 'tab\there' }, 'display_name'],
    [{ ...valid, password: 'p'.repeat(129) }, 'password'],
    [{ ...valid, roles: ['member', 'member'] }, 'roles'],
    [{ ...valid, roles: ['owner'] }, 'roles.0'],
    [{ ...valid, roles: 'admin' }, 'roles'],
    [{ ...valid, send_activation: 'yes' }, 'send_activation'],
    [{ ...valid, profile: { locale: 'en', theme: 'dark' } }, 'profile.theme'],
    [{ ...valid, profile: 'zh-CN' }, 'profile'],
    [{ ...valid, email: 42 }, 'email'],
  ])('refuses %j at %s', (body, field) => {
    expect(errorsOf(body)?.map((error) => error.field)).toEqual([field]);
  });

  it('refuses a display name holding a lone surrogate (text that is not valid Unicode), as identity does', () => {
    expect(errorsOf({ ...valid, display_name: 'a\ud800b' })).toEqual([
      { field: 'display_name', message: 'must not contain control characters' },
    ]);
    expect(parseOrFail(createUserBody, { ...valid, display_name: '\ud83d\ude00' }).display_name).toBe('😀');
  });

  it('refuses an e-mail whose local part is over 64 characters, as identity does, beside the other fields', () => {
    expect(errorsOf({ ...valid, display_name: '', email: `${'a'.repeat(65)}@example.test` })).toEqual([
      { field: 'email', message: 'must be a valid e-mail address' },
      { field: 'display_name', message: 'must not be empty' },
    ]);
    expect(parseOrFail(createUserBody, { ...valid, email: `${'a'.repeat(64)}@example.test` }).email).toHaveLength(77);
  });

  it('refuses an e-mail whose domain has a label ending in a hyphen or over 63 characters, as identity does', () => {
    expect(errorsOf({ ...valid, email: 'ada@example-.com' })).toEqual([
      { field: 'email', message: 'must be a valid e-mail address' },
    ]);
    expect(errorsOf({ ...valid, email: `ada@${'d'.repeat(64)}.com` })?.map((error) => error.field)).toEqual(['email']);
  });

  it('names a broken e-mail once, though both the syntax and the deliverable shape refuse it', () => {
    expect(errorsOf({ ...valid, email: 'ada@пример.рф' })).toEqual([
      { field: 'email', message: 'must be a valid e-mail address' },
    ]);
    expect(errorsOf({ ...valid, email: `${'a'.repeat(65)}@exa mple.test` })).toEqual([
      { field: 'email', message: 'must be a valid e-mail address' },
    ]);
  });

  it('counts display name length in code points, not UTF-16 units', () => {
    expect(parseOrFail(createUserBody, { ...valid, display_name: '😀'.repeat(64) }).display_name).toHaveLength(128);
    expect(errorsOf({ ...valid, display_name: '😀'.repeat(65) })?.[0]?.field).toBe('display_name');
  });
});

describe('profile rules', () => {
  it('lists a time zone identity refuses beside the other failing fields', () => {
    expect(
      errorsOf({ ...valid, email: 'not-an-email', profile: { timezone: 'asia/shanghai' } })?.map(
        (error) => error.field,
      ),
    ).toEqual(['email', 'profile.timezone']);
  });
});
