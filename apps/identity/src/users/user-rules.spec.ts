import { DomainError } from '@acct/problem';

import {
  canonicalLocale,
  displayNameProblem,
  emailProblem,
  isTimeZone,
  NewUserRequest,
  normalizeEmail,
  validateNewUser,
} from './user-rules';

const request = (overrides: Partial<NewUserRequest> = {}): NewUserRequest => ({
  email: 'ada@example.com',
  displayName: 'Ada',
  roles: [],
  ...overrides,
});

/** The fields named by the validation_failed error `attempt` throws. */
const failingFields = (attempt: () => unknown): string[] => {
  try {
    attempt();
  } catch (error) {
    if (error instanceof DomainError && error.code === 'validation_failed') {
      return (error.options.errors ?? []).map((entry) => entry.field);
    }
    throw error;
  }
  return [];
};

describe('e-mail', () => {
  it.each(['a@b.co', 'Ada.Lovelace+tag@mail.example.com', "o'hara@example.io", 'x_y-z@sub-domain.example.org'])(
    'accepts %p',
    (email) => expect(emailProblem(email)).toBeUndefined(),
  );

  it.each([
    ['', 'must not be empty'],
    ['plainaddress', 'must be a valid e-mail address'],
    ['a@b', 'must be a valid e-mail address'],
    ['a..b@example.com', 'must be a valid e-mail address'],
    ['.a@example.com', 'must be a valid e-mail address'],
    ['a b@example.com', 'must be a valid e-mail address'],
    ['a@exam_ple.com', 'must be a valid e-mail address'],
    ['a@example.c', 'must be a valid e-mail address'],
    ['two@@example.com', 'must be a valid e-mail address'],
    [`${'l'.repeat(65)}@example.com`, 'must be a valid e-mail address'],
  ])('refuses %p: %s', (email, message) => expect(emailProblem(email)).toBe(message));

  it('accepts 254 characters and refuses 255', () => {
    const domain = `${'d'.repeat(63)}.${'e'.repeat(63)}.${'f'.repeat(63)}.com`;
    const at254 = `${'l'.repeat(254 - domain.length - 1)}@${domain}`;
    expect(at254).toHaveLength(254);
    expect(emailProblem(at254)).toBeUndefined();
    expect(emailProblem(`l${at254}`)).toBe('must be at most 254 characters');
  });

  it('trims the e-mail, keeps its case for display and lower-cases it for uniqueness', () => {
    const user = validateNewUser(request({ email: '  Ada@Example.COM\t' }));
    expect(user.email).toBe('Ada@Example.COM');
    expect(user.emailNormalized).toBe('ada@example.com');
    expect(normalizeEmail(' A@B.CO ')).toBe('a@b.co');
  });
});

describe('display name', () => {
  it('counts Unicode code points after trimming: 64 emoji pass, 65 do not', () => {
    expect(displayNameProblem('🙂'.repeat(64))).toBeUndefined();
    expect(displayNameProblem('🙂'.repeat(65))).toBe('must be at most 64 characters');
    expect(validateNewUser(request({ displayName: `  ${'é'.repeat(64)}  ` })).displayName).toBe('é'.repeat(64));
  });

  it('refuses an empty or blank name', () => {
    expect(failingFields(() => validateNewUser(request({ displayName: '   ' })))).toEqual(['display_name']);
    expect(displayNameProblem('')).toBe('must not be empty');
  });

  it.each(['tab\tinside', 'new\nline', 'nul\u0000', 'c1\u0085', 'lone \ud800 surrogate'])(
    'refuses control characters and broken text: %j',
    (name) => expect(displayNameProblem(name)).toBeDefined(),
  );

  it('accepts letters of any script', () => {
    expect(displayNameProblem('李小龍')).toBeUndefined();
    expect(displayNameProblem('Zoë Ångström-Łukasz')).toBeUndefined();
  });
});

describe('password', () => {
  it('takes 8 to 128 characters exactly as given, never trimmed', () => {
    expect(validateNewUser(request({ password: ' 7chars ' })).password).toBe(' 7chars ');
    expect(failingFields(() => validateNewUser(request({ password: '7 chars' })))).toEqual(['password']);
    expect(validateNewUser(request({ password: 'p'.repeat(128) })).password).toHaveLength(128);
    expect(failingFields(() => validateNewUser(request({ password: 'p'.repeat(129) })))).toEqual(['password']);
  });

  it('is optional', () => {
    expect(validateNewUser(request()).password).toBeUndefined();
  });
});

describe('roles', () => {
  it('defaults to member when none are given', () => {
    expect(validateNewUser(request()).roles).toEqual(['member']);
  });

  it('keeps the given roles', () => {
    expect(validateNewUser(request({ roles: ['viewer', 'admin'] })).roles).toEqual(['viewer', 'admin']);
  });

  it('names every unknown role by its position and refuses repeats', () => {
    expect(failingFields(() => validateNewUser(request({ roles: ['member', 'owner', 'root'] })))).toEqual([
      'roles.1',
      'roles.2',
    ]);
    expect(failingFields(() => validateNewUser(request({ roles: ['viewer', 'viewer'] })))).toEqual(['roles']);
    expect(failingFields(() => validateNewUser(request({ roles: ['Admin'] })))).toEqual(['roles.0']);
  });
});

describe('profile', () => {
  it('defaults to zh-CN and Asia/Shanghai', () => {
    expect(validateNewUser(request())).toMatchObject({ locale: 'zh-CN', timeZone: 'Asia/Shanghai' });
    expect(validateNewUser(request({ profile: {} }))).toMatchObject({ locale: 'zh-CN', timeZone: 'Asia/Shanghai' });
  });

  it.each([
    ['zh-CN', 'zh-CN'],
    ['en', 'en'],
    ['pt-br', 'pt-BR'],
    ['zh-Hant-TW', 'zh-Hant-TW'],
    ['en-u-ca-gregory', 'en-u-ca-gregory'],
  ])('accepts the BCP 47 tag %p as %p', (tag, canonical) => expect(canonicalLocale(tag)).toBe(canonical));

  it.each(['', 'x', 'en_US', 'en-', '123', 'zh CN', 'en-abcdefghi'])('refuses the locale %p', (tag) =>
    expect(canonicalLocale(tag)).toBeUndefined(),
  );

  it.each(['Asia/Shanghai', 'UTC', 'Europe/Paris', 'America/Argentina/Buenos_Aires', 'Asia/Kolkata', 'Etc/GMT+5'])(
    'accepts the IANA time zone %p',
    (zone) => expect(isTimeZone(zone)).toBe(true),
  );

  it.each(['', 'Mars/Olympus', 'asia/shanghai', '+08:00', 'GMT+8', 'Asia/Shanghai ', 'CST'])(
    'refuses the time zone %p',
    (zone) => expect(isTimeZone(zone)).toBe(false),
  );

  it('names the profile fields by their dotted path', () => {
    expect(
      failingFields(() => validateNewUser(request({ profile: { locale: 'nope!', timezone: 'Nowhere' } }))),
    ).toEqual(['profile.locale', 'profile.timezone']);
  });
});

describe('the whole request', () => {
  it('lists every failing field at once', () => {
    expect(
      failingFields(() =>
        validateNewUser({
          email: 'nope',
          displayName: '',
          password: 'short',
          roles: ['god'],
          orgId: '',
          profile: { locale: '', timezone: '' },
        }),
      ),
    ).toEqual(['email', 'display_name', 'password', 'roles.0', 'org_id', 'profile.locale', 'profile.timezone']);
  });

  it('defaults send_activation to true and keeps an explicit false', () => {
    expect(validateNewUser(request()).sendActivation).toBe(true);
    expect(validateNewUser(request({ sendActivation: false })).sendActivation).toBe(false);
  });
});
