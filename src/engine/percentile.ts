/**
 * Linear-interpolation percentiles (numpy's default, "type 7"), the rule that reproduces the
 * hosted engine's censoring (docs/methodology.md section 3).
 *
 * The order statistics come from a histogram select: one branch-free pass counts the values into
 * equal-width bins between min and max and links each value to the previous one of its bin, the
 * bins holding the wanted ranks are located from the cumulative counts, and only their few values
 * are gathered (along their bin's links) and sorted. A Grid asks for thousands of percentiles of
 * 10^3 to 10^4 scores; this costs one linear pass each, with none of quickselect's unpredictable
 * branches. The number of bins follows the count (a bin a value up to
 * 2,048 values, then one per four values, 16 to 4,096 bins), so that small inputs do not pay for
 * many bins and large ones gather and sort few values; only the wanted bins are visited after the
 * count. (A bin a value rather than one per four at N=1,000: a Grid's central bins held about 10
 * values, and gathering and sorting them cost more than clearing and scanning four times the bins,
 * which the WebAssembly scan does eight bins at a time. Past 2,048 values, the two censors' tables
 * of 4,096 bins no longer fit the first-level cache beside the rows, and the count slows.) The order statistics, and so
 * the percentiles, do not depend on the bins. `percentilesOfTwo` does the same for two arrays of
 * one length (a Grid's two censors) with each pass over the rows shared.
 */
import { snapCut } from "./cut.js";
import { arenaShaped, countIntoBins, jsKernels, RowArena, type RowKernels } from "./kernels/rows.js";

const MAX_BINS = 4096;
const MIN_BINS = 16;
/** Up to this many values, a bin a value; beyond, one per four values (but no fewer bins than this). */
const DENSE_BINS = 2048;
/** Gathered bins up to this size are sorted in place by insertion (no subarray view). */
const INSERTION_SORT = 24;

/** Slots of `Histogram.state` (the WebAssembly select, rows.wat `selectTwo`, reads and writes the same). */
const RANK_COUNT = 0;
const WANTED_COUNT = 1;
const GATHERED = 2;
const LOWEST = 3;
const HIGHEST = 4;
const BINS = 5;
/** The most fractions an arena's histogram selects at once (its ranks are two per fraction). */
const MAX_FRACTIONS = 256;

/** The arrays of one histogram, from an arena (for its kernels) or plain (shaped like an arena's: one map for both). */
function histogramArrays(arena: RowArena | null, rows: number) {
  const ints = (n: number) => (arena ? arena.int32(n) : arenaShaped(new Int32Array(n)));
  const doubles = (n: number) => (arena ? arena.array(n) : arenaShaped(new Float64Array(n)));
  const ranks = arena ? 2 * MAX_FRACTIONS : 16;
  return {
    table: ints(2 * (MAX_BINS + 1)),
    previous: ints(rows),
    starts: ints(MAX_BINS + 1).fill(-1),
    wanted: ints(MAX_BINS + 1),
    ranks: ints(ranks),
    rankBins: ints(ranks),
    rankBelow: ints(ranks),
    // The gathered values and the cuts of the WebAssembly select (the plain one gathers into the caller's scratch).
    gathered: doubles(arena ? rows : 0),
    out: doubles(arena ? MAX_FRACTIONS : 0),
    state: ints(8),
  };
}

/** One histogram select in progress: its bins, counts and where the wanted bins are gathered. */
class Histogram {
  /**
   * Per bin, the last value (its index) counted into it (at 2 bin, valid where the count is not 0)
   * and its count (at 2 bin + 1): side by side, so that the counting pass reads and writes both at
   * once (the WebAssembly count as one i64: the count in the high half, rows.wat `histogramTwo`).
   */
  readonly table: Int32Array;
  /** previous[i]: the value counted into i's bin before i (so a bin's values are linked from the last back to the first). */
  previous: Int32Array;
  /** Where a wanted bin's values start in the gathered scratch (-1: not wanted; every bin between selects). */
  readonly starts: Int32Array;
  /** The wanted ranks in ascending order (each once), ranks[0..state[RANK_COUNT]), with each one's bin and how many values lie in the bins before it. */
  ranks: Int32Array;
  rankBins: Int32Array;
  rankBelow: Int32Array;
  /** The wanted bins, wanted[0..state[WANTED_COUNT]), in the order they were marked (each bin once). */
  readonly wanted: Int32Array;
  /**
   * The rank count, the wanted count, how many values the wanted bins hold, the ranks whose values
   * are the known minimum and maximum (-1: none), and the number of bins: in an array, which the
   * WebAssembly select shares.
   */
  readonly state: Int32Array;
  /** The WebAssembly select's gathered values and cuts. */
  readonly gathered: Float64Array;
  readonly out: Float64Array;
  /** The byte offsets of the arrays above, as rows.wat `selectTwo` reads them (an arena's histogram only). */
  readonly header: Int32Array | null;
  /** The number of bins of the last select. */
  get bins(): number {
    return this.state[BINS];
  }
  // Doubles from the start (set by `open` before any read): a small-integer first value would
  // change the fields' representation on the first select, and the code optimised for it with it.
  min = NaN;
  max = NaN;
  scale = NaN;

  constructor(
    arena: RowArena | null,
    rows: number,
    /** Whether the arrays are an arena's (they then hold at most their length: they cannot be replaced by longer ones). */
    private readonly fixed = arena !== null,
  ) {
    const a = histogramArrays(arena, rows);
    this.table = a.table;
    this.previous = a.previous;
    this.starts = a.starts;
    this.wanted = a.wanted;
    this.ranks = a.ranks;
    this.rankBins = a.rankBins;
    this.rankBelow = a.rankBelow;
    this.gathered = a.gathered;
    this.out = a.out;
    this.state = a.state;
    this.header = arena ? arena.int32(16) : null;
    if (this.header) {
      const views = [a.table, a.previous, a.starts, a.wanted, a.ranks, a.rankBins, a.rankBelow, a.gathered, a.out, a.state];
      for (let k = 0; k < views.length; k++) this.header[k] = views[k].byteOffset;
    }
  }

  /** Checks that `count` values fit (a fixed histogram's) or makes room for them. */
  reserve(count: number): void {
    if (this.previous.length < count) {
      if (this.fixed) throw new RangeError(`this histogram holds at most ${this.previous.length} values; ${count} given`);
      this.previous = arenaShaped(new Int32Array(Math.max(count, 2 * this.previous.length)));
    }
  }

  /** Sets the bins for `count` values in [min, max] and clears the counts. */
  open(count: number, min: number, max: number): void {
    const bins = Math.min(MAX_BINS, Math.max(MIN_BINS, count <= DENSE_BINS ? count : Math.max(DENSE_BINS, count >> 2)));
    this.state[BINS] = bins;
    this.min = min;
    this.max = max;
    // The largest value falls in the last bin: (v - min) * scale is monotone in v, so every value then has a bin below `bins`.
    let scale = bins / (max - min);
    while ((((max - min) * scale) | 0) >= bins) scale *= 1 - 2 ** -40;
    // A range too narrow for a finite scale (max - min subnormal, or 0): every value in bin 0, where
    // `| 0` put them with the infinite scale; the WebAssembly count needs a finite one.
    this.scale = scale < Infinity ? scale : 0;
    this.table.fill(0, 0, 2 * bins);
    this.reserve(count);
  }

  /** Copies each wanted bin's values into scratch, in the order of the rows, at the bin's start. */
  gather(values: ArrayLike<number>, scratch: Float64Array): void {
    const { table, starts, previous, wanted } = this;
    const wantedCount = this.state[WANTED_COUNT];
    for (let w = 0; w < wantedCount; w++) {
      const b = wanted[w];
      let i = table[2 * b];
      for (let p = starts[b] + table[2 * b + 1] - 1; p >= starts[b]; p--) {
        scratch[p] = values[i];
        i = previous[i];
      }
    }
  }

  /** From the counts: the bins of the wanted ranks (one scan of the cumulative counts up to the largest), laid out one after another. */
  mark(count: number, fractions: ArrayLike<number>): void {
    const { table, starts, wanted, state } = this;
    // The previous select's wanted bins are wanted no more.
    for (let w = 0; w < state[WANTED_COUNT]; w++) starts[wanted[w]] = -1;
    // The smallest and the largest value are known: their ranks need no bin.
    const lowest = this.min !== 0 ? 0 : -1;
    const highest = this.max !== 0 ? count - 1 : -1;
    if (this.ranks.length < 2 * fractions.length) {
      if (this.fixed) throw new RangeError(`this histogram selects at most ${this.ranks.length / 2} fractions; ${fractions.length} given`);
      this.ranks = arenaShaped(new Int32Array(2 * fractions.length));
      this.rankBins = arenaShaped(new Int32Array(2 * fractions.length));
      this.rankBelow = arenaShaped(new Int32Array(2 * fractions.length));
    }
    const { ranks, rankBins, rankBelow } = this;
    let rankCount = 0;
    for (let t = 0; t < fractions.length; t++) {
      const h = (count - 1) * fractions[t];
      const lo = Math.floor(h);
      for (let rank = lo; rank <= (h > lo && lo + 1 < count ? lo + 1 : lo); rank++) {
        if (rank === lowest || rank === highest) continue;
        // Insert in order, once.
        let k = rankCount;
        while (k > 0 && ranks[k - 1] > rank) k--;
        if (k > 0 && ranks[k - 1] === rank) continue;
        ranks.copyWithin(k + 1, k, rankCount);
        ranks[k] = rank;
        rankCount++;
      }
    }
    let next = 0;
    let wantedCount = 0;
    let bin = 0;
    let below = 0;
    for (let k = 0; k < rankCount; k++) {
      const rank = ranks[k];
      // The bin holding the rank: the first whose cumulative count exceeds it (rank < count, so one does).
      while (below + table[2 * bin + 1] <= rank) below += table[2 * bin++ + 1];
      rankBins[k] = bin;
      rankBelow[k] = below;
      if (starts[bin] >= 0) continue;
      starts[bin] = next;
      next += table[2 * bin + 1];
      wanted[wantedCount++] = bin;
    }
    state[RANK_COUNT] = rankCount;
    state[WANTED_COUNT] = wantedCount;
    state[GATHERED] = next;
    state[LOWEST] = lowest;
    state[HIGHEST] = highest;
  }

  /** Sorts each gathered bin; a rank's value is then at its offset within its bin. */
  sortBins(scratch: Float64Array): void {
    const { table, starts, wanted } = this;
    const wantedCount = this.state[WANTED_COUNT];
    for (let w = 0; w < wantedCount; w++) {
      const b = wanted[w];
      const count = table[2 * b + 1];
      if (count <= INSERTION_SORT) insertionSort(scratch, starts[b], starts[b] + count);
      else scratch.subarray(starts[b], starts[b] + count).sort();
    }
  }

  /** Writes the percentiles once the wanted bins are gathered into scratch and sorted. */
  write(scratch: Float64Array, count: number, fractions: ArrayLike<number>, out: Float64Array, width: number): void {
    for (let t = 0; t < fractions.length; t++) {
      const h = (count - 1) * fractions[t];
      const lo = Math.floor(h);
      const low = this.valueAt(scratch, lo);
      if (h > lo && lo + 1 < count) {
        const high = this.valueAt(scratch, lo + 1);
        out[t] = snapCut(low, high, low + (h - lo) * (high - low), width);
      } else out[t] = low;
    }
  }

  /**
   * The value of the given rank, once its bin has been gathered into scratch and sorted. The
   * smallest rank is `min` and the largest `max`, unless 0 (-0 and 0 compare equal, and the sort
   * decides which of them comes first).
   */
  valueAt(scratch: Float64Array, rank: number): number {
    const state = this.state;
    if (rank === state[LOWEST]) return this.min;
    if (rank === state[HIGHEST]) return this.max;
    // The rank's entry among the sorted wanted ranks.
    const ranks = this.ranks;
    let lo = 0;
    let hi = state[RANK_COUNT] - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (ranks[mid] < rank) lo = mid + 1;
      else hi = mid;
    }
    return scratch[this.starts[this.rankBins[lo]] + rank - this.rankBelow[lo]];
  }
}

/**
 * Two histograms and the kernels that count into them (`percentilesOfTwo`): module scratch with
 * the plain loops by default, or in an arena with its kernels for the arrays of that arena (a
 * walk's, walk.ts), whose count, and whole select where it can, are then the WebAssembly ones.
 *
 * @example
 * const arena = new RowArena(HistogramPair.bytesFor(1000));
 * const pair = new HistogramPair(arena, 1000); // for arrays of up to 1,000 values in `arena`
 */
export class HistogramPair {
  readonly first: Histogram;
  readonly second: Histogram;
  readonly kernels: RowKernels;
  /** The fractions as the WebAssembly select reads them (an arena's pair only). */
  readonly fractions: Float64Array | null;
  constructor(arena: RowArena | null, rows: number) {
    this.first = new Histogram(arena, rows);
    this.second = new Histogram(arena, rows);
    this.kernels = arena ? arena.kernels : jsKernels;
    this.fractions = arena ? arena.array(MAX_FRACTIONS) : null;
  }

  /** The bytes a pair takes in an arena, for up to `rows` values. */
  static bytesFor(rows: number): number {
    const one = RowArena.bytesFor({
      ints: [2 * (MAX_BINS + 1), rows, MAX_BINS + 1, MAX_BINS + 1, 2 * MAX_FRACTIONS, 2 * MAX_FRACTIONS, 2 * MAX_FRACTIONS, 8, 16],
      doubles: [rows, MAX_FRACTIONS],
    });
    return 2 * one + RowArena.bytesFor({ doubles: [MAX_FRACTIONS] });
  }
}

// Module scratch: a call finishes before the next starts.
const scratchPair = new HistogramPair(null, 0);
const first = scratchPair.first;

/** min and max of values[0..count) unless both are known. */
function extremes(values: ArrayLike<number>, count: number, knownMin: number, knownMax: number): [number, number] {
  if (knownMin <= knownMax) return [knownMin, knownMax];
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < count; i++) {
    const v = values[i];
    min = v < min ? v : min;
    max = v > max ? v : max;
  }
  return [min, max];
}

/**
 * Percentiles of `values[0..count)` at the given fractions in [0, 1], written to `out`.
 * `scratch` (at least `count` long, not `values` itself) is overwritten. A caller that already
 * knows the values' minimum and maximum passes them to save a pass. With a tie `width` (cut.ts),
 * values within it of each other are equal: an interpolated percentile within the width of one of
 * its two neighbours is that neighbour, and values spread by no more than the width are constant.
 *
 * @example
 * const out = new Float64Array(2);
 * percentiles([3, 1, 4, 1, 5], 5, [0.5, 1], new Float64Array(5), out); // out = [3, 5]
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
  const [min, max] = extremes(values, count, knownMin, knownMax);
  if (!(max - min > width)) {
    for (let t = 0; t < fractions.length; t++) out[t] = min;
    return;
  }
  const h = first;
  h.open(count, min, max);
  countIntoBins(values, min, h.scale, h.table, h.previous, count);
  h.mark(count, fractions);
  if (h.state[GATHERED] > 0) {
    h.gather(values, scratch);
    h.sortBins(scratch);
  }
  h.write(scratch, count, fractions, out, width);
}

/**
 * `percentiles` of two arrays of the same length at the same fractions, each pass over the rows
 * shared by both: the very values two calls of `percentiles` give.
 *
 * @example
 * const [outA, outB] = [new Float64Array(1), new Float64Array(1)];
 * percentilesOfTwo(Float64Array.of(1, 2, 3), Float64Array.of(6, 4, 5), 3, [0.5], new Float64Array(3), new Float64Array(3), outA, outB, 1, 3, 0, 4, 6, 0);
 * // outA = [2], outB = [5]
 */
export function percentilesOfTwo(
  a: Float64Array,
  b: Float64Array,
  count: number,
  fractions: ArrayLike<number>,
  scratchA: Float64Array,
  scratchB: Float64Array,
  outA: Float64Array,
  outB: Float64Array,
  minA: number,
  maxA: number,
  widthA: number,
  minB: number,
  maxB: number,
  widthB: number,
  /** Where to count (the default: module scratch and the plain loops); arrays in another arena than a and b's must not be given. */
  pair: HistogramPair = scratchPair,
): void {
  if (!(maxA - minA > widthA) || !(maxB - minB > widthB)) {
    percentiles(a, count, fractions, scratchA, outA, minA, maxA, widthA);
    percentiles(b, count, fractions, scratchB, outB, minB, maxB, widthB);
    return;
  }
  const ha = pair.first;
  const hb = pair.second;
  const T = fractions.length;
  const select = pair.kernels.selectTwo;
  // The whole select as WebAssembly where it can be had: an arena's pair, ranges whose scale is finite, at most MAX_FRACTIONS.
  if (select && pair.fractions && Number.isFinite(maxA - minA) && Number.isFinite(maxB - minB) && T <= MAX_FRACTIONS) {
    ha.reserve(count);
    hb.reserve(count);
    const f = pair.fractions;
    for (let t = 0; t < T; t++) f[t] = fractions[t];
    const done = select(a, minA, maxA, widthA, ha.header!, b, minB, maxB, widthB, hb.header!, f, T, count);
    if (done === 1) {
      // The cuts are in the histograms' out, which may be outA and outB themselves (calibrate.ts `ArenaPasses.cuts`).
      if (outA !== ha.out) for (let t = 0; t < T; t++) outA[t] = ha.out[t];
      if (outB !== hb.out) for (let t = 0; t < T; t++) outB[t] = hb.out[t];
      return;
    }
    if (done === 2) {
      // Counted and marked; a wanted bin of more than 256 values: the plain gather, sort and write.
      ha.min = minA;
      ha.max = maxA;
      hb.min = minB;
      hb.max = maxB;
      finishTwo(ha, hb, a, b, count, fractions, scratchA, scratchB, outA, outB, widthA, widthB);
      return;
    }
  }
  ha.open(count, minA, maxA);
  hb.open(count, minB, maxB);
  // The WebAssembly count takes finite bounds only (its truncation would trap on an infinity).
  const kernels = Number.isFinite(minA + maxA + minB + maxB) ? pair.kernels : jsKernels;
  kernels.histogramTwo(a, minA, ha.scale, ha.table, ha.previous, b, minB, hb.scale, hb.table, hb.previous, count);
  ha.mark(count, fractions);
  hb.mark(count, fractions);
  finishTwo(ha, hb, a, b, count, fractions, scratchA, scratchB, outA, outB, widthA, widthB);
}

/** The plain gather, sort and write of two marked histograms. */
function finishTwo(
  ha: Histogram,
  hb: Histogram,
  a: Float64Array,
  b: Float64Array,
  count: number,
  fractions: ArrayLike<number>,
  scratchA: Float64Array,
  scratchB: Float64Array,
  outA: Float64Array,
  outB: Float64Array,
  widthA: number,
  widthB: number,
): void {
  ha.gather(a, scratchA);
  hb.gather(b, scratchB);
  ha.sortBins(scratchA);
  hb.sortBins(scratchB);
  ha.write(scratchA, count, fractions, outA, widthA);
  hb.write(scratchB, count, fractions, outB, widthB);
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
