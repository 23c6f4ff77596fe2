import { EGRESS_QUOTA, INSTANCES_QUOTA, OBJECT_STORAGE_QUOTA, VCPU_QUOTA } from '@acct/limits';
import { z } from 'zod';

/**
 * An RFC 3339 date-time with its offset, as Postgres can store it: Zod also takes year 0000 and
 * offsets up to ±23:59, which Postgres refuses (out of range). A consumer storing such a stamp (the
 * platform's usage reports, from other teams' services) failed on it every second, for ever; it is
 * refused as malformed instead.
 */
const storableDateTime = () =>
  z.iso
    .datetime({ offset: true })
    .refine((value) => !value.startsWith('0000') && !/[+-](?:1[6-9]|2\d):\d\d$/.test(value), {
      message: 'must be from year 0001 on, with an offset within ±15:59',
    });

/**
 * Every event on the bus: a versioned envelope (docs/events.md). `id` is unique per event and is sent
 * as `Nats-Msg-Id`, so JetStream drops a republished duplicate and consumers can deduplicate.
 */
export const envelope = <Type extends string, Data extends z.ZodType>(type: Type, data: Data) =>
  z.object({
    id: z.uuid(),
    type: z.literal(type),
    version: z.literal(1),
    occurred_at: storableDateTime(),
    /** The `X-Request-Id` of the request that caused the event, when there was one (for the logs). */
    request_id: z.string().max(128).optional(),
    /**
     * Who caused the event, when a caller did: the subject (user id, or client id) of the request's
     * access token. Auth's admin-action audit records it as the actor.
     */
    actor_id: z.string().max(200).optional(),
    data,
  });

export const USAGE_REPORTED = 'platform.usage.reported' as const;
export const USER_CREATED = 'identity.user.created' as const;
export const USER_ACTIVATED = 'identity.user.activated' as const;
export const PASSWORD_RESET_REQUESTED = 'identity.user.password_reset_requested' as const;

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
      // No control character: never part of an org id, and Postgres cannot store a NUL, so such a report
      // could never be applied (it was retried every second, for ever) and is refused instead.
      org_id: z
        .string()
        .min(1)
        .max(64)
        .regex(/^\P{Cc}*$/u, 'must not contain control characters'),
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

/**
 * Contract §3: a one-time password:set token (activation or reset) is valid 24 hours. Identity issues
 * them for this long; the mailer assumes it of an event from before events named their expiry.
 */
export const PASSWORD_SET_TOKEN_LIFETIME_MS = 24 * 3600 * 1000;

export const userCreated = envelope(
  USER_CREATED,
  z.object({
    user_id: z.uuid(),
    org_id: z.string().min(1),
    email: z.string(),
    display_name: z.string(),
    locale: z.string(),
    send_activation: z.boolean(),
    /**
     * Present only when an activation e-mail is to be sent; left out when the user was deleted before
     * the event was published.
     */
    activation_token: z.string().optional(),
    activation_expires_at: z.string().optional(),
  }),
);
export type UserCreated = z.output<typeof userCreated>;

/** A `pending` user set a password and is `active` now (exactly once per user). */
export const userActivated = envelope(USER_ACTIVATED, z.object({ user_id: z.uuid(), org_id: z.string().min(1) }));
export type UserActivated = z.output<typeof userActivated>;

/** An admin asked for a password-reset (or, for a pending user, activation) e-mail: who, and the one-time token for the link. */
export const passwordResetRequested = envelope(
  PASSWORD_RESET_REQUESTED,
  z.object({
    user_id: z.uuid(),
    org_id: z.string().min(1),
    email: z.string(),
    display_name: z.string(),
    locale: z.string(),
    /** Absent when the user was deleted before the event was published: no mail is sent. */
    token: z.string().optional(),
    expires_at: z.string(),
    /** True when the user is still `pending`: the link activates the account (absent in older events: a reset). */
    activation: z.boolean().optional(),
  }),
);
export type PasswordResetRequested = z.output<typeof passwordResetRequested>;

/**
 * An admin had a one-time password-set token handed to it (`reset-password` with `send_email: false`)
 * rather than mailed: who, for the admin-action audit. No token: the caller holds it.
 */
export const PASSWORD_RESET_ISSUED = 'identity.user.password_reset_issued' as const;
export const passwordResetIssued = envelope(
  PASSWORD_RESET_ISSUED,
  z.object({ user_id: z.uuid(), org_id: z.string().min(1).max(64) }).strict(),
);

/** A user's password was set or reset (activation, reset link): its earlier sessions end. */
export const USER_PASSWORD_CHANGED = 'identity.user.password_changed';
/** A user was disabled by an admin: its sessions end, it cannot sign in. */
export const USER_DISABLED = 'identity.user.disabled';
/** A user was deleted: its sessions end. */
export const USER_DELETED = 'identity.user.deleted';

/**
 * The events that end every session of a user (docs/events.md): auth revokes the user's refresh
 * families created before `occurred_at` and every access token issued to it before then.
 */
export const SESSION_ENDING_EVENTS = [USER_PASSWORD_CHANGED, USER_DISABLED, USER_DELETED] as const;
export type SessionEndingEventType = (typeof SESSION_ENDING_EVENTS)[number];

export const isSessionEndingEvent = (type: string): type is SessionEndingEventType =>
  (SESSION_ENDING_EVENTS as readonly string[]).includes(type);

/** The one data shape of the three: who, in which org, and when the change happened. */
export const sessionEndingData = z
  .object({
    user_id: z.uuid(),
    org_id: z.string().min(1).max(64),
    /** The moment of the change (ISO 8601): tokens and families older than it are revoked. */
    occurred_at: storableDateTime(),
  })
  .strict();
export type SessionEndingData = z.output<typeof sessionEndingData>;

export const userPasswordChanged = envelope(USER_PASSWORD_CHANGED, sessionEndingData);
export const userDisabled = envelope(USER_DISABLED, sessionEndingData);
export const userDeleted = envelope(USER_DELETED, sessionEndingData);

/** A disabled user was enabled by an admin (it gets back `active`, or `pending` if it never set a password). */
export const USER_ENABLED = 'identity.user.enabled';
export const userEnabled = envelope(
  USER_ENABLED,
  z.object({ user_id: z.uuid(), org_id: z.string().min(1).max(64) }).strict(),
);

/** The user fields a `PATCH /v2/users/{id}` may change (contract §7), as `identity.user.updated` names them. */
export const USER_PATCH_FIELDS = ['display_name', 'roles', 'phone', 'profile.locale', 'profile.timezone'] as const;

/**
 * An admin changed a user (`PATCH /v2/users/{id}`): which fields changed (never their values, but for
 * the roles, which the audit shows before and after). No event when nothing changed.
 */
export const USER_UPDATED = 'identity.user.updated';
export const userUpdated = envelope(
  USER_UPDATED,
  z
    .object({
      user_id: z.uuid(),
      org_id: z.string().min(1).max(64),
      changed: z.array(z.enum(USER_PATCH_FIELDS)).min(1),
      /** Present when `roles` changed. */
      roles_before: z.array(z.string().max(64)).max(20).optional(),
      roles_after: z.array(z.string().max(64)).max(20).optional(),
    })
    .strict(),
);

/** Every event on the bus by its type (its subject): one schema each, shared by producers and consumers. */
export const EVENT_SCHEMAS = {
  [USAGE_REPORTED]: usageReported,
  [USER_CREATED]: userCreated,
  [USER_ACTIVATED]: userActivated,
  [PASSWORD_RESET_REQUESTED]: passwordResetRequested,
  [PASSWORD_RESET_ISSUED]: passwordResetIssued,
  [USER_PASSWORD_CHANGED]: userPasswordChanged,
  [USER_DISABLED]: userDisabled,
  [USER_DELETED]: userDeleted,
  [USER_ENABLED]: userEnabled,
  [USER_UPDATED]: userUpdated,
} as const;

export type EventType = keyof typeof EVENT_SCHEMAS;
/** The `data` of an event of `type`, as its producer writes it. */
export type EventData<Type extends EventType> = z.input<(typeof EVENT_SCHEMAS)[Type]>['data'];
/** An event of `type` as consumers read it. */
export type EventOf<Type extends EventType> = z.output<(typeof EVENT_SCHEMAS)[Type]>;

/** The schema of a session-ending event of `type`. */
export const sessionEndingEvent = (type: SessionEndingEventType) => EVENT_SCHEMAS[type];
