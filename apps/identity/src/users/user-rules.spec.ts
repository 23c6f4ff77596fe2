import { DomainError } from '@acct/problem';

import { NewUserRequest, normalizeEmail, validateNewUser } from './user-rules';

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
  it('trims the e-mail, keeps its case for display and lower-cases it for uniqueness', () => {
    const user = validateNewUser(request({ email: '  Ada@Example.COM\t' }));
    expect(user.email).toBe('Ada@Example.COM');
    expect(user.emailNormalized).toBe('ada@example.com');
    expect(normalizeEmail(' A@B.CO ')).toBe('a@b.co');
  });
});

describe('display name', () => {
  it('counts Unicode code points after trimming', () => {
    expect(validateNewUser(request({ displayName: `  ${'é'.repeat(64)}  ` })).displayName).toBe('é'.repeat(64));
  });

  it('refuses an empty or blank name', () => {
    expect(failingFields(() => validateNewUser(request({ displayName: '   ' })))).toEqual(['display_name']);
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

  it('keeps the canonical form of the locale', () => {
    expect(validateNewUser(request({ profile: { locale: 'pt-br' } })).locale).toBe('pt-BR');
  });

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
