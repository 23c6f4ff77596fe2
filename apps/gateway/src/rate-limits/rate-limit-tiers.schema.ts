import { z } from 'zod';

import { apiSchemas } from '../openapi/api-schemas';

/** Interface §2.4: `GET /v2/system/rate-limits`. */
export const rateLimitTiers = z
  .object({
    tiers: z.array(
      z
        .object({
          group: z.string().describe('Endpoint group, e.g. auth, users.read, users.write, system.read.'),
          limit: z.string().regex(/^\d+\/min$/),
          burst: z.int().positive(),
          scope: z.enum(['per-ip', 'per-token']),
        })
        .strict()
        .register(apiSchemas, { id: 'RateLimitTier' }),
    ),
    notice: z.string().describe('Exceeding a limit is answered with 429 and Retry-After.'),
  })
  .strict()
  .register(apiSchemas, {
    id: 'RateLimitTiers',
    description: "The caller's org's tier per endpoint group (interface §2.4).",
  });

export type RateLimitTiers = z.output<typeof rateLimitTiers>;
