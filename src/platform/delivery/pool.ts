/** Workers allow six open connections per invocation; more would only queue inside the runtime. */
export const PARALLEL_SENDS = 6;

/** Runs `work` over `items`, at most `width` at a time, keeping the results in order. */
export async function inPool<T, R>(items: T[], width: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        results[i] = await work(items[i] as T);
      }
    }),
  );
  return results;
}
