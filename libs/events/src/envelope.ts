import { EGRESS_QUOTA, INSTANCES_QUOTA, OBJECT_STORAGE_QUOTA, VCPU_QUOTA } from '@acct/limits';
import { z } from 'zod';

/**
 * Every event on the bus: a versioned envelope (docs/events.md). `id` is unique per event and is sent
 * as `Nats-Msg-Id`, so JetStream drops a republished duplicate and consumers can deduplicate.
 */
export const envelope = <Data extends z.ZodType>(type: string, data: Data) =>
  z.object({
    id: z.uuid(),
    type: z.literal(type),
    version: z.literal(1),
    occurred_at: z.iso.datetime({ offset: true }),
    /** The `X-Request-Id` of the request that caused the event, when there was one (for the logs). */
    request_id: z.string().max(128).optional(),
    data,
  });

export const USAGE_REPORTED = 'platform.usage.reported';
export const USER_CREATED = 'identity.user.created';
export const USER_ACTIVATED = 'identity.user.activated';
export const PASSWORD_RESET_REQUESTED = 'identity.user.password_reset_requested';

/** Quotas other platform services report usage for, by dimension; `used` is the current total (a gauge). */
export const USAGE_METRICS = {
  compute: [VCPU_QUOTA.name, INSTANCES_QUOTA.name],
  storage: [OBJECT_STORAGE_QUOTA.name],
  network: [EGRESS_QUOTA.name],
} as const;

export const usageReported = envelope(
  USAGE_REPORTED,
  z
    .object({
      org_id: z.string().min(1).max(64),
      dimension: z.enum(['compute', 'storage', 'network']),
      name: z.string().min(1),
      used: z.number().finite().nonnegative(),
    })
    .strict()
    .refine((data) => (USAGE_METRICS[data.dimension] as readonly string[]).includes(data.name), {
      message: 'name is not a quota of that dimension',
      path: ['name'],
    }),
);
export type UsageReported = z.output<typeof usageReported>;

export const userCreated = envelope(
  USER_CREATED,
  z.object({
    user_id: z.uuid(),
    org_id: z.string().min(1),
    email: z.string(),
    display_name: z.string(),
    locale: z.string(),
    send_activation: z.boolean(),
    /** Present only when an activation e-mail is to be sent. */
    activation_token: z.string().optional(),
    activation_expires_at: z.string().optional(),
  }),
);
export type UserCreated = z.output<typeof userCreated>;
