/**
 * Bounded concurrency: `mapLimit` runs an async function over a list a few at a time, results in
 * order (the client reading a group's rows, the notebook submitting a backtest's requests).
 */

/** How many reads or submissions of one group are in flight at once. */
export const GROUP_CONCURRENCY = 8;

/** `fn` over `items`, at most `limit` at a time, results in order. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
