/**
 * The Grid's hottest passes over the rows (the walk's, walk.ts; the histogram count of the
 * percentiles, percentile.ts; the censors' buckets and sums and the cells' weights, calibrate.ts),
 * in two implementations that give the same bits: `jsKernels`, plain loops, and the WebAssembly
 * kernels of rows.wat, which do the very same arithmetic two rows at a time (f64x2) where they can
 * and without bounds checks: 2 to 5 times faster.
 *
 * The WebAssembly kernels read and write only their own memory, so the arrays they are given are
 * views into it: a `RowArena` hands them out, from that memory when WebAssembly with SIMD is there
 * and the memory can be had, as plain arrays (for `jsKernels`) otherwise. No array handed to an
 * arena's kernels may come from elsewhere.
 */
import { ROWS_WASM } from "./rows-wasm.js";

/** Which implementation a walk uses: "wasm" when it can be had (the default), or "js". */
export type KernelChoice = "wasm" | "js";

export interface RowKernels {
  readonly name: KernelChoice;
  /**
   * u_d = src - l_0 u[0] - l_1 u[1] - ... - l_(d-1) u[d-1] into dst, l_m = L[row + m], four columns
   * a pass (then two, then one), each pass left to right; src when d is 0. The u are one
   * `RowArena.arrays` table.
   */
  subtractLevel(dst: Float64Array, src: Float64Array, u: readonly Float64Array[], L: Float64Array, row: number, d: number, n: number): void;
  /** ud[i] *= inv; relNext[i] = relPrev[i] + ud[i] vd; infoNext[i] = infoPrev[i] + ud[i]^2. */
  scaleFirst(
    ud: Float64Array,
    inv: number,
    vd: number,
    relPrev: Float64Array,
    relNext: Float64Array,
    infoPrev: Float64Array,
    infoNext: Float64Array,
    n: number,
  ): void;
  /** relNext[i] = relPrev[i] + ud[i] vd. */
  extendRelevance(ud: Float64Array, vd: number, relPrev: Float64Array, relNext: Float64Array, n: number): void;
  /** `scaleFirst`, then simNext[i] = relNext[i] - 0.5 infoNext[i] - half, and bounds = [min r, max r, min s, max s]. */
  finishFirst(
    ud: Float64Array,
    inv: number,
    vd: number,
    half: number,
    relPrev: Float64Array,
    relNext: Float64Array,
    infoPrev: Float64Array,
    infoNext: Float64Array,
    simNext: Float64Array,
    bounds: Float64Array,
    n: number,
  ): void;
  /** `subtractLevel` into ud, then `scaleFirst` on it (one call for the walk's first theta). */
  subtractScaleFirst(
    ud: Float64Array,
    src: Float64Array,
    u: readonly Float64Array[],
    L: Float64Array,
    row: number,
    d: number,
    inv: number,
    vd: number,
    relPrev: Float64Array,
    relNext: Float64Array,
    infoPrev: Float64Array,
    infoNext: Float64Array,
    n: number,
  ): void;
  /** `subtractLevel` into ud, then `finishFirst` on it. */
  subtractFinishFirst(
    ud: Float64Array,
    src: Float64Array,
    u: readonly Float64Array[],
    L: Float64Array,
    row: number,
    d: number,
    inv: number,
    vd: number,
    half: number,
    relPrev: Float64Array,
    relNext: Float64Array,
    infoPrev: Float64Array,
    infoNext: Float64Array,
    simNext: Float64Array,
    bounds: Float64Array,
    n: number,
  ): void;
  /** `extendRelevance` (ud already scaled), then the similarity and bounds as `finishFirst`. */
  finishOther(
    ud: Float64Array,
    vd: number,
    half: number,
    relPrev: Float64Array,
    relNext: Float64Array,
    infoNext: Float64Array,
    simNext: Float64Array,
    bounds: Float64Array,
    n: number,
  ): void;
  /** sim[i] = rel[i] - 0.5 info[i] - half, and the bounds. */
  finishLevel(rel: Float64Array, info: Float64Array, half: number, sim: Float64Array, bounds: Float64Array, n: number): void;
  /**
   * The counting pass of two histogram selects (percentile.ts): row i goes into bin
   * ((a[i] - minA) * scaleA) | 0 of a (every value in [min, max]: the bin is in range), whose count
   * (tableA[2 bin + 1]) goes up, and previousA[i] links it to that bin's last row before it
   * (tableA[2 bin], then i); the same for b.
   */
  histogramTwo(
    a: Float64Array,
    minA: number,
    scaleA: number,
    tableA: Int32Array,
    previousA: Int32Array,
    b: Float64Array,
    minB: number,
    scaleB: number,
    tableB: Int32Array,
    previousB: Int32Array,
    n: number,
  ): void;
  /**
   * WebAssembly only (absent from `jsKernels`): the whole select of two histograms (percentile.ts
   * `percentilesOfTwo` on an arena's pair, each histogram given by the header of its arrays'
   * offsets), whose plain twin is that of percentile.ts's `Histogram` (open, count, mark, gather,
   * sort, write). Returns 1 when the cuts are in the histograms' `out`, 2 when counted and marked
   * only (a wanted bin of more than 256 values), 0 when nothing was done (a fraction outside [0, 1]).
   */
  selectTwo?(
    a: Float64Array,
    minA: number,
    maxA: number,
    widthA: number,
    headerA: Int32Array,
    b: Float64Array,
    minB: number,
    maxB: number,
    widthB: number,
    headerB: Int32Array,
    fractions: Float64Array,
    T: number,
    count: number,
  ): number;
  /**
   * WebAssembly only (absent from `jsKernels`): a Grid combination's cuts, calibration of both
   * censors and cells in one call (calibrate.ts `calibrateCellsOfTwo`), on the arrays of one
   * `ArenaPasses` given once here (their offsets written to `frame`, an arena array of `CALIBRATE_FRAME`). Its
   * plain twin is the path it replaces, pass by pass: `selectTwo` (percentile.ts's histograms),
   * `setBoundaries` and `bucketsTwo`, then per censor `calibrationsOf`'s
   * arithmetic, the cells' weights, yhat, validity and secondary sums of grid-cells.ts
   * `evaluate`, and `slopesOf`; then `addWeightsTwo` into target (in WebAssembly from the joint
   * buckets: `addWeightsJoint`, the same weights). rows.wat `cells` and `boundaries` list the arithmetic.
   */
  calibrateTwoOn?(fixed: CalibrateTwoArrays, frame: Int32Array): CalibrateTwo;
  /**
   * WebAssembly only (absent from `jsKernels`): the walk's first-theta level in one call (walk.ts
   * `extend`: the factor's row, v_d and theta's informativeness, then `subtractFinishFirst` when
   * visited, else `subtractScaleFirst`) on the arrays of one `WalkLevels`, found from its tables
   * given once here (their bases and strides written to `frame`, an arena array of
   * `EXTEND_FRAME`), so that a call checks no array. Undefined when the tables are not laid out
   * one array after another at a constant stride.
   */
  extendLevelOn?(tables: WalkTables, frame: Int32Array): ExtendLevel | undefined;
  /**
   * WebAssembly only: a visited level and its cells in one call (`ExtendCalibrate`), on a walk's
   * frame (`extendLevelOn`'s) and a calibration's (`calibrateTwoOn`'s) in this arena, with a
   * range's constants written to `constants` (an arena array of `calibrateConstantsLength(K)`).
   */
  extendCalibrateOn?(walkFrame: Int32Array, calibrationFrame: Int32Array, constants: Float64Array, K: number, n: number, plan: WalkPlan): ExtendCalibrate;
  /** WebAssembly only: the tie width `ExtendCalibrate` takes from a level's bounds (cut.ts `tieWidth` with this tolerance). */
  tieWidth?(tolerance: number, min: number, max: number): number;
  /**
   * The buckets of both censors (calibrate.ts `calibrateBoth`, T <= 4 cuts): row i's bucket is the
   * number of cuts atLeast[0..T) its signed score (sign * relevance or sign * similarity) reaches,
   * written to buckets; (1, r, r^2, r dy, r dy^2, r^2 dy^2) with dy = y - ybar are added, in the
   * order of the rows, to the six sums of its joint bucket (b, c) (joint[6 (5 b + c) ..], 150
   * doubles, cleared here), b its relevance bucket and c its similarity one. Then each censor's
   * buckets 0 to T (sums[6 b ..]) are the joint ones added left to right: the relevance censor's
   * b is (b, 0) + (b, 1) + ... + (b, T), the similarity censor's c is (0, c) + ... + (T, c).
   * totals = [sum r, sum r^2, sum r dy], each the 25 joint buckets' sums added in bucket order
   * (0 + (0, 0) + (0, 1) + ... + (4, 4)), not the rows' in row order.
   */
  bucketsTwo(
    relevance: Float64Array,
    similarity: Float64Array,
    y: Float64Array,
    ybar: number,
    sign: number,
    atLeastR: Float64Array,
    atLeastS: Float64Array,
    T: number,
    bucketsR: Uint8Array,
    bucketsS: Uint8Array,
    sumsR: Float64Array,
    sumsS: Float64Array,
    joint: Float64Array,
    totals: Float64Array,
    n: number,
  ): void;
  /**
   * Both censors' weights added to target (calibrate.ts `addWeightsOfTwo`): on each row whose
   * relevance r is not NaN, target[i] + ((baseA + baseB) + (slopesA[bucketsA[i]] + slopesB[bucketsB[i]]) r),
   * the bases and the slopes added first (docs/methodology.md 7.2, "The weights' pass").
   */
  addWeightsTwo(
    relevance: Float64Array,
    bucketsA: Uint8Array,
    slopesA: Float64Array,
    baseA: number,
    bucketsB: Uint8Array,
    slopesB: Float64Array,
    baseB: number,
    target: Float64Array,
    n: number,
  ): void;
}

/** The arrays of an `ArenaPasses` that the WebAssembly calibration of both censors reads and writes (`RowKernels.calibrateTwoOn`). */
export interface CalibrateTwoArrays {
  /** The two histograms' headers (percentile.ts `HistogramPair`) and the fractions their select reads. */
  headerA: Int32Array;
  headerB: Int32Array;
  fractions: Float64Array;
  /** Each censor's T cuts: the histograms' out. */
  cutsR: Float64Array;
  cutsS: Float64Array;
  /** Scratch of the boundaries: 8 (the relevance censor's 4, then the similarity's) each. */
  order: Int32Array;
  atLeast: Float64Array;
  bucketsR: Uint8Array;
  bucketsS: Uint8Array;
  /** Six sums per bucket, 6 (T + 1), and the totals (sum r, sum r^2, sum r dy). */
  sumsR: Float64Array;
  sumsS: Float64Array;
  /** The joint buckets' sums of `bucketsTwo`: `JOINT_SUMS`. */
  joint: Float64Array;
  totals: Float64Array;
  /** Each threshold's position among the sorted cuts (`setBoundaries`), up to 4. */
  rankR: Int32Array;
  rankS: Int32Array;
  /** 256 each: the weights' slopes by bucket. */
  slopesR: Float64Array;
  slopesS: Float64Array;
  /** Five planes of 8 (weight, yhat, validity, coefficient, shift), cell q at q in each, the relevance censor's T cells first: 40. */
  cells: Float64Array;
  /** The outcome, as the arena holds it. */
  y: Float64Array;
}

/**
 * One combination's cuts, calibration and cells (T <= 4, the scores' usable rows all n): the cuts
 * selected from the scores (cutsFrom 0: the fractions, percent units), taken from the fractions
 * (1: score units) or as the cut arrays hold them (2); then from the censor test (sign, strict),
 * the tie widths and the calibration's constants, the cells, whose secondary sums are added to
 * secondary (4) and weights to target. Returns 1 when done, 0 when the select was left to the
 * caller (nothing else done), 2 when a cut is NaN (nothing added).
 */
export type CalibrateTwo = (
  relevance: Float64Array,
  similarity: Float64Array,
  n: number,
  T: number,
  cutsFrom: number,
  minA: number,
  maxA: number,
  widthA: number,
  minB: number,
  maxB: number,
  widthB: number,
  ybar: number,
  syy: number,
  sign: number,
  strict: boolean,
  multiplier: number,
  attributes: number,
  minRetained: number,
  minComplement: number,
  secondary: Float64Array,
  target: Float64Array,
) => number;

/** A walk's level tables (walk.ts `WalkLevels`, first theta), for `RowKernels.extendLevelOn`: each an arena's arrays one after another. */
export interface WalkTables {
  /** K arrays of n: the whitened columns u_d. */
  u: readonly Float64Array[];
  /** K + 1 arrays of n each: informativeness, relevance and similarity by depth (the similarity's may all be one array: a stride of 0). */
  info: readonly Float64Array[];
  rel: readonly Float64Array[];
  sim: readonly Float64Array[];
  /** K + 1 arrays of 4. */
  bounds: readonly Float64Array[];
  /** K arrays of n: the standardised columns. */
  columns: readonly Float64Array[];
  /** K x K. */
  L: Float64Array;
  /** K x K, row-major: the correlations the factor is of. */
  corr: Float64Array;
  /** K: the current path's columns (path[d] is level d + 1's). */
  path: Int32Array;
  /** K: the first theta in standard units, and its v (L^-1 theta) by depth. */
  thetaZ: Float64Array;
  v: Float64Array;
  /** K + 1: the first theta's informativeness by depth. */
  infoTheta: Float64Array;
  /**
   * R K arrays of n, depth by depth (index (r - 1) K + j): column j less its parts along the
   * path's first r levels (docs/architecture.md "Residuals of the first levels"); none when R is 0.
   */
  residuals: readonly Float64Array[];
  /** K x K: each column's factor entries against the path's first R levels (j K + p). */
  residualEntries: Float64Array;
  /** n: where a leaf's u_d and informativeness go (rows.wat `levelPass`: nothing reads them). */
  scratch: Float64Array;
  R: number;
  K: number;
  n: number;
}

/** A range's constants of `ExtendCalibrate` (the arguments of `CalibrateTwo` that do not change from one combination to the next). */
export interface RangeCalibration {
  ybar: number;
  syy: number;
  sign: number;
  strict: boolean;
  minRetained: number;
  minComplement: number;
  /** cut.ts `tieWidth`'s tolerance. */
  tieTolerance: number;
  T: number;
  cutsFrom: number;
  /** The adjusted fit's multiplier for k attributes at [k], k = 1 to K. */
  multipliers: ArrayLike<number>;
  secondary: Float64Array;
  target: Float64Array;
}

/** A walk's visited level and its cells in one call (`RowKernels.extendCalibrateOn`). */
export interface ExtendCalibrate {
  /** Writes a range's constants; each call until the next `prepare` uses them. */
  prepare(range: RangeCalibration): void;
  /** `ExtendLevel` (visited), then `CalibrateTwo` on the new level (its bounds, their tie widths, depth d + 1 attributes): 3 when singular (nothing else done), else CalibrateTwo's status. */
  run(d: number, n: number, tolerance: number): number;
  /**
   * The walk of the plan's paths from `plan.frame[WALK_PLAN.next]` on, as far as it goes (rows.wat
   * `walkPaths`; walk.ts `walkInKernel`), its state kept in the plan's frame: 0 when every path is
   * done; 1 the next path is singular; 2 its level is made, its cells are not; 3 its level was
   * made before and its similarity is not held; 4 the block of visits is full.
   */
  walkPaths(n: number, tolerance: number): number;
}

/**
 * A range's walk in one call (`ExtendCalibrate.walkPaths`): up to `paths` paths of a trie (each a
 * combination's columns, in order), and the block of visits whose cells the kernel made. All
 * arrays of the walk's arena; the frame's other slots are the arrays' offsets.
 */
export interface WalkPlan {
  /** `WALK_PLAN_FRAME` i32: the walk's state at the slots of `WALK_PLAN`, the arrays' offsets at the others. */
  frame: Int32Array;
  /** Path o's columns are columns[starts[o] .. starts[o + 1]); its residual masks masks[o R + d] (walk.ts `residualMasks`); its combination combinations[o]. */
  starts: Int32Array;
  columns: Int32Array;
  masks: Int32Array;
  combinations: Int32Array;
  /** Per visit in the block, its cells (2 T: the relevance censor's, then the similarity one's) one after another: weight, yhat, validity (0 or 1) and combination. */
  weight: Float64Array;
  yhat: Float64Array;
  valid: Float64Array;
  cellCombination: Int32Array;
  /** How many paths the plan holds, and visits the block. */
  paths: number;
}

/**
 * The slots of `WalkPlan.frame` (rows.wat `walkPaths` reads them at 4 bytes a slot): the walk's
 * state, which walk.ts sets and reads, and the offsets of the plan's arrays and the cells a
 * visit makes, which `extendCalibrateOn` and `prepare` write.
 */
export const WALK_PLAN = {
  next: 0,
  count: 1,
  starts: 2,
  columns: 3,
  masks: 4,
  residualLevels: 5,
  zeroScale: 6,
  top: 7,
  singularFrom: 8,
  similarityAt: 9,
  visits: 10,
  cellsPerVisit: 11,
  weight: 12,
  yhat: 13,
  valid: 14,
  cellCombination: 15,
  combinations: 16,
  capacity: 17,
} as const;

/** Slots of `extendLevelOn`'s frame that change after it is written (rows.wat reads them at 4 bytes a slot): the residual levels a walk uses, and a leaf's scratch. */
const EXTEND_SLOT = { residualLevels: 22, scratch: 24 } as const;

/** The length of `WalkPlan.frame`. */
export const WALK_PLAN_FRAME = 18;

/** A `WalkPlan`'s arrays for `paths` paths of up to K columns, in `arena`. */
export function walkPlanIn(arena: RowArena, paths: number, K: number): WalkPlan {
  return {
    frame: arena.int32(WALK_PLAN_FRAME),
    starts: arena.int32(paths + 1),
    columns: arena.int32(paths * K),
    masks: arena.int32(paths * K),
    combinations: arena.int32(paths),
    weight: arena.array(8 * paths),
    yhat: arena.array(8 * paths),
    valid: arena.array(8 * paths),
    cellCombination: arena.int32(8 * paths),
    paths,
  };
}

/** The bytes of `walkPlanIn(arena, paths, K)`. */
export function walkPlanBytes(paths: number, K: number): number {
  return RowArena.bytesFor({ doubles: [8 * paths, 8 * paths, 8 * paths], ints: [WALK_PLAN_FRAME, paths + 1, paths * K, paths * K, paths, 8 * paths] });
}

/** The length of `ExtendCalibrate`'s constants for K attributes. */
export const calibrateConstantsLength = (K: number) => 12 + K;

/** The length of `RowKernels.extendLevelOn`'s frame. */
export const EXTEND_FRAME = 25;

/** The length of `RowKernels.calibrateTwoOn`'s frame: the offsets of its 19 fixed arrays. */
export const CALIBRATE_FRAME = 19;

/** The length of `bucketsTwo`'s joint buckets' sums: six for each of 5 x 5 buckets. */
export const JOINT_SUMS = 150;

/**
 * Level d + 1 of the walk from column path[d] (`RowKernels.extendLevelOn`), the first theta's:
 * the factor's row d, v_d, informativeness of theta and the level's pass, as walk.ts `extend`
 * does them. False when the pivot is not above `tolerance` (singular; the row as far as it got).
 */
export type ExtendLevel = ((d: number, visited: boolean, n: number, tolerance: number) => boolean) & {
  /**
   * Once level d + 1 is made (d < R): the residuals of the columns in `mask` (bit j: the levels
   * below it add column j) against it, from theirs against level d, and their factor entries.
   */
  residuals(d: number, mask: number, n: number): void;
  /** How many of a path's first levels this walk keeps residuals of (0 to R): levels read them only then. */
  useResiduals(r: number): void;
};

/**
 * The kernels as plain loops: the reference the WebAssembly kernels are held to.
 *
 * @example
 * const [dst, z, u0] = [new Float64Array(2), Float64Array.of(1, 2), Float64Array.of(1, 1)];
 * jsKernels.subtractLevel(dst, z, [u0], Float64Array.of(0.5), 0, 1, 2); // dst = [0.5, 1.5]
 */
export const jsKernels: RowKernels = {
  name: "js",
  subtractLevel(dst, src, u, L, row, d, n) {
    if (d === 0) dst.set(src.subarray(0, n));
    let m = 0;
    for (; m + 4 <= d; m += 4, src = dst) {
      const [u0, u1, u2, u3] = [u[m], u[m + 1], u[m + 2], u[m + 3]];
      const [l0, l1, l2, l3] = [L[row + m], L[row + m + 1], L[row + m + 2], L[row + m + 3]];
      for (let i = 0; i < n; i++) dst[i] = src[i] - l0 * u0[i] - l1 * u1[i] - l2 * u2[i] - l3 * u3[i];
    }
    if (m + 2 <= d) {
      const [u0, u1, l0, l1] = [u[m], u[m + 1], L[row + m], L[row + m + 1]];
      for (let i = 0; i < n; i++) dst[i] = src[i] - l0 * u0[i] - l1 * u1[i];
      src = dst;
      m += 2;
    }
    if (m < d) {
      const [u0, l0] = [u[m], L[row + m]];
      for (let i = 0; i < n; i++) dst[i] = src[i] - l0 * u0[i];
    }
  },
  scaleFirst(ud, inv, vd, relPrev, relNext, infoPrev, infoNext, n) {
    for (let i = 0; i < n; i++) {
      const value = ud[i] * inv;
      ud[i] = value;
      relNext[i] = relPrev[i] + value * vd;
      infoNext[i] = infoPrev[i] + value * value;
    }
  },
  extendRelevance(ud, vd, relPrev, relNext, n) {
    for (let i = 0; i < n; i++) relNext[i] = relPrev[i] + ud[i] * vd;
  },
  // The twins of the fused WebAssembly passes: the same values, one plain pass after another.
  subtractScaleFirst(ud, src, u, L, row, d, inv, vd, relPrev, relNext, infoPrev, infoNext, n) {
    jsKernels.subtractLevel(ud, src, u, L, row, d, n);
    jsKernels.scaleFirst(ud, inv, vd, relPrev, relNext, infoPrev, infoNext, n);
  },
  subtractFinishFirst(ud, src, u, L, row, d, inv, vd, half, relPrev, relNext, infoPrev, infoNext, simNext, bounds, n) {
    jsKernels.subtractLevel(ud, src, u, L, row, d, n);
    jsKernels.finishFirst(ud, inv, vd, half, relPrev, relNext, infoPrev, infoNext, simNext, bounds, n);
  },
  finishFirst(ud, inv, vd, half, relPrev, relNext, infoPrev, infoNext, simNext, bounds, n) {
    jsKernels.scaleFirst(ud, inv, vd, relPrev, relNext, infoPrev, infoNext, n);
    jsKernels.finishLevel(relNext, infoNext, half, simNext, bounds, n);
  },
  finishOther(ud, vd, half, relPrev, relNext, infoNext, simNext, bounds, n) {
    jsKernels.extendRelevance(ud, vd, relPrev, relNext, n);
    jsKernels.finishLevel(relNext, infoNext, half, simNext, bounds, n);
  },
  finishLevel(rel, info, half, sim, bounds, n) {
    for (let i = 0; i < n; i++) sim[i] = rel[i] - 0.5 * info[i] - half;
    boundsOf(rel, sim, bounds, n);
  },
  histogramTwo(a, minA, scaleA, tableA, previousA, b, minB, scaleB, tableB, previousB, n) {
    countIntoBins(a, minA, scaleA, tableA, previousA, n);
    countIntoBins(b, minB, scaleB, tableB, previousB, n);
  },
  bucketsTwo(relevance, similarity, y, ybar, sign, atLeastR, atLeastS, T, bucketsR, bucketsS, sumsR, sumsS, joint, totals, n) {
    // Up to four cuts unrolled; a missing cut is NaN, which no score passes.
    joint.fill(0, 0, JOINT_SUMS);
    const [a0, a1, a2, a3] = upToFour(atLeastR, T);
    const [c0, c1, c2, c3] = upToFour(atLeastS, T);
    for (let i = 0; i < n; i++) {
      const r = relevance[i];
      const dy = y[i] - ybar;
      const r2 = r * r;
      const ry = r * dy;
      const ry2 = ry * dy;
      const r2y2 = ry * ry;
      const sr = sign * r;
      const br = +(sr >= a0) + +(sr >= a1) + +(sr >= a2) + +(sr >= a3);
      bucketsR[i] = br;
      const ss = sign * similarity[i];
      const bs = +(ss >= c0) + +(ss >= c1) + +(ss >= c2) + +(ss >= c3);
      bucketsS[i] = bs;
      addToBucket(joint, 5 * br + bs, r, r2, ry, ry2, r2y2);
    }
    // The totals from the joint buckets, in bucket order (rows.wat `bucketsTwo`).
    let totalR = 0;
    let totalR2 = 0;
    let totalRY = 0;
    for (let j = 0; j < 25; j++) {
      totalR += joint[6 * j + 1];
      totalR2 += joint[6 * j + 2];
      totalRY += joint[6 * j + 3];
    }
    totals[0] = totalR;
    totals[1] = totalR2;
    totals[2] = totalRY;
    // Each censor's buckets from the joint ones, left to right (rows.wat `bucketsTwo`).
    for (let b = 0; b <= T; b++) {
      for (let f = 0; f < 6; f++) {
        let byR = joint[30 * b + f];
        let byS = joint[6 * b + f];
        for (let c = 1; c <= T; c++) {
          byR += joint[30 * b + 6 * c + f];
          byS += joint[30 * c + 6 * b + f];
        }
        sumsR[6 * b + f] = byR;
        sumsS[6 * b + f] = byS;
      }
    }
  },
  addWeightsTwo(relevance, bucketsA, slopesA, baseA, bucketsB, slopesB, baseB, target, n) {
    for (let i = 0; i < n; i++) {
      const r = relevance[i];
      if (r !== r) continue;
      target[i] += baseA + baseB + (slopesA[bucketsA[i]] + slopesB[bucketsB[i]]) * r;
    }
  },
};

/**
 * The counting pass of one histogram select (percentile.ts): row i goes into bin
 * ((values[i] - min) * scale) | 0, whose count (table[2 bin + 1]) goes up, and previous[i] links it
 * to that bin's last row before it (table[2 bin], which becomes i).
 *
 * @example
 * const [table, previous] = [new Int32Array(4), new Int32Array(3)];
 * countIntoBins(Float64Array.of(0, 1, 0.5), 0, 1.99, table, previous, 3); // table = [2, 2, 1, 1]: bin 0 last row 2 of 2, bin 1 row 1 of 1; previous = [0, 0, 0]
 */
export function countIntoBins(values: ArrayLike<number>, min: number, scale: number, table: Int32Array, previous: Int32Array, n: number): void {
  for (let i = 0; i < n; i++) {
    const at = 2 * (((values[i] - min) * scale) | 0);
    table[at + 1]++;
    previous[i] = table[at];
    table[at] = i;
  }
}

/**
 * Adds a row's six terms (1, r, r^2, r dy, r dy^2, r^2 dy^2) to bucket b's sums (sums[6 b ..]), in
 * that order.
 *
 * @example
 * const sums = new Float64Array(12);
 * addToBucket(sums, 1, 2, 4, 1, 0.5, 1); // sums = [0, 0, 0, 0, 0, 0, 1, 2, 4, 1, 0.5, 1]
 */
export function addToBucket(sums: Float64Array, b: number, r: number, r2: number, ry: number, ry2: number, r2y2: number): void {
  const o = 6 * b;
  sums[o] += 1;
  sums[o + 1] += r;
  sums[o + 2] += r2;
  sums[o + 3] += ry;
  sums[o + 4] += ry2;
  sums[o + 5] += r2y2;
}

/** The first four of T cuts, NaN for those missing (no score passes NaN). */
export function upToFour(atLeast: Float64Array, T: number): [number, number, number, number] {
  if (T > 4) throw new RangeError(`bucketsTwo takes at most 4 cuts; ${T} given`);
  return [cutOf(atLeast, T, 0), cutOf(atLeast, T, 1), cutOf(atLeast, T, 2), cutOf(atLeast, T, 3)];
}

/** Cut p of T (`upToFour`'s entry p): NaN when there is none. */
function cutOf(atLeast: Float64Array, T: number, p: number): number {
  return p < T ? atLeast[p] : NaN;
}

/** bounds = [min r, max r, min s, max s] over the first n rows, each running test `v < min ? v : min` (a NaN is never taken). */
function boundsOf(rel: Float64Array, sim: Float64Array, bounds: Float64Array, n: number): void {
  let rMin = Infinity;
  let rMax = -Infinity;
  let sMin = Infinity;
  let sMax = -Infinity;
  for (let i = 0; i < n; i++) {
    const r = rel[i];
    const s = sim[i];
    rMin = r < rMin ? r : rMin;
    rMax = r > rMax ? r : rMax;
    sMin = s < sMin ? s : sMin;
    sMax = s > sMax ? s : sMax;
  }
  bounds[0] = rMin;
  bounds[1] = rMax;
  bounds[2] = sMin;
  bounds[3] = sMax;
}

/** The exports of rows.wat: jsKernels' methods with arrays as byte offsets. */
interface RowExports {
  subtractLevel(dst: number, src: number, u: number, stride: number, l: number, d: number, n: number): void;
  scaleFirst(ud: number, inv: number, vd: number, relPrev: number, relNext: number, infoPrev: number, infoNext: number, n: number): void;
  extendRelevance(ud: number, vd: number, relPrev: number, relNext: number, n: number): void;
  finishFirst(
    ud: number,
    inv: number,
    vd: number,
    half: number,
    relPrev: number,
    relNext: number,
    infoPrev: number,
    infoNext: number,
    simNext: number,
    bounds: number,
    n: number,
  ): void;
  finishOther(ud: number, vd: number, half: number, relPrev: number, relNext: number, infoNext: number, simNext: number, bounds: number, n: number): void;
  subtractScaleFirst(
    ud: number,
    src: number,
    u: number,
    stride: number,
    l: number,
    d: number,
    inv: number,
    vd: number,
    relPrev: number,
    relNext: number,
    infoPrev: number,
    infoNext: number,
    n: number,
  ): void;
  subtractFinishFirst(
    ud: number,
    src: number,
    u: number,
    stride: number,
    l: number,
    d: number,
    inv: number,
    vd: number,
    half: number,
    relPrev: number,
    relNext: number,
    infoPrev: number,
    infoNext: number,
    simNext: number,
    bounds: number,
    n: number,
  ): void;

  finishLevel(rel: number, info: number, half: number, sim: number, bounds: number, n: number): void;
  histogramTwo(
    a: number,
    minA: number,
    scaleA: number,
    tableA: number,
    previousA: number,
    b: number,
    minB: number,
    scaleB: number,
    tableB: number,
    previousB: number,
    n: number,
  ): void;
  selectTwo(
    a: number,
    minA: number,
    maxA: number,
    widthA: number,
    headerA: number,
    b: number,
    minB: number,
    maxB: number,
    widthB: number,
    headerB: number,
    fractions: number,
    T: number,
    count: number,
  ): number;
  extendLevel(frame: number, d: number, visited: number, n: number, tolerance: number): number;
  residuals(frame: number, d: number, mask: number, n: number): void;
  extendCalibrateTwo(walk: number, d: number, visited: number, n: number, tolerance: number, cal: number, constants: number): number;
  walkPaths(plan: number, walk: number, cal: number, constants: number, n: number, tolerance: number): number;
  tieWidth(tolerance: number, min: number, max: number): number;
  selectCalibrateTwo(
    frame: number,
    relevance: number,
    similarity: number,
    n: number,
    T: number,
    cutsFrom: number,
    minA: number,
    maxA: number,
    widthA: number,
    minB: number,
    maxB: number,
    widthB: number,
    ybar: number,
    syy: number,
    sign: number,
    strict: number,
    multiplier: number,
    attributes: number,
    minRetained: number,
    minComplement: number,
    secondary: number,
    target: number,
  ): number;
  bucketsTwo(
    relevance: number,
    similarity: number,
    y: number,
    ybar: number,
    sign: number,
    a0: number,
    a1: number,
    a2: number,
    a3: number,
    c0: number,
    c1: number,
    c2: number,
    c3: number,
    bucketsR: number,
    bucketsS: number,
    sumsR: number,
    sumsS: number,
    joint: number,
    T: number,
    totals: number,
    n: number,
    /** 1: the joint buckets alone, 5 bR + bS, into bucketsR (rows.wat `calibrateTwo`); 0: each censor's. */
    jointOnly: number,
  ): void;
  addWeightsTwo(
    relevance: number,
    bucketsA: number,
    slopesA: number,
    baseA: number,
    bucketsB: number,
    slopesB: number,
    baseB: number,
    target: number,
    n: number,
  ): void;
}

/**
 * The WebAssembly kernels on `buffer`, their memory. An array from anywhere else, or shorter than
 * the rows asked for, is refused: the kernel would read or write the wrong place.
 *
 * Long on purpose: one object of every kernel, each binding an export to the checks of its arrays
 * (`at`, `stride`), which all share this one memory.
 */
function wasmKernels(w: RowExports, buffer: ArrayBuffer): RowKernels {
  const at = (a: Float64Array | Int32Array | Uint8Array, n: number): number => {
    if ((a as Branded)[MEMORY] !== buffer) throw new RangeError("an array given to the WebAssembly kernels is not one of their arena's");
    if (a.length < n) throw new RangeError(`an array of ${a.length} given to the WebAssembly kernels for ${n} rows`);
    return a.byteOffset;
  };
  /** The stride in bytes of a table of arrays (`RowArena.arrays`), each of the d used checked. */
  const stride = (u: readonly Float64Array[], d: number, n: number): number => {
    if (d < 2) return 0;
    const base = at(u[0], n);
    const step = at(u[1], n) - base;
    for (let m = 2; m < d; m++) if (at(u[m], n) !== base + m * step) throw new RangeError("subtractLevel: the u arrays are not one table of the arena");
    return step;
  };
  return {
    name: "wasm",
    subtractLevel: (dst, src, u, L, row, d, n) =>
      w.subtractLevel(at(dst, n), at(src, n), d > 0 ? at(u[0], n) : 0, stride(u, d, n), at(L, row + d) + 8 * row, d, n),
    scaleFirst: (ud, inv, vd, relPrev, relNext, infoPrev, infoNext, n) =>
      w.scaleFirst(at(ud, n), inv, vd, at(relPrev, n), at(relNext, n), at(infoPrev, n), at(infoNext, n), n),
    extendRelevance: (ud, vd, relPrev, relNext, n) => w.extendRelevance(at(ud, n), vd, at(relPrev, n), at(relNext, n), n),
    subtractScaleFirst: (ud, src, u, L, row, d, inv, vd, relPrev, relNext, infoPrev, infoNext, n) =>
      w.subtractScaleFirst(
        at(ud, n),
        at(src, n),
        d > 0 ? at(u[0], n) : 0,
        stride(u, d, n),
        at(L, row + d) + 8 * row,
        d,
        inv,
        vd,
        at(relPrev, n),
        at(relNext, n),
        at(infoPrev, n),
        at(infoNext, n),
        n,
      ),
    subtractFinishFirst: (ud, src, u, L, row, d, inv, vd, half, relPrev, relNext, infoPrev, infoNext, simNext, bounds, n) =>
      w.subtractFinishFirst(
        at(ud, n),
        at(src, n),
        d > 0 ? at(u[0], n) : 0,
        stride(u, d, n),
        at(L, row + d) + 8 * row,
        d,
        inv,
        vd,
        half,
        at(relPrev, n),
        at(relNext, n),
        at(infoPrev, n),
        at(infoNext, n),
        at(simNext, n),
        at(bounds, 4),
        n,
      ),

    finishFirst: (ud, inv, vd, half, relPrev, relNext, infoPrev, infoNext, simNext, bounds, n) =>
      w.finishFirst(at(ud, n), inv, vd, half, at(relPrev, n), at(relNext, n), at(infoPrev, n), at(infoNext, n), at(simNext, n), at(bounds, 4), n),
    finishOther: (ud, vd, half, relPrev, relNext, infoNext, simNext, bounds, n) =>
      w.finishOther(at(ud, n), vd, half, at(relPrev, n), at(relNext, n), at(infoNext, n), at(simNext, n), at(bounds, 4), n),
    finishLevel: (rel, info, half, sim, bounds, n) => w.finishLevel(at(rel, n), at(info, n), half, at(sim, n), at(bounds, 4), n),
    histogramTwo: (a, minA, scaleA, tableA, previousA, b, minB, scaleB, tableB, previousB, n) =>
      w.histogramTwo(at(a, n), minA, scaleA, at(tableA, 0), at(previousA, n), at(b, n), minB, scaleB, at(tableB, 0), at(previousB, n), n),
    // A header is a histogram's (percentile.ts `HistogramPair`, in this arena): its offsets are of arrays of this memory.
    selectTwo: (a, minA, maxA, widthA, headerA, b, minB, maxB, widthB, headerB, fractions, T, count) =>
      w.selectTwo(at(a, count), minA, maxA, widthA, at(headerA, 10), at(b, count), minB, maxB, widthB, at(headerB, 10), at(fractions, T), T, count),
    extendLevelOn: (tables, frame) => {
      const { K, n } = tables;
      /** A table's base and stride when its `count` arrays (at least `length` long) are one after another; null otherwise. */
      const table = (arrays: readonly Float64Array[], count: number, length: number): [number, number] | null => {
        if (arrays.length < count || count < 1) return null;
        const base = at(arrays[0], length);
        const stride = count > 1 ? at(arrays[1], length) - base : 0;
        for (let k = 2; k < count; k++) if (at(arrays[k], length) !== base + k * stride) return null;
        return [base, stride];
      };
      const parts = [
        table(tables.u, K, n),
        table(tables.info, K + 1, n),
        table(tables.rel, K + 1, n),
        table(tables.sim, K + 1, n),
        table(tables.bounds, K + 1, 4),
        table(tables.columns, K, n),
      ];
      const values: number[] = [];
      for (const part of parts) {
        if (!part) return undefined;
        values.push(part[0], part[1]);
      }
      values.push(at(tables.L, K * K), K, at(tables.corr, K * K), at(tables.path, K), at(tables.thetaZ, K), at(tables.v, K), at(tables.infoTheta, K + 1));
      const R = tables.R;
      const residuals = R > 0 ? table(tables.residuals, R * K, n) : null;
      if (!(R >= 0 && R < K && K <= 30) || (R > 0 && !residuals)) return undefined;
      // Residuals: base, the bytes between two columns', between two depths', R, the entries.
      values.push(residuals?.[0] ?? 0, residuals?.[1] ?? 0, (residuals?.[1] ?? 0) * K, R, at(tables.residualEntries, K * K), at(tables.scratch, n));
      // The slots written later are where rows.wat reads them (a frame laid out otherwise is a bug here, not bad input).
      if (values.length !== EXTEND_FRAME || values[EXTEND_SLOT.residualLevels] !== R || values[EXTEND_SLOT.scratch] !== tables.scratch.byteOffset)
        throw new Error("extendLevelOn: the frame's slots are not where rows.wat reads them");
      const framed = at(frame, values.length);
      for (let k = 0; k < values.length; k++) frame[k] = values[k];
      // The kernel checks path[d] < K itself (a trap): it reads it from the arena.
      const extend = (d: number, visited: boolean, rows: number, tolerance: number) => {
        if (!(d >= 0 && d < K && rows <= n)) throw new RangeError(`extendLevel: level ${d}, ${rows} rows for K=${K}, ${n} rows`);
        return w.extendLevel(framed, d, visited ? 1 : 0, rows, tolerance) === 1;
      };
      // The kernel traps on d >= R or a bit at or past K.
      const residualsOf = (d: number, mask: number, rows: number) => {
        if (!(d >= 0 && rows <= n)) throw new RangeError(`residuals: level ${d}, ${rows} rows for ${n}`);
        w.residuals(framed, d, mask, rows);
      };
      // Frame 22: the residual levels this walk uses (0 to R): a walk that makes none must not read them.
      const useResiduals = (r: number) => {
        if (!(r >= 0 && r <= R && Number.isInteger(r))) throw new RangeError(`useResiduals: ${r} of ${R} levels`);
        frame[EXTEND_SLOT.residualLevels] = r;
      };
      return Object.assign(extend, { residuals: residualsOf, useResiduals });
    },
    tieWidth: (tolerance, min, max) => w.tieWidth(tolerance, min, max),
    extendCalibrateOn: (walkFrame, calibrationFrame, constants, K, n, plan) => {
      // The frames were written and checked by extendLevelOn and calibrateTwoOn, for n rows and K attributes.
      const [walk, cal, at0] = [at(walkFrame, EXTEND_FRAME), at(calibrationFrame, CALIBRATE_FRAME), at(constants, calibrateConstantsLength(K))];
      // The plan's arrays, checked once: their offsets at the frame's slots 2-4 and 12-17 (rows.wat `walkPaths`).
      const P = plan.paths;
      const frame = plan.frame;
      const planAt = at(frame, WALK_PLAN_FRAME);
      frame[WALK_PLAN.starts] = at(plan.starts, P + 1);
      frame[WALK_PLAN.columns] = at(plan.columns, P * K);
      frame[WALK_PLAN.masks] = at(plan.masks, P * K);
      frame[WALK_PLAN.weight] = at(plan.weight, 8 * P);
      frame[WALK_PLAN.yhat] = at(plan.yhat, 8 * P);
      frame[WALK_PLAN.valid] = at(plan.valid, 8 * P);
      frame[WALK_PLAN.cellCombination] = at(plan.cellCombination, 8 * P);
      frame[WALK_PLAN.combinations] = at(plan.combinations, P);
      frame[WALK_PLAN.capacity] = P;
      let rows = 0;
      return {
        prepare: (c) => {
          if (c.T > 4) throw new RangeError(`calibrateTwo takes at most 4 cuts; ${c.T} given`);
          const values = [
            c.ybar,
            c.syy,
            c.sign,
            c.minRetained,
            c.minComplement,
            c.tieTolerance,
            c.T,
            c.cutsFrom,
            c.strict ? 1 : 0,
            at(c.secondary, 4),
            at(c.target, n),
          ];
          for (let k = 0; k < values.length; k++) constants[k] = values[k];
          for (let k = 1; k <= K; k++) constants[11 + k] = c.multipliers[k];
          frame[WALK_PLAN.cellsPerVisit] = 2 * c.T;
          rows = n;
        },
        run: (d, count, tolerance) => {
          if (!(d >= 0 && d < K && count <= rows)) throw new RangeError(`extendCalibrate: level ${d}, ${count} rows for K=${K}, ${rows} prepared`);
          return w.extendCalibrateTwo(walk, d, 1, count, tolerance, cal, at0);
        },
        walkPaths: (count, tolerance) => {
          // The kernel reads the paths' columns through its frame's offsets: their count and starts are checked here, and it traps on a column at or past K.
          const paths = frame[WALK_PLAN.count];
          const R = frame[WALK_PLAN.residualLevels];
          if (!(
            count <= rows &&
            paths >= 0 &&
            paths <= P &&
            frame[WALK_PLAN.next] >= 0 &&
            R === walkFrame[EXTEND_SLOT.residualLevels] &&
            plan.starts[paths] <= P * K
          ))
            throw new RangeError(
              `walkPaths: ${paths} paths of ${P}, ${count} rows of ${rows}, ${R} residual levels of ${walkFrame[EXTEND_SLOT.residualLevels]}`,
            );
          return w.walkPaths(planAt, walk, cal, at0, count, tolerance);
        },
      };
    },
    calibrateTwoOn: (fixed, frame) => {
      // The fixed arrays checked once (and their capacities for 4 cuts and up to 255 buckets), their offsets in the frame; the rows' arrays on each call.
      const rows = Math.min(fixed.bucketsR.length, fixed.bucketsS.length, fixed.y.length);
      const offsets = [
        at(fixed.headerA, 10),
        at(fixed.headerB, 10),
        at(fixed.fractions, 4),
        at(fixed.cutsR, 4),
        at(fixed.cutsS, 4),
        at(fixed.order, 8),
        at(fixed.atLeast, 8),
        at(fixed.bucketsR, rows),
        at(fixed.bucketsS, rows),
        at(fixed.sumsR, 30),
        at(fixed.sumsS, 30),
        at(fixed.totals, 3),
        at(fixed.rankR, 4),
        at(fixed.rankS, 4),
        at(fixed.slopesR, 256),
        at(fixed.slopesS, 256),
        at(fixed.cells, 40),
        at(fixed.y, rows),
        at(fixed.joint, JOINT_SUMS),
      ];
      const framed = at(frame, offsets.length);
      for (let k = 0; k < offsets.length; k++) frame[k] = offsets[k];
      // The histograms hold at least `rows` values: their arrays were made for the same rows (ArenaPasses).
      return (
        relevance,
        similarity,
        n,
        T,
        cutsFrom,
        minA,
        maxA,
        widthA,
        minB,
        maxB,
        widthB,
        ybar,
        syy,
        sign,
        strict,
        multiplier,
        attributes,
        minRetained,
        minComplement,
        secondary,
        target,
      ) => {
        if (T > 4) throw new RangeError(`calibrateTwo takes at most 4 cuts; ${T} given`);
        if (n > rows) throw new RangeError(`calibrateTwo's arrays hold ${rows} rows; ${n} given`);
        return w.selectCalibrateTwo(
          framed,
          at(relevance, n),
          at(similarity, n),
          n,
          T,
          cutsFrom,
          minA,
          maxA,
          widthA,
          minB,
          maxB,
          widthB,
          ybar,
          syy,
          sign,
          strict ? 1 : 0,
          multiplier,
          attributes,
          minRetained,
          minComplement,
          at(secondary, 4),
          at(target, n),
        );
      };
    },
    bucketsTwo: (relevance, similarity, y, ybar, sign, atLeastR, atLeastS, T, bucketsR, bucketsS, sumsR, sumsS, joint, totals, n) => {
      // The cuts one by one (`cutOf`), as `upToFour` gives them: no array per call on this hot path.
      if (T > 4) throw new RangeError(`bucketsTwo takes at most 4 cuts; ${T} given`);
      w.bucketsTwo(
        at(relevance, n),
        at(similarity, n),
        at(y, n),
        ybar,
        sign,
        cutOf(atLeastR, T, 0),
        cutOf(atLeastR, T, 1),
        cutOf(atLeastR, T, 2),
        cutOf(atLeastR, T, 3),
        cutOf(atLeastS, T, 0),
        cutOf(atLeastS, T, 1),
        cutOf(atLeastS, T, 2),
        cutOf(atLeastS, T, 3),
        at(bucketsR, n),
        at(bucketsS, n),
        at(sumsR, 6 * (T + 1)),
        at(sumsS, 6 * (T + 1)),
        at(joint, JOINT_SUMS),
        T,
        at(totals, 3),
        n,
        0,
      );
    },
    addWeightsTwo: (relevance, bucketsA, slopesA, baseA, bucketsB, slopesB, baseB, target, n) => {
      // A bucket is at most the slopes' last index: a longer table would be read past.
      w.addWeightsTwo(at(relevance, n), at(bucketsA, n), at(slopesA, 256), baseA, at(bucketsB, n), at(slopesB, 256), baseB, at(target, n), n);
    },
  };
}

/** The part of the WebAssembly API the arena uses (the engine is typed without the DOM's or Node's globals). */
interface WebAssemblyApi {
  CompileError: new () => Error;
  Module: new (bytes: Uint8Array) => object;
  Memory: new (descriptor: { initial: number }) => { readonly buffer: ArrayBuffer };
  Instance: new (module: object, imports: object) => { readonly exports: unknown };
}
const wasm = (globalThis as { WebAssembly?: WebAssemblyApi }).WebAssembly;

/** Each module compiled once per thread, by its base64 (null where WebAssembly or its SIMD is missing). */
const compiled = new Map<string, object | null>();

/**
 * The module, or null where WebAssembly or its SIMD is missing (the runtime refuses the bytes).
 * Compiled without a separate `WebAssembly.validate`, which validated the bytes a second time
 * (compiling validates them): 1 to 2.5 ms of a cold process.
 */
function compile(code: Uint8Array): object | null {
  if (!wasm) return null;
  try {
    return new wasm.Module(code);
  } catch (error) {
    if (error instanceof wasm.CompileError) return null;
    throw error;
  }
}

/**
 * An instance of the module in `base64` (a file `npm run gen:kernels` generated) on a memory of its
 * own of at least `bytes` bytes, imported as env.memory; null where WebAssembly or its SIMD is
 * missing (the runtime rejects the module) or the memory is refused (too large, or the address
 * space is spent).
 *
 * @example
 * const made = instantiate(ROWS_WASM, 65536);
 * if (made) new Float64Array(made.memory.buffer, 0, 8); // arrays its exports may be given
 */
export function instantiate(base64: string, bytes: number): { memory: { readonly buffer: ArrayBuffer }; exports: unknown } | null {
  if (!compiled.has(base64)) {
    // A plain loop: `Uint8Array.from` with a callback per byte took about 1 ms in a cold process.
    const text = atob(base64);
    const code = new Uint8Array(text.length);
    for (let i = 0; i < text.length; i++) code[i] = text.charCodeAt(i);
    compiled.set(base64, compile(code));
  }
  const module = compiled.get(base64);
  if (!module || !wasm) return null;
  try {
    const memory = new wasm.Memory({ initial: Math.max(1, Math.ceil(bytes / PAGE)) });
    return { memory, exports: new wasm.Instance(module, { env: { memory } }).exports };
  } catch (error) {
    if (error instanceof RangeError) return null;
    throw error;
  }
}

/**
 * Set on each array an arena hands out: the buffer of the memory it is a view of. The kernels'
 * check reads it instead of the array's `buffer` (about 12 ns a read in V8, four to ten reads a
 * call); a view of the memory that the arena did not hand out is refused like any other array.
 */
const MEMORY = Symbol("the arena memory this array is a view of");
type Branded = { [MEMORY]?: ArrayBuffer };
/** The brand of plain arrays that share code with an arena's: no arena's memory. */
const NO_MEMORY = new ArrayBuffer(0);

/**
 * Gives a plain array the shape of an arena's (its brand, naming no arena's memory), so that code
 * given both kinds (percentile.ts's histograms) sees one map and is not deoptimised when the
 * other kind turns up. The kernels refuse it like any other array that is not their arena's.
 *
 * @example
 * const table = arenaShaped(new Int32Array(16));
 */
export function arenaShaped<A extends Float64Array | Int32Array | Uint8Array>(a: A): A {
  (a as Branded)[MEMORY] = NO_MEMORY;
  return a;
}

const PAGE = 65536;
/** Every array starts on 16 bytes (a pair of rows). */
const ALIGN = 16;
const padded = (bytes: number) => Math.ceil(bytes / ALIGN) * ALIGN;

/**
 * The arrays of one owner (a walk's levels, a pair of histograms), and the kernels that may be
 * given them. Sized once: it hands out at most the bytes asked for at construction.
 *
 * @example
 * const arena = new RowArena(RowArena.bytesFor({ doubles: [1000, 1000] }));
 * const [z, u0] = arena.arrays(2, 1000);
 * arena.kernels.subtractLevel(u0, z, [], arena.array(0), 0, 0, 1000); // u0 = z
 */
export class RowArena {
  readonly kernels: RowKernels;
  /** The memory's buffer, read once (`Memory.buffer` is an API getter, slow in cold code; the memory never grows); null without one. */
  private readonly buffer: ArrayBuffer | null;
  private used = 0;

  constructor(
    /** Bytes, as `bytesFor` counts them. */
    readonly capacity: number,
    choice: KernelChoice = "wasm",
  ) {
    // Without WebAssembly SIMD or the memory, the plain loops, which need no memory of their own.
    const made = choice === "wasm" ? instantiate(ROWS_WASM, capacity) : null;
    this.buffer = made ? made.memory.buffer : null;
    this.kernels = made ? wasmKernels(made.exports as RowExports, made.memory.buffer) : jsKernels;
  }

  /** The bytes an arena needs for arrays of these lengths (doubles, 32-bit integers, bytes). */
  static bytesFor(lengths: { doubles?: readonly number[]; ints?: readonly number[]; bytes?: readonly number[] }): number {
    const total = (lengths: readonly number[] = [], size: number) => lengths.reduce((sum, n) => sum + padded(size * n), 0);
    return total(lengths.doubles, 8) + total(lengths.ints, 4) + total(lengths.bytes, 1);
  }

  /** A zero-filled array of n doubles, its own until the arena is dropped. */
  array(n: number): Float64Array {
    return this.buffer ? this.branded(new Float64Array(this.buffer, this.take(8 * n), n)) : new Float64Array(n);
  }

  /** `count` arrays of n doubles one after another (a table whose arrays are the same bytes apart). */
  arrays(count: number, n: number): Float64Array[] {
    return Array.from({ length: count }, () => this.array(n));
  }

  /** Whether `a` is one of this arena's arrays, as the WebAssembly kernels need (never for plain arrays). */
  holds(a: ArrayBufferView): boolean {
    return this.buffer !== null && (a as Branded)[MEMORY] === this.buffer;
  }

  /** A zero-filled array of n bytes. */
  uint8(n: number): Uint8Array {
    return this.buffer ? this.branded(new Uint8Array(this.buffer, this.take(n), n)) : new Uint8Array(n);
  }

  /** A zero-filled array of n 32-bit integers. */
  int32(n: number): Int32Array {
    return this.buffer ? this.branded(new Int32Array(this.buffer, this.take(4 * n), n)) : new Int32Array(n);
  }

  /** Marks a view of this arena's memory as handed out by it (`MEMORY`). */
  private branded<A extends Float64Array | Int32Array | Uint8Array>(a: A): A {
    (a as Branded)[MEMORY] = this.buffer!;
    return a;
  }

  private take(bytes: number): number {
    const at = this.used;
    if (at + padded(bytes) > this.capacity) throw new RangeError(`the arena holds ${this.capacity} bytes; ${at + padded(bytes)} asked`);
    this.used += padded(bytes);
    return at;
  }
}
