import { JetStreamManager, RetentionPolicy, StorageType } from 'nats';

/** JetStream streams and the subjects each one keeps. */
export const STREAMS = {
  identity: { name: 'IDENTITY_EVENTS', subjects: ['identity.>'] },
  platformUsage: { name: 'PLATFORM_USAGE', subjects: ['platform.usage.>'] },
} as const;

/** How long a stream keeps a message (its `max_age`): no message is delivered again later than this. */
export const STREAM_MAX_AGE_MS = 7 * 24 * 3600 * 1000;

/** Duplicate window of JetStream's `Nats-Msg-Id` deduplication. */
const DUPLICATE_WINDOW_NS = 24 * 3600 * 1e9;

/** Creates the stream when missing (publishers and consumers both call it; it is idempotent). */
export async function ensureStream(jsm: JetStreamManager, stream: { name: string; subjects: readonly string[] }) {
  try {
    await jsm.streams.info(stream.name);
  } catch {
    try {
      await jsm.streams.add({
        name: stream.name,
        subjects: [...stream.subjects],
        retention: RetentionPolicy.Limits,
        storage: StorageType.File,
        duplicate_window: DUPLICATE_WINDOW_NS,
        max_age: STREAM_MAX_AGE_MS * 1e6,
      });
    } catch (error) {
      // Another process created it between our two calls.
      await jsm.streams.info(stream.name).catch(() => {
        throw error;
      });
    }
  }
}
