import { repeatedMemberName } from './request-body';

describe('repeatedMemberName', () => {
  it('finds a name an object holds twice, however deep, and reads escapes', () => {
    expect(repeatedMemberName('{"a":1,"b":2,"a":3}')).toBe('a');
    expect(repeatedMemberName('{"x":{"y":[{"z":1,"z":2}]}}')).toBe('z');
    expect(repeatedMemberName('{"locale":"en","\\u006cocale":"fr"}')).toBe('locale');
    expect(repeatedMemberName('{ "a" : 1 ,\n "a" : 2 }')).toBe('a');
  });

  it('leaves alone a name in two objects, a value equal to a name and names inside strings', () => {
    for (const json of [
      '{"a":{"a":1},"b":[{"a":1},{"a":2}]}',
      '{"a":"a","b":["a","a"]}',
      '{"a":"\\"a\\":1,\\"a\\"","b":"{\\"c\\":1,\\"c\\":2}"}',
      '{}',
      '[]',
      '"a"',
      '[{"a":1},{"a":1}]',
    ]) {
      expect(repeatedMemberName(json)).toBeUndefined();
    }
  });

  it('walks a body nested thousands of levels deep', () => {
    expect(repeatedMemberName(`${'['.repeat(100_000)}${']'.repeat(100_000)}`)).toBeUndefined();
    expect(repeatedMemberName(`${'{"a":'.repeat(10_000)}{"b":1,"b":2}${'}'.repeat(10_000)}`)).toBe('b');
  });
});
