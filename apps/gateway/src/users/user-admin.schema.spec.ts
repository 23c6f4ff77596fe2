import { DomainError } from '@acct/problem';

import { parseOrFail } from '../http/validation';
import { listUsersQuery } from './user-admin.schema';

const errorsOf = (query: unknown) => {
  try {
    parseOrFail(listUsersQuery, query);
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    return (error as DomainError).options.errors;
  }
  throw new Error('query was accepted');
};

describe('GET /v2/users query', () => {
  it('says which statuses there are, in the words of the other fields, for an unknown or repeated one', () => {
    for (const status of ['gone', ['pending', 'active']]) {
      expect(errorsOf({ status })).toEqual([{ field: 'status', message: 'must be one of pending, active, disabled' }]);
    }
  });
});
