interface Waiter<Row> {
  row: Row;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: rows added while a write is running are written together by the next one (one
 * INSERT), and each `add` resolves only once the write that holds its row has committed, so a caller
 * that got an answer has its row stored (nothing is lost on a crash). A failed write rejects every
 * row's caller in that batch with its error; the batches after it go on. One write at a time.
 */
export class GroupCommit<Row> {
  private queue: Array<Waiter<Row>> = [];
  private writing = false;

  constructor(
    private readonly write: (rows: Row[]) => Promise<void>,
    /** At most this many rows in one write. */
    private readonly maxBatch = 500,
  ) {}

  add(row: Row): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ row, resolve, reject });
      if (!this.writing) {
        this.writing = true;
        // The rest of this tick's rows join the first write.
        queueMicrotask(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      try {
        await this.write(batch.map((waiter) => waiter.row));
        for (const waiter of batch) waiter.resolve();
      } catch (error) {
        for (const waiter of batch) waiter.reject(error);
      }
    }
    this.writing = false;
  }
}
