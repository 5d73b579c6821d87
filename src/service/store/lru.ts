/** The embedded store's result and record caches (embedded.ts). */

/** A small least-recently-used cache bounded by a total weight. */
export class LruCache<K, V> {
  private readonly map = new Map<K, V>();
  private total = 0;

  constructor(
    private readonly capacity: number,
    private readonly weigh: (value: V) => number,
  ) {}

  get(key: K): V | undefined {
    const value = this.map.get(key);
    if (value === undefined) return undefined;
    this.map.delete(key);
    this.map.set(key, value);
    return value;
  }

  /**
   * Puts `value` in place of `expected` when the cache still holds `expected` for `key` (keeping
   * its place); answers whether it did.
   */
  swap(key: K, expected: V, value: V): boolean {
    if (this.map.get(key) !== expected) return false;
    this.total += this.weigh(value) - this.weigh(expected);
    this.map.set(key, value);
    return true;
  }

  delete(key: K): void {
    const old = this.map.get(key);
    if (old === undefined) return;
    this.total -= this.weigh(old);
    this.map.delete(key);
  }

  set(key: K, value: V): void {
    this.delete(key);
    const weight = this.weigh(value);
    if (weight > this.capacity) return;
    this.map.set(key, value);
    this.total += weight;
    for (const [k, v] of this.map) {
      if (this.total <= this.capacity) break;
      this.map.delete(k);
      this.total -= this.weigh(v);
    }
  }
}
