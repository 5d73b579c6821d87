/**
 * Linear-interpolation percentiles (numpy's default, "type 7"), the rule that reproduces the
 * hosted engine's censoring (docs/methodology.md section 3).
 *
 * The order statistics come from a histogram select: one branch-free pass counts the values into
 * equal-width bins between min and max, the bins holding the wanted ranks are located from the
 * cumulative counts, and only their few values are gathered and sorted. A Grid asks for thousands
 * of percentiles of 10^3 to 10^4 scores; this costs two linear passes each, with none of
 * quickselect's unpredictable branches. The number of bins follows the count (about 8 values a
 * bin, 16 to 256 bins), so that small inputs do not pay for 256 bins; the order statistics, and
 * so the percentiles, do not depend on it.
 */
import { snapCut } from "./cut.js";

const MAX_BINS = 256;
const MIN_BINS = 16;
/** Gathered bins up to this size are sorted in place by insertion (no subarray view). */
const INSERTION_SORT = 24;
// One spare bin takes the maximum itself ((max - min) * scale = bins exactly).
const counts = new Int32Array(MAX_BINS + 1);
const starts = new Int32Array(MAX_BINS + 1);
const fills = new Int32Array(MAX_BINS + 1);
/** below[b]: how many values fall in the bins before b. */
const below = new Int32Array(MAX_BINS + 1);
/** Bins of the current call, and the ranks whose values are the known minimum and maximum (-1: none); module scratch like the arrays above. */
let bins = MAX_BINS;
let lowest = -1;
let highest = -1;

/**
 * Percentiles of `values[0..count)` at the given fractions in [0, 1], written to `out`.
 * `scratch` (at least `count` long, not `values` itself) is overwritten. A caller that already
 * knows the values' minimum and maximum passes them to save a pass. With a tie `width` (cut.ts),
 * values within it of each other are equal: an interpolated percentile within the width of one of
 * its two neighbours is that neighbour, and values spread by no more than the width are constant.
 */
export function percentiles(
  values: ArrayLike<number>,
  count: number,
  fractions: ArrayLike<number>,
  scratch: Float64Array,
  out: Float64Array,
  knownMin = NaN,
  knownMax = NaN,
  width = 0,
): void {
  let min = knownMin;
  let max = knownMax;
  if (!(min <= max)) {
    min = Infinity;
    max = -Infinity;
    for (let i = 0; i < count; i++) {
      const v = values[i];
      min = v < min ? v : min;
      max = v > max ? v : max;
    }
  }
  if (!(max - min > width)) {
    for (let t = 0; t < fractions.length; t++) out[t] = min;
    return;
  }
  bins = Math.min(MAX_BINS, Math.max(MIN_BINS, count >> 3));
  const scale = bins / (max - min);
  counts.fill(0, 0, bins + 1);
  for (let i = 0; i < count; i++) counts[((values[i] - min) * scale) | 0]++;
  counts[bins - 1] += counts[bins];
  counts[bins] = 0;
  below[0] = 0;
  for (let b = 0; b < bins; b++) below[b + 1] = below[b] + counts[b];

  // Mark the bins holding a wanted rank, and lay them out one after another in scratch. The
  // smallest and the largest value are known (`lowest`, `highest`): their ranks need no bin.
  lowest = min !== 0 ? 0 : -1;
  highest = max !== 0 ? count - 1 : -1;
  starts.fill(-1, 0, bins + 1);
  let next = 0;
  for (let t = 0; t < fractions.length; t++) {
    const h = (count - 1) * fractions[t];
    const lo = Math.floor(h);
    for (let rank = lo; rank <= (h > lo && lo + 1 < count ? lo + 1 : lo); rank++) {
      if (rank === lowest || rank === highest) continue;
      const b = binOf(rank);
      if (starts[b] >= 0) continue;
      starts[b] = next;
      next += counts[b];
    }
  }
  if (next > 0) {
    for (let b = 0; b < bins; b++) fills[b] = starts[b];
    for (let i = 0; i < count; i++) {
      const v = values[i];
      let b = ((v - min) * scale) | 0;
      if (b === bins) b = bins - 1;
      if (starts[b] >= 0) scratch[fills[b]++] = v;
    }
    // Sort each gathered bin; a rank's value is then at its offset within its bin.
    for (let b = 0; b < bins; b++) {
      if (starts[b] < 0) continue;
      if (counts[b] <= INSERTION_SORT) insertionSort(scratch, starts[b], starts[b] + counts[b]);
      else scratch.subarray(starts[b], starts[b] + counts[b]).sort();
    }
  }
  for (let t = 0; t < fractions.length; t++) {
    const h = (count - 1) * fractions[t];
    const lo = Math.floor(h);
    const low = valueAt(scratch, lo, min, max);
    if (h > lo && lo + 1 < count) {
      const high = valueAt(scratch, lo + 1, min, max);
      out[t] = snapCut(low, high, low + (h - lo) * (high - low), width);
    } else out[t] = low;
  }
}

/** Sorts values[from..to) ascending, in place. */
function insertionSort(values: Float64Array, from: number, to: number): void {
  for (let i = from + 1; i < to; i++) {
    const v = values[i];
    let k = i - 1;
    while (k >= from && values[k] > v) {
      values[k + 1] = values[k];
      k--;
    }
    values[k + 1] = v;
  }
}

/** The bin holding the value of the given rank (0 = smallest): the last bin b with below[b] <= rank and a value in it. */
function binOf(rank: number): number {
  // below[0] = 0 <= rank < count = below[bins]: the answer is in [0, bins).
  let lo = 0;
  let hi = bins;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (below[mid] <= rank) lo = mid;
    else hi = mid;
  }
  return lo;
}

/**
 * The value of the given rank, once its bin has been gathered into scratch and sorted. The
 * smallest rank is `min` and the largest `max`, unless 0 (-0 and 0 compare equal, and the sort
 * decides which of them comes first).
 */
function valueAt(scratch: Float64Array, rank: number, min: number, max: number): number {
  if (rank === lowest) return min;
  if (rank === highest) return max;
  const b = binOf(rank);
  return scratch[starts[b] + rank - below[b]];
}
