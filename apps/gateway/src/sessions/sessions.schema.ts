import { z } from 'zod';

/** Contract §7: one live session (refresh family) of a user, as `GET /v2/users/{id}/sessions` lists it. */
export const session = z
  .object({
    id: z.uuid(),
    client_id: z.string(),
    created_at: z.iso.datetime(),
    last_used_at: z.iso.datetime(),
    ip: z.string().nullable(),
    device_id: z.string().nullable(),
    user_agent: z.string().nullable(),
  })
  .strict();
export const sessionList = z.object({ items: z.array(session) }).strict();
export type SessionList = z.output<typeof sessionList>;
