import { randomUUID } from 'node:crypto';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids of orgs and users are random UUIDs. */
export const newId = (): string => randomUUID();

/** Whether `value` can be an id at all; anything else is never looked up (and never found). */
export const isUuid = (value: string): boolean => UUID.test(value);
