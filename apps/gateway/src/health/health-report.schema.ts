import { z } from 'zod';

import { apiSchemas } from '../openapi/api-schemas';

/** Interface §2.3, contract §5: `GET /v2/system/health`. */
export const healthReport = z
  .object({
    status: z.enum(['healthy', 'degraded', 'down']),
    version: z.string().regex(/^\d+(\.\d+)+$/),
    region: z.string(),
    checks: z.array(
      z
        .object({
          component: z.string().describe('database, cache, object_storage, message_bus, identity, auth, platform.'),
          status: z.enum(['up', 'down']),
          latency_ms: z.number().nonnegative(),
        })
        .strict(),
    ),
    uptime_seconds: z.int().nonnegative(),
  })
  .strict()
  .register(apiSchemas, {
    id: 'HealthReport',
    description: 'The service and its dependencies (interface §2.3, contract §5).',
  });

export type HealthReport = z.output<typeof healthReport>;
