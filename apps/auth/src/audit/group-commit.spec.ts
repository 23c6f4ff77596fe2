import { GroupCommit } from './group-commit';

/** A store whose writes the test completes (or fails) one by one. */
class ScriptedStore {
  writes: number[][] = [];
  private pending: Array<{ resolve: () => void; reject: (error: Error) => void }> = [];

  write = (rows: number[]) => {
    this.writes.push(rows);
    return new Promise<void>((resolve, reject) => this.pending.push({ resolve, reject }));
  };

  commit() {
    this.pending.shift()?.resolve();
  }

  fail(error: Error) {
    this.pending.shift()?.reject(error);
  }
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

/** Which of the promises have resolved ('ok'), rejected (the message) or are still waiting. */
function track(promises: Array<Promise<void>>) {
  const states: string[] = promises.map(() => 'waiting');
  promises.forEach((promise, index) => {
    void promise.then(
      () => (states[index] = 'ok'),
      (error: Error) => (states[index] = error.message),
    );
  });
  return states;
}

describe('GroupCommit', () => {
  it('writes the rows added while a write runs together, and each caller waits for its own batch', async () => {
    const store = new ScriptedStore();
    const commits = new GroupCommit(store.write);
    const states = track([commits.add(1), commits.add(2)]);
    await settle();
    const later = track([commits.add(3), commits.add(4), commits.add(5)]);
    await settle();
    expect(store.writes).toEqual([[1, 2]]); // 3–5 wait for the running write
    expect(states).toEqual(['waiting', 'waiting']);

    store.commit();
    await settle();
    expect(states).toEqual(['ok', 'ok']);
    expect(store.writes).toEqual([
      [1, 2],
      [3, 4, 5],
    ]);
    expect(later).toEqual(['waiting', 'waiting', 'waiting']);

    store.commit();
    await settle();
    expect(later).toEqual(['ok', 'ok', 'ok']);
  });

  it('rejects every caller of a failed batch with its error, and goes on with the next batch', async () => {
    const store = new ScriptedStore();
    const commits = new GroupCommit(store.write);
    const failed = track([commits.add(1), commits.add(2), commits.add(3)]);
    await settle();
    const next = track([commits.add(4)]);
    store.fail(new Error('connection lost'));
    await settle();
    expect(failed).toEqual(['connection lost', 'connection lost', 'connection lost']);
    expect(next).toEqual(['waiting']);
    store.commit();
    await settle();
    expect(next).toEqual(['ok']);
    expect(store.writes).toEqual([[1, 2, 3], [4]]);
  });

  it('never writes more than maxBatch rows at once', async () => {
    const store = new ScriptedStore();
    const commits = new GroupCommit(store.write, 2);
    const states = track([1, 2, 3, 4, 5].map((row) => commits.add(row)));
    for (let i = 0; i < 3; i += 1) {
      await settle();
      store.commit();
    }
    await settle();
    expect(store.writes).toEqual([[1, 2], [3, 4], [5]]);
    expect(states).toEqual(['ok', 'ok', 'ok', 'ok', 'ok']);
  });
});
