import { normalizePhone } from './phone';

describe('normalizePhone', () => {
  it.each([
    ['+8613800138000', '+8613800138000'],
    ['+86 138 0013 8000', '+8613800138000'],
    ['+86-138-0013-8000', '+8613800138000'],
    ['  +86 (138) 0013-8000 ', '+8613800138000'],
    ['+86.138.0013.8000', '+8613800138000'],
    ['008613800138000', '+8613800138000'],
    ['0086 138 0013 8000', '+8613800138000'],
    ['+1 (415) 555-2671', '+14155552671'],
    ['+44 20 7946 0958', '+442079460958'],
    ['+33 6 12 34 56 78', '+33612345678'],
  ])('normalises %p to %p', (input, phone) => {
    expect(normalizePhone(input)).toEqual({ phone });
  });

  it.each([
    ['a national number without a country code', '13800138000'],
    ['a national number with its trunk prefix', '020 7946 0958'],
    ['a number that is too short for its country', '+861380013800'],
    ['letters', '+86 138 CALL ME'],
    ['an empty string', ''],
    ['only a plus', '+'],
    ['two plus signs', '++8613800138000'],
    ['an e-mail', 'ada@example.com'],
    ['an unknown country code', '+999 1234 5678'],
  ])('refuses %s', (_, input) => {
    expect(normalizePhone(input)).toEqual({ problem: expect.any(String) });
  });
});
