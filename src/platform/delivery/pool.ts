/** Workers allow six open connections per invocation; more would only queue inside the runtime. */
export const PARALLEL_SENDS = 6;

/**
 * A pool for items handed over in parts: `add` queues more (run in order behind the ones before, at
 * most `width` at a time), `done` waits until every item added so far has run.
 */
export function openPool<T>(width: number, work: (item: T) => Promise<void>) {
  const waiting: T[] = [];
  let next = 0;
  const lanes = new Set<Promise<void>>();
  // A lane takes the next waiting item until none is left; `add` opens lanes up to the width.
  const lane = async () => {
    while (next < waiting.length) await work(waiting[next++] as T);
  };
  return {
    add(items: readonly T[]) {
      waiting.push(...items);
      while (lanes.size < width && next < waiting.length) {
        const running: Promise<void> = lane().finally(() => lanes.delete(running));
        lanes.add(running);
      }
    },
    async done(): Promise<void> {
      while (lanes.size > 0) await Promise.all(lanes);
    },
  };
}

/** Runs `work` over `items`, at most `width` at a time, keeping the results in order. */
export async function inPool<T, R>(items: T[], width: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  const pool = openPool<number>(width, async (i) => {
    results[i] = await work(items[i] as T);
  });
  pool.add(items.map((_, i) => i));
  await pool.done();
  return results;
}
