import { QUOTA_DIMENSIONS } from '@acct/limits';
import { z } from 'zod';

import { apiSchemas } from '../openapi/api-schemas';

/** Interface §2.5: `GET /v2/system/quota`. */
export const quotaReport = z
  .object({
    org_id: z.string(),
    quotas: z.array(
      z
        .object({
          dimension: z.enum(QUOTA_DIMENSIONS),
          name: z.string(),
          used: z.number().nonnegative(),
          limit: z.number().nonnegative(),
          unit: z.string().describe('core, count, GB, req/day.'),
        })
        .strict()
        .register(apiSchemas, { id: 'Quota' }),
    ),
  })
  .strict()
  .register(apiSchemas, {
    id: 'QuotaReport',
    description: "The caller's org's quota limits and usage (interface §2.5).",
  });

export type QuotaReport = z.output<typeof quotaReport>;
