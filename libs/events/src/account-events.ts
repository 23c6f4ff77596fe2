import { z } from 'zod';

import { envelope } from './envelope';

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
    occurred_at: z.iso.datetime({ offset: true }),
  })
  .strict();
export type SessionEndingData = z.output<typeof sessionEndingData>;

export const userPasswordChanged = envelope(USER_PASSWORD_CHANGED, sessionEndingData);
export const userDisabled = envelope(USER_DISABLED, sessionEndingData);
export const userDeleted = envelope(USER_DELETED, sessionEndingData);

/** The schema of a session-ending event of `type`. */
export const sessionEndingEvent = (type: SessionEndingEventType) =>
  ({ [USER_PASSWORD_CHANGED]: userPasswordChanged, [USER_DISABLED]: userDisabled, [USER_DELETED]: userDeleted })[type];
