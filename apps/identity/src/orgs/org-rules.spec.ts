import { orgNameProblem } from './org-rules';

describe('org name', () => {
  it('takes 1 to 100 characters without control characters', () => {
    expect(orgNameProblem('Acme Corp.')).toBeUndefined();
    expect(orgNameProblem('阿里巴巴')).toBeUndefined();
    expect(orgNameProblem('')).toBe('must not be empty');
    expect(orgNameProblem('o'.repeat(100))).toBeUndefined();
    expect(orgNameProblem('o'.repeat(101))).toBe('must be at most 100 characters');
    expect(orgNameProblem('line\nbreak')).toBe('must not contain control characters');
  });
});
