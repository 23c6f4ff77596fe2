import { DomainError } from '@acct/problem';
import { z } from 'zod';

import { pageQuery } from './page-query';
import { parseOrFail } from './validation';

const query = z.object(pageQuery);

const refusalOf = (input: Record<string, unknown>) => {
  try {
    parseOrFail(query, input);
  } catch (error) {
    return (error as DomainError).options.errors;
  }
  throw new Error(`accepted ${JSON.stringify(input)}`);
};

describe('pageQuery', () => {
  it('reads a decimal limit from 1 to 100, and no limit as none', () => {
    expect(parseOrFail(query, { limit: '1' })).toEqual({ limit: 1 });
    expect(parseOrFail(query, { limit: '100', cursor: 'abc' })).toEqual({ limit: 100, cursor: 'abc' });
    expect(parseOrFail(query, { limit: '007' })).toEqual({ limit: 7 });
    expect(parseOrFail(query, {})).toEqual({});
  });

  it.each(['0x10', '1e1', ' 5', '5 ', '+5', '5.0', '', '-1'])(
    'refuses limit=%j: only decimal digits are read as a number',
    (limit) => {
      expect(refusalOf({ limit })).toEqual([{ field: 'limit', message: 'must be a number' }]);
    },
  );

  it('refuses a repeated limit and one out of range', () => {
    expect(refusalOf({ limit: ['1', '2'] })).toEqual([{ field: 'limit', message: 'must be a number' }]);
    expect(refusalOf({ limit: '0' })).toEqual([{ field: 'limit', message: 'must be an integer from 1 to 100' }]);
    expect(refusalOf({ limit: '101' })).toEqual([{ field: 'limit', message: 'must be an integer from 1 to 100' }]);
  });
});
