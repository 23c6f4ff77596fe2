import {
  canonicalLocale,
  displayNameProblem,
  emailProblem,
  isLanguageTag,
  isTimeZone,
  passwordProblem,
} from './user-fields';

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

  // RFC 5321 §4.1.2 (RFC 1035 §2.3.1): a domain label is 1–63 letters, digits and hyphens, and ends
  // with a letter or digit. No mail reaches such an address: the activation e-mail would bounce.
  it.each(['a@example-.com', 'a@mail-.example.com', `a@${'d'.repeat(64)}.com`])(
    'refuses %p, whose domain has a label no host can have',
    (email) => expect(emailProblem(email)).toBe('must be a valid e-mail address'),
  );

  // RFC 5890 §2.3.2.1: an internationalised top-level domain's ASCII form (.中国, .рф), a host name like any other.
  it.each(['a@example.xn--fiqs8s', 'a@xn--80ak6aa92e.xn--p1ai'])(
    'accepts %p, under an internationalised TLD',
    (email) => expect(emailProblem(email)).toBeUndefined(),
  );

  it('accepts hyphens inside a label and a label of 63 characters', () => {
    expect(emailProblem('a@my-mail.example.com')).toBeUndefined();
    expect(emailProblem(`a@${'d'.repeat(63)}.com`)).toBeUndefined();
  });

  it('accepts a local part of 64 characters', () => {
    expect(emailProblem(`${'l'.repeat(64)}@example.com`)).toBeUndefined();
  });

  it('accepts 254 characters and refuses 255', () => {
    const domain = `${'d'.repeat(63)}.${'e'.repeat(63)}.${'f'.repeat(63)}.com`;
    const at254 = `${'l'.repeat(254 - domain.length - 1)}@${domain}`;
    expect(at254).toHaveLength(254);
    expect(emailProblem(at254)).toBeUndefined();
    expect(emailProblem(`l${at254}`)).toBe('must be at most 254 characters');
  });
});

describe('display name', () => {
  it('counts Unicode code points: 64 emoji pass, 65 do not', () => {
    expect(displayNameProblem('🙂'.repeat(64))).toBeUndefined();
    expect(displayNameProblem('🙂'.repeat(65))).toBe('must be at most 64 characters');
  });

  it('refuses an empty name', () => {
    expect(displayNameProblem('')).toBe('must not be empty');
  });

  // JavaScript's trim leaves format characters: a name of zero-width spaces or joiners shows as blank.
  it.each(['\u200b', '\u200b\u200d\u2060', '\ufeff \u200b'])('refuses a name with nothing visible: %j', (name) =>
    expect(displayNameProblem(name)).toBe('must not be empty'),
  );

  it('keeps format characters inside a visible name (a joiner in an emoji, a zero-width non-joiner)', () => {
    expect(displayNameProblem('👩\u200d💻 Ada')).toBeUndefined();
    expect(displayNameProblem('می\u200cخواهم')).toBeUndefined();
  });

  it.each(['tab\tinside', 'new\nline', 'nul\u0000', 'c1\u0085', 'lone \ud800 surrogate'])(
    'refuses control characters and broken text: %j',
    (name) => expect(displayNameProblem(name)).toBe('must not contain control characters'),
  );

  it('accepts letters of any script', () => {
    expect(displayNameProblem('李小龍')).toBeUndefined();
    expect(displayNameProblem('Zoë Ångström-Łukasz')).toBeUndefined();
  });
});

describe('password', () => {
  it('takes 8 to 128 code points', () => {
    expect(passwordProblem('1234567')).toBe('must be at least 8 characters');
    expect(passwordProblem('12345678')).toBeUndefined();
    expect(passwordProblem('🔑'.repeat(128))).toBeUndefined();
    expect(passwordProblem('🔑'.repeat(129))).toBe('must be at most 128 characters');
  });

  it('refuses text that is not valid Unicode', () => {
    expect(passwordProblem('abcdefgh\ud800')).toBe('must be valid Unicode text');
  });
});

describe('locale', () => {
  it.each([
    ['zh-CN', 'zh-CN'],
    ['en', 'en'],
    ['pt-br', 'pt-BR'],
    ['zh-Hant-TW', 'zh-Hant-TW'],
    ['sr-Latn-RS', 'sr-Latn-RS'],
    ['en-u-ca-gregory', 'en-u-ca-gregory'],
  ])('accepts the BCP 47 tag %p as %p', (tag, canonical) => {
    expect(canonicalLocale(tag)).toBe(canonical);
    expect(isLanguageTag(tag)).toBe(true);
  });

  // RFC 5646 §2.2.2: a language with its extended language subtag is a BCP 47 tag (Intl alone refuses
  // it); its canonical form is the extlang itself (§4.5), which Intl then canonicalizes as usual.
  it.each([
    ['zh-yue', 'yue'],
    ['zh-yue-HK', 'yue-HK'],
    ['zh-cmn-Hans-CN', 'zh-Hans-CN'],
    ['ar-arz', 'arz'],
    ['sgn-ase', 'ase'],
  ])('accepts the extended language tag %p as %p', (tag, canonical) => {
    expect(canonicalLocale(tag)).toBe(canonical);
    expect(isLanguageTag(tag)).toBe(true);
  });

  it.each(['', 'x', 'en_US', 'en-', '123', 'zh CN', 'en-abcdefghi', 'english!', 'zh-yue-cmn', 'zh-yue-'])(
    'refuses the locale %p',
    (tag) => {
      expect(canonicalLocale(tag)).toBeUndefined();
      expect(isLanguageTag(tag)).toBe(false);
    },
  );
});

describe('time zone', () => {
  it.each([
    'Asia/Shanghai',
    'UTC',
    'Europe/Paris',
    'America/Argentina/Buenos_Aires',
    'Asia/Kolkata',
    'Etc/GMT+5',
    'US/Pacific',
    'Europe/Kyiv',
  ])('accepts the IANA time zone %p', (zone) => expect(isTimeZone(zone)).toBe(true));

  // Intl alone takes the lower-case spelling, GMT and the POSIX-style names: they are not IANA names.
  it.each([
    '',
    'Mars/Olympus',
    'asia/shanghai',
    'asia shanghai',
    '+08:00',
    'GMT+8',
    'Asia/Shanghai ',
    'CST',
    'GMT',
    'EST5EDT',
    'utc',
  ])('refuses the time zone %p', (zone) => expect(isTimeZone(zone)).toBe(false));
});
