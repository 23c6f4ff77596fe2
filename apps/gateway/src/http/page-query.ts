import { z } from 'zod';

const LIMIT = 'must be an integer from 1 to 100';

/**
 * A list's `limit`, as typed in the query string: decimal digits only. `Number()` alone would read
 * `0x10` as 16, `1e1` as 10 and ` 5` as 5; such a value is refused as not a number instead, as a
 * repeated `limit` is.
 */
const limit = z.preprocess(
  (value) => (typeof value === 'string' && !/^[0-9]+$/.test(value) ? Number.NaN : value),
  z.coerce.number(LIMIT).int(LIMIT).min(1, LIMIT).max(100, LIMIT).optional(),
);

/** `limit` and `cursor` of every paged list (contract §7: users, both audit lists). */
export const pageQuery = {
  limit,
  cursor: z.string().max(512, 'must be a next_cursor this API returned').optional(),
};
