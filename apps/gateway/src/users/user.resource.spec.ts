import { ifMatchTags } from './user.resource';

describe('If-Match (RFC 9110 §13.1.1)', () => {
  it('is no condition when absent', () => expect(ifMatchTags(undefined)).toEqual([]));
  it('passes * through', () => expect(ifMatchTags(' * ')).toEqual(['*']));
  it('unquotes every strong tag of a list', () =>
    expect(ifMatchTags('"abc", W/"weak", "d-e_f"')).toEqual(['abc', 'd-e_f']));
  it('keeps a quoted "*" an entity-tag (which no user has), not the wildcard *', () => {
    expect(ifMatchTags('"*"')).toEqual(['']);
    expect(ifMatchTags('"abc", "*"')).toEqual(['abc']);
  });
  it.each(['W/"weak"', 'unquoted', ''])('turns %p into a tag that matches nothing', (header) =>
    expect(ifMatchTags(header)).toEqual(['']),
  );
});
