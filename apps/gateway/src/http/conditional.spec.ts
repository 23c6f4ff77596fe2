import { ifNoneMatchMatches } from './conditional';

describe('ifNoneMatchMatches (RFC 9110 §13.1.2)', () => {
  it.each(['"a"', 'W/"a"', '"b", "a"', '"b",W/"a"', '*', ' * '])('matches %p against "a"', (field) =>
    expect(ifNoneMatchMatches(field, '"a"')).toBe(true),
  );

  it.each([undefined, '', '"b"', '"A"', 'W/"b", "c"', 'a'])('does not match %p against "a"', (field) =>
    expect(ifNoneMatchMatches(field, '"a"')).toBe(false),
  );
});
