/**
 * Linear-interpolation percentiles (numpy's default, "type 7"), the rule that reproduces the
 * hosted engine's censoring (methodology section 3). Order statistics come from quickselect on
 * a scratch copy, so several thresholds cost a few linear passes instead of a sort.
 */

/**
 * Percentiles of `values[0..count)` at the given fractions in [0, 1], written to `out`.
 * `scratch` must hold at least `count` numbers; it is overwritten.
 */
export function percentiles(
  values: ArrayLike<number>,
  count: number,
  fractions: ArrayLike<number>,
  scratch: Float64Array,
  out: Float64Array,
): void {
  for (let i = 0; i < count; i++) scratch[i] = values[i];
  // Visit fractions in ascending order so each selection only searches to the right of the last.
  const order = Array.from({ length: fractions.length }, (_, t) => t).sort((a, b) => fractions[a] - fractions[b]);
  let left = 0;
  for (const t of order) {
    const h = (count - 1) * fractions[t];
    const lo = Math.floor(h);
    const low = select(scratch, left, count - 1, lo);
    left = lo;
    if (h === lo || lo + 1 >= count) {
      out[t] = low;
      continue;
    }
    // After selecting position lo, everything to its right is >= it: the next order statistic is their minimum.
    let next = Infinity;
    for (let i = lo + 1; i < count; i++) if (scratch[i] < next) next = scratch[i];
    out[t] = low + (h - lo) * (next - low);
  }
}

/** Hoare-style quickselect: puts the k-th smallest of a[left..right] at a[k] and returns it. */
function select(a: Float64Array, left: number, right: number, k: number): number {
  while (right > left) {
    // Median of three as pivot keeps sorted and reversed inputs linear.
    const mid = (left + right) >>> 1;
    const pivot = median3(a[left], a[mid], a[right]);
    let i = left;
    let j = right;
    while (i <= j) {
      while (a[i] < pivot) i++;
      while (a[j] > pivot) j--;
      if (i <= j) {
        const tmp = a[i];
        a[i] = a[j];
        a[j] = tmp;
        i++;
        j--;
      }
    }
    if (k <= j) right = j;
    else if (k >= i) left = i;
    else return a[k];
  }
  return a[k];
}

function median3(a: number, b: number, c: number): number {
  return a < b ? (b < c ? b : a < c ? c : a) : a < c ? a : b < c ? c : b;
}
