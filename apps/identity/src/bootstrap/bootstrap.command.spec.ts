import { DomainError } from '@acct/problem';

import { parseBootstrapArgs, UsageError } from './bootstrap.command';
import { validateBootstrapInput } from './bootstrap.service';

describe('bootstrap command line', () => {
  it('reads --name value and --name=value, and ignores --json (the output is always JSON)', () => {
    expect(parseBootstrapArgs(['--org', 'Acme', '--email=a@b.co', '--password', 'p w d = x', '--json'])).toEqual({
      orgName: 'Acme',
      email: 'a@b.co',
      password: 'p w d = x',
      displayName: undefined,
    });
    expect(
      parseBootstrapArgs(['--org', 'A', '--email', 'e', '--password', 'p', '--display-name', 'Root']),
    ).toMatchObject({
      displayName: 'Root',
    });
  });

  it.each([
    [['--org', 'A', '--email', 'e'], '--org, --email and --password are required'],
    [['--org', 'A', '--email', 'e', '--password'], '--password needs a value'],
    [['--org', 'A', '--org', 'B', '--email', 'e', '--password', 'p'], '--org given twice'],
    [['--org', 'A', '--email', 'e', '--password', 'p', '--colour', 'red'], 'unknown option --colour'],
    [['Acme'], 'unexpected argument "Acme"'],
  ])('refuses %j: %s', (args, message) => {
    expect(() => parseBootstrapArgs(args)).toThrow(new UsageError(message));
  });
});

describe('bootstrap input', () => {
  it('applies the CreateUser rules and names the failing options', () => {
    let error: unknown;
    try {
      validateBootstrapInput({ orgName: '', email: 'nope', password: 'short', displayName: '\u0007' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).options.errors?.map((entry) => entry.field)).toEqual([
      'org',
      'email',
      'password',
      'display-name',
    ]);
  });

  it('trims the org name and the e-mail and lower-cases the e-mail for uniqueness', () => {
    expect(validateBootstrapInput({ orgName: ' Acme ', email: ' Root@Acme.io ', password: 'long enough' })).toEqual({
      orgName: 'Acme',
      email: 'Root@Acme.io',
      emailNormalized: 'root@acme.io',
      password: 'long enough',
      displayName: 'Administrator',
    });
  });
});
