import { z } from 'zod';

/**
 * One revocation, as stored in Redis and announced on NATS. Each lives until `expiresAt` (ms since
 * the epoch): the latest moment a token it can affect may still be accepted.
 * - `token`: one access token, by its `jti`.
 * - `session`: every access token carrying `sid` (issued from one refresh family).
 * - `subject`: every token of `sub` in `orgId` issued before `before` (ms): password change, disable,
 *   delete.
 */
export const revocationSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('token'), jti: z.string().min(1).max(200), expiresAt: z.number().int() }),
  z.object({ kind: z.literal('session'), sid: z.string().min(1).max(200), expiresAt: z.number().int() }),
  z.object({
    kind: z.literal('subject'),
    orgId: z.string().min(1).max(200),
    sub: z.string().min(1).max(200),
    before: z.number().int(),
    expiresAt: z.number().int(),
  }),
]);
export type Revocation = z.output<typeof revocationSchema>;

export const revocationBatchSchema = z.array(revocationSchema).max(10_000);

/**
 * The most revocations one stream entry or notice carries when written: well under what a reader
 * takes (revocationBatchSchema) and NATS's 1 MiB payload. A longer list (the revocations that piled up
 * while Redis was away) is written as several: one over the reader's maximum was dropped whole.
 */
export const WRITE_BATCH = 1000;

/** `revocations` in order, as lists of at most WRITE_BATCH. */
export function inWriteBatches(revocations: readonly Revocation[]): Revocation[][] {
  const batches: Revocation[][] = [];
  for (let start = 0; start < revocations.length; start += WRITE_BATCH) {
    batches.push(revocations.slice(start, start + WRITE_BATCH));
  }
  return batches;
}

/** What the check needs of a verified access token (its claims). */
export interface RevocableToken {
  jti: string;
  /** The refresh family the token was issued from (`sid`); none for client_credentials. */
  sid?: string;
  sub: string;
  orgId: string;
  /** `iat`, in seconds. */
  iat: number;
}

/** Parses a JSON batch of revocations; undefined when anything in it is malformed. */
export function parseBatch(json: string): Revocation[] | undefined {
  try {
    const result = revocationBatchSchema.safeParse(JSON.parse(json));
    return result.success ? result.data : undefined;
  } catch {
    return undefined;
  }
}
