/**
 * Partial sample regression at each threshold of one censor (docs/methodology.md sections 3 to 5),
 * from a handful of sums over the retained rows. The weights themselves are never needed for
 * the diagnostics: fit, asymmetry and outlier influence follow from the same sums, which is what
 * lets a Grid evaluate thousands of cells quickly. `weightsOf` writes the weights when a caller
 * wants them.
 */
import * as choices from "./choices.js";
import { cutBoundary, cutTest, notAllZero, tieWidth } from "./cut.js";
import type { AdjFitMultiplier, CensorOperator, CensorType, CensorUnit } from "./options.js";
import { addToBucket, CALIBRATE_FRAME, JOINT_SUMS, jsKernels, RowArena, upToFour, type CalibrateTwo, type RowKernels } from "./kernels/rows.js";
import { HistogramPair, percentiles, percentilesOfTwo } from "./percentile.js";

export interface CensorSettings {
  thresholds: readonly number[];
  unit: CensorUnit;
  operator: CensorOperator;
}

export interface FitSettings {
  multiplier: AdjFitMultiplier;
  /** Number of attributes of the model, K in K x (fit + asymmetry) and kfit. */
  attributes: number;
  logistic: boolean;
}

/** What a model contributes: its scores (NaN on unusable rows) and, for the logistic scale, d(mu1, xbar). */
export interface ScoredRows {
  relevance: Float64Array;
  similarity: Float64Array;
  usableCount: number;
  positivesDistance: number;
  /** [min, max] of the usable relevance, then of the usable similarity, when the producer tracked them. */
  bounds?: Float64Array;
  /** Where `calibrateBoth` runs its passes when the producer's arrays live in a `RowArena` (a walk's: walk.ts). */
  passes?: ArenaPasses;
  /** True when the producer has already added its cells (walk.ts's `ExtendCalibrate`: `calibrateCellsOfTwo`'s work, in `passes.cells`, the composite and the secondary sums). */
  calibrated?: boolean;
}

/**
 * What a walked model's calibration needs in the arena of its arrays to run its passes over the
 * rows as WebAssembly (kernels/rows.ts): the percentiles' histograms, each censor's buckets and
 * sums (up to four cuts) and slopes, the totals, a copy of y, and one composite per theta that a
 * range of cells adds its weights to (`claimComposite`). The arithmetic is that of the plain
 * loops, bit for bit.
 *
 * @example
 * const arena = new RowArena(ArenaPasses.bytesFor(1000, 1));
 * const passes = new ArenaPasses(arena, 1000, 1); // for models of 1,000 rows whose arrays are in `arena`
 */
export class ArenaPasses {
  readonly kernels: RowKernels;
  readonly histograms: HistogramPair;
  readonly buckets: [Uint8Array, Uint8Array];
  readonly sums: [Float64Array, Float64Array];
  /** The joint buckets' sums both censors' come from (kernels `bucketsTwo`). */
  readonly joint: Float64Array;
  /** Each censor's slopes by bucket (`addWeightsOfTwo`): 256 long, a bucket being a byte. */
  readonly slopes: [Float64Array, Float64Array];
  readonly totals: Float64Array;
  /** Each censor's thresholds' positions among the sorted cuts, and the cells' five planes of 8 (weight, yhat, validity, coefficient, shift: `calibrateCellsOfTwo`). */
  readonly ranks: [Int32Array, Int32Array];
  readonly cells: Float64Array;
  /** Each censor's cuts where `calibrateTwo` reads them: the histograms' own (their select writes them there). */
  readonly cuts: [Float64Array, Float64Array];
  /** The WebAssembly calibration of both censors on these arrays, where the kernels have it. */
  readonly calibrateTwo: CalibrateTwo | undefined;
  /** The frame `calibrateTwo` reads its fixed arrays from (kernels `calibrateTwoOn`). */
  readonly frame: Int32Array;
  private readonly outcome: Float64Array;
  private outcomeFrom: Float64Array | null = null;
  private readonly composites: Float64Array[];
  /** Per theta, the secondary sums (4) of the range that holds its composite. */
  private readonly secondaries: Float64Array[];
  private readonly owners: unknown[];
  constructor(
    private readonly arena: RowArena,
    rows: number,
    thetas: number,
  ) {
    this.kernels = arena.kernels;
    this.histograms = new HistogramPair(arena, rows);
    this.buckets = [arena.uint8(rows), arena.uint8(rows)];
    this.sums = [arena.array(6 * 5), arena.array(6 * 5)];
    this.joint = arena.array(JOINT_SUMS);
    this.slopes = [arena.array(256), arena.array(256)];
    this.totals = arena.array(3);
    this.ranks = [arena.int32(4), arena.int32(4)];
    this.cells = arena.array(40);
    this.cuts = [this.histograms.first.out, this.histograms.second.out];
    const order = arena.int32(8);
    const atLeast = arena.array(8);
    const frame = (this.frame = arena.int32(CALIBRATE_FRAME));
    this.outcome = arena.array(rows);
    this.composites = arena.arrays(thetas, rows);
    this.secondaries = arena.arrays(thetas, 4);
    this.owners = new Array<unknown>(thetas).fill(null);
    const histograms = this.histograms;
    this.calibrateTwo =
      histograms.first.header && histograms.second.header && histograms.fractions
        ? this.kernels.calibrateTwoOn?.(
            {
              headerA: histograms.first.header,
              headerB: histograms.second.header,
              fractions: histograms.fractions,
              cutsR: this.cuts[0],
              cutsS: this.cuts[1],
              order,
              atLeast,
              y: this.outcome,
              bucketsR: this.buckets[0],
              bucketsS: this.buckets[1],
              sumsR: this.sums[0],
              sumsS: this.sums[1],
              joint: this.joint,
              totals: this.totals,
              rankR: this.ranks[0],
              rankS: this.ranks[1],
              slopesR: this.slopes[0],
              slopesS: this.slopes[1],
              cells: this.cells,
            },
            frame,
          )
        : undefined;
  }

  /** The bytes the passes take in an arena, for models of `rows` rows and `thetas` thetas. */
  static bytesFor(rows: number, thetas: number): number {
    const doubles = [6 * 5, 6 * 5, JOINT_SUMS, 256, 256, 3, 40, 8, rows, ...new Array<number>(thetas).fill(rows), ...new Array<number>(thetas).fill(4)];
    return HistogramPair.bytesFor(rows) + RowArena.bytesFor({ bytes: [rows, rows], doubles, ints: [4, 4, 8, CALIBRATE_FRAME] });
  }

  /** y in the arena (copied when it is another array than the last one). */
  outcomeOf(y: Float64Array): Float64Array {
    if (this.outcomeFrom !== y) {
      this.outcome.set(y);
      this.outcomeFrom = y;
    }
    return this.outcome;
  }

  /** Whether the WebAssembly kernels can be given these four arrays (all of this arena's). */
  holds(a: ArrayBufferView, b: ArrayBufferView, c: ArrayBufferView, d: ArrayBufferView): boolean {
    // Four named arrays (the one caller's), not a rest array and a callback per combination.
    const arena = this.arena;
    return arena.holds(a) && arena.holds(b) && arena.holds(c) && arena.holds(d);
  }

  /**
   * Theta `slot`'s composite, for `owner` (a range of cells) to add its weights to: on the first
   * claim of an owner, a copy of `start` (what the owner has added so far elsewhere), and of
   * `startSecondary` into the slot's secondary sums (`secondaryOf`) when given.
   */
  claimComposite(slot: number, owner: object, start: Float64Array, startSecondary?: Float64Array): Float64Array {
    const composite = this.composites[slot];
    if (this.owners[slot] !== owner) {
      composite.set(start);
      if (startSecondary) this.secondaries[slot].set(startSecondary);
      this.owners[slot] = owner;
    }
    return composite;
  }

  /** The secondary sums of theta `slot`'s owner (valid while it holds the slot). */
  secondaryOf(slot: number): Float64Array {
    return this.secondaries[slot];
  }

  /** Copies the owner's composite into `into` (and its secondary sums into `intoSecondary`) and gives the slot up; throws when another owner has taken it meanwhile. */
  releaseComposite(slot: number, owner: object, into: Float64Array, intoSecondary?: Float64Array): void {
    if (this.owners[slot] !== owner) throw new Error(`the composite of theta ${slot} was taken by another range before this one finished`);
    into.set(this.composites[slot]);
    if (intoSecondary) intoSecondary.set(this.secondaries[slot]);
    this.owners[slot] = null;
  }
}

/** One PSR calibration: a (censor, threshold) pair. Invalid ones (fewer than 2 retained, or a retained relevance all tied with 0: docs/ties.md) hold NaN. */
export interface Calibration {
  censor: CensorType;
  threshold: number;
  valid: boolean;
  n: number;
  phi: number;
  rStar: number;
  rStarPercent: number;
  fullVar: number;
  partVar: number;
  lambdaSq: number;
  yhat: number;
  fit: number;
  rho: number;
  asymmetry: number;
  adjustedFit: number;
  kFit: number;
  outlierInfluence: number;
  agreement: number;
  /** w_i = 1/N + coefficient * (delta_i r_i - shift) on usable rows. */
  coefficient: number;
  shift: number;
  /** The same for the complement of the retained set (NaN when it is too small). */
  complementCoefficient: number;
  complementShift: number;
}

/** Per-model outcome statistics over its usable rows. */
export interface OutcomeStats {
  mean: number;
  /** sum (y_i - ybar)^2 */
  sumSquares: number;
}

export function outcomeStats(y: Float64Array, relevance: Float64Array): OutcomeStats {
  let sum = 0;
  let count = 0;
  for (let i = 0; i < y.length; i++) {
    if (relevance[i] !== relevance[i]) continue;
    sum += y[i];
    count++;
  }
  const mean = sum / count;
  let sumSquares = 0;
  for (let i = 0; i < y.length; i++) {
    if (relevance[i] !== relevance[i]) continue;
    sumSquares += (y[i] - mean) ** 2;
  }
  return { mean, sumSquares };
}

/** Reusable buffers so a Grid does not allocate per cell. */
export class CalibrationScratch {
  readonly values: Float64Array;
  readonly selection: Float64Array;
  readonly cuts: Float64Array;
  /** Signed cut boundaries (cut.ts) in ascending order, and each threshold's position among them. */
  readonly sortedCuts: Float64Array;
  readonly rank: Int32Array;
  /** Per row: how many of the sorted cuts it passes, so it is retained at position p iff bucket > p. */
  readonly buckets: Uint8Array;
  /** Six sums per bucket (see `calibrate`). */
  readonly sums: Float64Array;
  /** The thresholds' order by signed cut, and the boundaries as `score >= atLeast[p]` tests. */
  readonly order: Int32Array;
  readonly atLeast: Float64Array;
  /** Summed slopes per bucket (`addWeights`). */
  readonly slopes: Float64Array;
  /** The model's relevance totals (`relevanceTotals`), shared by its censors. */
  readonly totals: Float64Array;
  /**
   * When set, each calibration on this scratch rewrites these objects in place and returns them
   * (no allocation per cell): the calibrations are then valid only until the next calibration on
   * this scratch, like the buckets. A Grid, which reads each cell's calibration at once, sets it.
   */
  reused: Calibration[] | null = null;
  /** With `reused`: the censor calibration each calibration on this scratch rewrites and returns, and `calibrateBoth`'s pair (on its first scratch). */
  fitted: CensorCalibration | null = null;
  pair: [CensorCalibration, CensorCalibration] | null = null;
  constructor(rows: number, thresholds: number) {
    if (thresholds > 255) throw new RangeError("at most 255 thresholds");
    this.values = new Float64Array(rows);
    this.selection = new Float64Array(rows);
    this.cuts = new Float64Array(thresholds);
    this.sortedCuts = new Float64Array(thresholds);
    this.rank = new Int32Array(thresholds);
    this.order = new Int32Array(thresholds);
    this.atLeast = new Float64Array(thresholds);
    this.buckets = new Uint8Array(rows);
    this.sums = new Float64Array(6 * (thresholds + 1));
    this.slopes = new Float64Array(thresholds + 1);
    this.totals = new Float64Array(TOTALS);
  }
}

/** Slots of `relevanceTotals`: sum r, sum r^2, min r, max r, sum r (y - ybar), over the usable rows. */
const TOTALS = 5;

/**
 * The totals over a model's usable rows that every censor's calibration needs; a caller
 * calibrating several censors of one model computes them once and passes them to `calibrate`.
 *
 * @example
 * relevanceTotals(model, y, outcome.mean, scratch.totals);
 * calibrate(model, y, outcome, "relevance", settings, fitSettings, scratch, scratch.totals);
 */
export function relevanceTotals(rows: ScoredRows, y: Float64Array, ybar: number, out: Float64Array): Float64Array {
  const { relevance } = rows;
  let totalR = 0;
  let totalR2 = 0;
  let rMin = Infinity;
  let rMax = -Infinity;
  let totalRY = 0;
  for (let i = 0; i < relevance.length; i++) {
    const r = relevance[i];
    if (r !== r) continue;
    totalR += r;
    totalR2 += r * r;
    rMin = r < rMin ? r : rMin;
    rMax = r > rMax ? r : rMax;
    totalRY += r * (y[i] - ybar);
  }
  out[0] = totalR;
  out[1] = totalR2;
  out[2] = rMin;
  out[3] = rMax;
  out[4] = totalRY;
  return out;
}

/** The calibrations of one censor, with the row buckets that reproduce their masks. */
export interface CensorCalibration {
  calibrations: Calibration[];
  /** Views into the scratch: valid until the next `calibrate` on the same scratch. */
  buckets: Uint8Array;
  rank: Int32Array;
}

/**
 * Calibrates one censor at every threshold. The censor's scores (relevance or similarity) choose
 * the retained rows; the weights are always built from relevance.
 *
 * The thresholds' cuts split the rows into nested retained sets, so each row is put in one bucket
 * (the number of cuts it passes) and its sums are added once; the retained sums at a threshold are
 * then the sums of the buckets above its position.
 */
export function calibrate(
  rows: ScoredRows,
  y: Float64Array,
  outcome: OutcomeStats,
  censor: CensorType,
  settings: CensorSettings,
  fitSettings: FitSettings,
  scratch: CalibrationScratch,
  totals?: Float64Array,
): CensorCalibration {
  const { relevance, usableCount: count } = rows;
  const scores = rows[censor];
  const T = settings.thresholds.length;
  const { values, selection, cuts } = scratch;

  // The usable rows' scores; with no unusable row that is `scores` itself.
  let usableScores: Float64Array = scores;
  if (count < scores.length) {
    let m = 0;
    for (let i = 0; i < scores.length; i++) {
      const s = scores[i];
      if (s === s) values[m++] = s;
    }
    usableScores = values;
  }
  // Scores within the tie width of each other are equal (cut.ts, docs/ties.md).
  let min: number;
  let max: number;
  if (rows.bounds) {
    const b = censor === "relevance" ? 0 : 2;
    min = rows.bounds[b];
    max = rows.bounds[b + 1];
  } else {
    min = Infinity;
    max = -Infinity;
    for (let i = 0; i < count; i++) {
      const v = usableScores[i];
      min = v < min ? v : min;
      max = v > max ? v : max;
    }
  }
  const width = tieWidth(min, max);
  if (settings.unit === "percent") percentiles(usableScores, count, settings.thresholds, selection, cuts, min, max, width);
  else for (let t = 0; t < T; t++) cuts[t] = settings.thresholds[t];
  const sign = setBoundaries(scratch, settings.operator, T, width);
  const t5 = totals ?? relevanceTotals(rows, y, outcome.mean, scratch.totals);
  bucketSums(relevance, scores, y, outcome.mean, sign, scratch, T);
  return calibrationsOf(rows, outcome, censor, settings, fitSettings, scratch, t5, usableScores, width);
}

/**
 * `calibrate` for both censors of a model, each pass over the rows shared by the two (the
 * percentiles' passes, and one pass for the buckets, their sums and the relevance totals): the
 * calibrations of two `calibrate` calls, relevance first, with the same buckets, counts and cuts;
 * with complete rows and at most four thresholds each censor's bucket sums are added from both
 * censors' joint buckets (kernels `bucketsTwo`), so their last bits can differ from one censor's
 * in row order (docs/methodology.md 7.2). Each censor has its own scratch, so that both keep
 * their buckets (`addWeightsOfTwo`).
 *
 * @example
 * const [byRelevance, bySimilarity] = calibrateBoth(model, y, outcome, settings, fitSettings, new CalibrationScratch(N, T), new CalibrationScratch(N, T));
 */
export function calibrateBoth(
  rows: ScoredRows,
  y: Float64Array,
  outcome: OutcomeStats,
  settings: CensorSettings,
  fitSettings: FitSettings,
  first: CalibrationScratch,
  second: CalibrationScratch,
): [CensorCalibration, CensorCalibration] {
  const { relevance, similarity, usableCount: count, bounds } = rows;
  const N = relevance.length;
  const T = settings.thresholds.length;
  if (count < N || !bounds || T > 4) {
    const totals = relevanceTotals(rows, y, outcome.mean, first.totals);
    return [
      calibrate(rows, y, outcome, "relevance", settings, fitSettings, first, totals),
      calibrate(rows, y, outcome, "similarity", settings, fitSettings, second, totals),
    ];
  }
  const widthR = tieWidth(bounds[0], bounds[1]);
  const widthS = tieWidth(bounds[2], bounds[3]);
  const sign = cutsOfTwo(rows, bounds, settings, first, second, widthR, widthS);

  // One pass: each censor's buckets and per-bucket sums (as `bucketSums`), and the relevance totals (as `relevanceTotals`).
  const ybar = outcome.mean;
  const passes = rows.passes;
  // The bucket sums are read where the pass wrote them (the arena's with the passes): no copy.
  const sumsR = (passes ? passes.sums[0] : first.sums).fill(0);
  const sumsS = (passes ? passes.sums[1] : second.sums).fill(0);
  const sums3 = passes ? passes.totals : threeTotals;
  // Indexed rather than destructured or spread: no iterator or array per call on this hot path.
  (passes ? passes.kernels : jsKernels).bucketsTwo(
    relevance,
    similarity,
    passes ? passes.outcomeOf(y) : y,
    ybar,
    sign,
    first.atLeast,
    second.atLeast,
    T,
    passes ? passes.buckets[0] : first.buckets,
    passes ? passes.buckets[1] : second.buckets,
    sumsR,
    sumsS,
    passes ? passes.joint : jointSums,
    sums3,
    N,
  );
  const totals = first.totals;
  totals[0] = sums3[0];
  totals[1] = sums3[1];
  totals[2] = bounds[0];
  totals[3] = bounds[1];
  totals[4] = sums3[2];
  // With the passes, each censor's buckets are the arena's (the WebAssembly `addWeightsOfTwo` reads them there).
  const byRelevance = calibrationsOf(
    rows,
    outcome,
    "relevance",
    settings,
    fitSettings,
    first,
    totals,
    relevance,
    widthR,
    passes ? passes.buckets[0] : first.buckets,
    sumsR,
  );
  const bySimilarity = calibrationsOf(
    rows,
    outcome,
    "similarity",
    settings,
    fitSettings,
    second,
    totals,
    similarity,
    widthS,
    passes ? passes.buckets[1] : second.buckets,
    sumsS,
  );
  if (!first.reused) return [byRelevance, bySimilarity];
  // Reused scratches: the pair too is rewritten by the next call (a Grid reads it at once).
  const pair = (first.pair ??= [byRelevance, bySimilarity]);
  pair[0] = byRelevance;
  pair[1] = bySimilarity;
  return pair;
}

/** Both censors' cuts (`percentilesOfTwo` in percent units) and boundaries, as `calibrateBoth` takes them; returns the sign. */
function cutsOfTwo(
  rows: ScoredRows,
  bounds: Float64Array,
  settings: CensorSettings,
  first: CalibrationScratch,
  second: CalibrationScratch,
  widthR: number,
  widthS: number,
): number {
  const { relevance, similarity } = rows;
  const N = relevance.length;
  const T = settings.thresholds.length;
  if (settings.unit === "percent") {
    percentilesOfTwo(
      relevance,
      similarity,
      N,
      settings.thresholds,
      first.selection,
      second.selection,
      first.cuts,
      second.cuts,
      bounds[0],
      bounds[1],
      widthR,
      bounds[2],
      bounds[3],
      widthS,
      rows.passes?.histograms,
    );
  } else {
    for (let t = 0; t < T; t++) first.cuts[t] = second.cuts[t] = settings.thresholds[t];
  }
  const sign = setBoundaries(first, settings.operator, T, widthR);
  setBoundaries(second, settings.operator, T, widthS);

  return sign;
}

/**
 * A Grid combination's cells for both censors without their calibrations' objects, in one call
 * into WebAssembly after the cuts (the arena's `calibrateTwo`: boundaries, buckets, calibrations,
 * cells, weights): each cell's weight, yhat and validity into cells (T for relevance, then T for
 * similarity, in planes of 8: `ArenaPasses.cells`), the cells' secondary sums added to
 * `secondary`, their weights to `target` (both must be the arena's: the kernels refuse others),
 * exactly as `calibrateBoth`, grid-cells.ts `evaluate` and `addWeightsOfTwo` would. False, with
 * nothing added, where that cannot be had (no arena kernel, the logistic scale, unusable rows,
 * more than 4 thresholds, a NaN cut): the caller then takes that path.
 *
 * @example
 * if (!calibrateCellsOfTwo(model, y, outcome, settings, fitSettings, first, second, secondary, composite)) calibrateBoth(model, y, outcome, settings, fitSettings, first, second);
 */
export function calibrateCellsOfTwo(
  rows: ScoredRows,
  y: Float64Array,
  outcome: OutcomeStats,
  settings: CensorSettings,
  fitSettings: FitSettings,
  first: CalibrationScratch,
  second: CalibrationScratch,
  secondary: Float64Array,
  target: Float64Array,
): boolean {
  const passes = rows.passes;
  const bounds = rows.bounds;
  const calibrateTwo = passes ? passes.calibrateTwo : undefined;
  const relevance = rows.relevance;
  const N = relevance.length;
  const T = settings.thresholds.length;
  if (!passes || !calibrateTwo || !bounds || fitSettings.logistic || rows.usableCount < N || T > 4) return false;
  const widthR = tieWidth(bounds[0], bounds[1]);
  const widthS = tieWidth(bounds[2], bounds[3]);
  const thresholds = settings.thresholds;
  const fractions = passes.histograms.fractions!;
  for (let t = 0; t < T; t++) fractions[t] = thresholds[t];
  passes.outcomeOf(y);
  const test = cutTest(settings.operator);
  const percent = settings.unit === "percent";
  const multiplier = choices.adjFitMultiplier(fitSettings.multiplier, fitSettings.attributes);
  const similarity = rows.similarity;
  const b0 = bounds[0];
  const b1 = bounds[1];
  const b2 = bounds[2];
  const b3 = bounds[3];
  const ybar = outcome.mean;
  const syy = outcome.sumSquares;
  const k = fitSettings.attributes;
  const minRetained = choices.MIN_RETAINED;
  const minComplement = choices.MIN_COMPLEMENT_FOR_ASYMMETRY;
  // The relevance tie width is also the one `calibrationsOf` takes from the totals' min and max (the bounds).
  // mode 0: percentile cuts selected in the kernel; 1: score-unit thresholds as cuts; 2: the cuts already in the arena.
  const run = (mode: number) =>
    calibrateTwo(
      relevance,
      similarity,
      N,
      T,
      mode,
      b0,
      b1,
      widthR,
      b2,
      b3,
      widthS,
      ybar,
      syy,
      test.sign,
      test.strict,
      multiplier,
      k,
      minRetained,
      minComplement,
      secondary,
      target,
    );
  let done = run(percent ? 0 : 1);
  if (done === 0) {
    // A select the kernel leaves to percentilesOfTwo (tied or unbounded ranges, a wanted bin of more than 256 values), into the arena's cuts.
    percentilesOfTwo(
      relevance,
      similarity,
      N,
      thresholds,
      first.selection,
      second.selection,
      passes.cuts[0],
      passes.cuts[1],
      b0,
      b1,
      widthR,
      b2,
      b3,
      widthS,
      passes.histograms,
    );
    done = run(2);
  }
  // 2 on a NaN cut (nothing added): the plain path, whose order of such cuts is Array.prototype.sort's.
  return done === 1;
}

/** Module scratch for `calibrateBoth`'s totals (a call finishes before the next starts). */
const threeTotals = new Float64Array(3);
/** Module scratch for `calibrateBoth`'s joint buckets' sums without an arena. */
const jointSums = new Float64Array(JOINT_SUMS);

/** Orders the cuts in scratch.cuts and writes their boundaries as `score >= atLeast[p]` tests (with `rank`); returns the sign scores are multiplied by. */
function setBoundaries(scratch: CalibrationScratch, operator: CensorOperator, T: number, width: number): number {
  const { cuts, sortedCuts, rank, atLeast } = scratch;
  const test = cutTest(operator);
  const { sign, strict } = test;
  const order = sortedOrder(cuts, sign, T, scratch.order);
  for (let p = 0; p < T; p++) {
    sortedCuts[p] = cutBoundary(cuts[order[p]], width, test);
    rank[order[p]] = p;
  }
  // The same tests written as `s >= boundary`: s > c is s >= the next double above c.
  for (let p = 0; p < T; p++) atLeast[p] = strict ? nextUp(sortedCuts[p]) : sortedCuts[p];
  return sign;
}

/**
 * Puts each usable row in its bucket (the number of cuts its signed score passes) and adds its
 * six sums to the bucket's: n, sum r, sum r^2, sum r dy, sum r dy^2, sum r^2 dy^2.
 */
function bucketSums(relevance: Float64Array, scores: Float64Array, y: Float64Array, ybar: number, sign: number, scratch: CalibrationScratch, T: number): void {
  const { buckets, atLeast } = scratch;
  const sums = scratch.sums.fill(0);
  // Up to four cuts unrolled; a missing cut is NaN, which no score passes. More cuts are counted in a loop.
  const [c0, c1, c2, c3] = upToFour(atLeast, Math.min(T, 4));
  for (let i = 0; i < relevance.length; i++) {
    const r = relevance[i];
    if (r !== r) continue;
    const dy = y[i] - ybar;
    const ry = r * dy;
    const s = sign * scores[i];
    // The count of cuts passed, without data-dependent branches (the boundaries are sorted).
    let b = +(s >= c0) + +(s >= c1) + +(s >= c2) + +(s >= c3);
    for (let p = 4; p < T; p++) b += +(s >= atLeast[p]);
    buckets[i] = b;
    addToBucket(sums, b, r, r * r, ry, ry * dy, ry * ry);
  }
}

/**
 * The calibrations at every threshold from the bucket sums in scratch and the relevance totals.
 *
 * Long on purpose: one censor's calibration arithmetic in one piece, step by step as rows.wat's
 * `cells` does it for the fast path, so that the two can be read side by side.
 */
function calibrationsOf(
  rows: ScoredRows,
  outcome: OutcomeStats,
  censor: CensorType,
  settings: CensorSettings,
  fitSettings: FitSettings,
  scratch: CalibrationScratch,
  t5: Float64Array,
  usableScores: Float64Array,
  width: number,
  /** Where the rows' buckets are, when not in the scratch. */
  buckets = scratch.buckets,
  /** Where the bucket sums are, when not in the scratch (turned into suffix sums in place). */
  sums = scratch.sums,
): CensorCalibration {
  const { usableCount: count } = rows;
  const T = settings.thresholds.length;
  const { cuts, rank } = scratch;
  const ybar = outcome.mean;
  const totalR = t5[0];
  const totalR2 = t5[1];
  const rMin = t5[2];
  const rMax = t5[3];
  const totalRY = t5[4];
  // Suffix sums: slot b now holds the sums over buckets >= b, i.e. the rows retained at position b - 1.
  for (let b = T - 1; b >= 0; b--) for (let f = 0; f < 6; f++) sums[6 * b + f] += sums[6 * (b + 1) + f];

  const fullVar = totalR2 / (count - 1);
  const relevanceWidth = tieWidth(rMin, rMax);
  const syy = outcome.sumSquares;
  const reused = scratch.reused;
  const out: Calibration[] = reused ?? [];
  // The rules of choices.ts and cut.ts, looked up once per call rather than once per threshold.
  const { MIN_RETAINED, MIN_COMPLEMENT_FOR_ASYMMETRY, kfit, outlierInfluence } = choices;
  const zeroTest = notAllZero;
  const multiplier = choices.adjFitMultiplier(fitSettings.multiplier, fitSettings.attributes);
  for (let t = 0; t < T; t++) {
    const c = reused ? (reused[t] ??= blankCalibration()) : blankCalibration();
    if (!reused) out.push(c);
    const o = 6 * (rank[t] + 1);
    const n = sums[o];
    const s1 = sums[o + 1];
    const s2 = sums[o + 2];
    const sy = sums[o + 3];
    const partVar = s2 / (n - 1);
    const threshold = settings.thresholds[t];
    const rStarPercent = settings.unit === "percent" ? threshold : choices.shareBelow(usableScores, count, cuts[t], width);
    if (n < MIN_RETAINED || !zeroTest(s2, n, relevanceWidth)) {
      setInvalid(c, censor, threshold, n, count, cuts[t], rStarPercent, fullVar);
      continue;
    }
    const lambdaSq = fullVar / partVar;
    const coefficient = lambdaSq / (n - 1);
    const shift = s1 / count;
    const spread = s2 - (s1 * s1) / count;
    const rho = correlation(sy, spread, syy);

    const nc = count - n;
    const s1c = totalR - s1;
    const s2c = totalR2 - s2;
    const complementValid = nc >= MIN_COMPLEMENT_FOR_ASYMMETRY && zeroTest(s2c, nc, relevanceWidth);
    const rhoC = complementValid ? correlation(totalRY - sy, s2c - (s1c * s1c) / count, syy) : 0;
    const asymmetry = complementValid ? 0.5 * (rho - rhoC) ** 2 : 0;
    const fit = rho * rho;

    const diagonal = sums[o + 5] - 2 * shift * sums[o + 4] + shift * shift * syy;
    const outlier = outlierInfluence(diagonal, spread * syy);

    const linearPart = coefficient * sy;
    const yhat = fitSettings.logistic ? logisticYhat(ybar, linearPart, rows.positivesDistance) : ybar + linearPart;
    const complementCoefficient = complementValid ? fullVar / (s2c / (nc - 1)) / (nc - 1) : NaN;
    c.censor = censor;
    c.threshold = threshold;
    c.valid = true;
    c.n = n;
    c.phi = n / count;
    c.rStar = cuts[t];
    c.rStarPercent = rStarPercent;
    c.fullVar = fullVar;
    c.partVar = partVar;
    c.lambdaSq = lambdaSq;
    c.yhat = yhat;
    c.fit = fit;
    c.rho = rho;
    c.asymmetry = asymmetry;
    c.adjustedFit = multiplier * (fit + asymmetry);
    c.kFit = kfit(fit, fitSettings.attributes);
    c.outlierInfluence = outlier;
    c.agreement = fit - outlier;
    c.coefficient = coefficient;
    c.shift = shift;
    c.complementCoefficient = complementCoefficient;
    c.complementShift = complementValid ? s1c / count : NaN;
  }
  if (!reused) return { calibrations: out, buckets, rank };
  if (reused.length !== T) reused.length = T;
  const fitted = (scratch.fitted ??= { calibrations: out, buckets, rank });
  fitted.calibrations = out;
  fitted.buckets = buckets;
  fitted.rank = rank;
  return fitted;
}

/** Indices of the thresholds ordered by their signed cut, ascending (a stable sort), written to `order`. */
function sortedOrder(cuts: Float64Array, sign: number, T: number, order: Int32Array): Int32Array {
  let comparable = true;
  for (let t = 0; t < T; t++) comparable &&= cuts[t] === cuts[t];
  if (!comparable) {
    // A NaN cut makes the comparison inconsistent: keep exactly the order Array.prototype.sort gives.
    const sorted = Array.from({ length: T }, (_, t) => t).sort((a, b) => sign * cuts[a] - sign * cuts[b]);
    for (let t = 0; t < T; t++) order[t] = sorted[t];
    return order;
  }
  // Insertion sort: stable like Array.prototype.sort, without allocating (T is small).
  for (let t = 0; t < T; t++) {
    const key = sign * cuts[t];
    let k = t - 1;
    while (k >= 0 && sign * cuts[order[k]] - key > 0) {
      order[k + 1] = order[k];
      k--;
    }
    order[k + 1] = t;
  }
  return order;
}

/** The least double above x, for x not NaN and below +Infinity (then `s > x` is `s >= nextUp(x)`); NaN for +Infinity, which nothing exceeds. */
function nextUp(x: number): number {
  if (x !== x || x === Infinity) return NaN;
  if (x === 0) return Number.MIN_VALUE;
  bits[0] = x;
  // Little-endian halves of the IEEE 754 pattern; |x| grows by one unit in the last place.
  const up = x > 0 ? 1 : -1;
  const low = (words[LOW] + up) >>> 0;
  if ((up > 0 && low === 0) || (up < 0 && low === 0xffffffff)) words[HIGH] += up;
  words[LOW] = low;
  return bits[0];
}
const bits = new Float64Array(1);
const words = new Uint32Array(bits.buffer);
const LITTLE_ENDIAN = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;
const LOW = LITTLE_ENDIAN ? 0 : 1;
const HIGH = 1 - LOW;

/** Pearson correlation of (delta r) with y from its sums; 0 when the weights are constant. */
function correlation(crossSum: number, spread: number, syy: number): number {
  const denominator = Math.sqrt(spread * syy);
  return denominator > 0 ? crossSum / denominator : 0;
}

/**
 * docs/methodology.md section 5.8 (the book's binary formula, unverified against the hosted engine):
 * logit = ln A + B * linearPart + C * d(mu1, xbar), A = ybar/(1-ybar), B = 1/(ybar(1-ybar)), C = A^2 - 1.
 */
function logisticYhat(ybar: number, linearPart: number, positivesDistance: number): number {
  const a = ybar / (1 - ybar);
  const b = 1 / (ybar * (1 - ybar));
  const c = a * a - 1;
  const logit = Math.log(a) + b * linearPart + c * positivesDistance;
  return 1 / (1 + Math.exp(-logit));
}

/** A calibration object of the one shape every calibration has (its fields are then set). */
function blankCalibration(): Calibration {
  return {
    censor: "relevance",
    threshold: NaN,
    valid: false,
    n: NaN,
    phi: NaN,
    rStar: NaN,
    rStarPercent: NaN,
    fullVar: NaN,
    partVar: NaN,
    lambdaSq: NaN,
    yhat: NaN,
    fit: NaN,
    rho: NaN,
    asymmetry: NaN,
    adjustedFit: NaN,
    kFit: NaN,
    outlierInfluence: NaN,
    agreement: NaN,
    coefficient: NaN,
    shift: NaN,
    complementCoefficient: NaN,
    complementShift: NaN,
  };
}

/** Makes c an invalid calibration (NaN wherever there is no value). */
function setInvalid(
  c: Calibration,
  censor: CensorType,
  threshold: number,
  n: number,
  count: number,
  rStar: number,
  rStarPercent: number,
  fullVar: number,
): void {
  c.censor = censor;
  c.threshold = threshold;
  c.valid = false;
  c.n = n;
  c.phi = n / count;
  c.rStar = rStar;
  c.rStarPercent = rStarPercent;
  c.fullVar = fullVar;
  c.partVar = NaN;
  c.lambdaSq = NaN;
  c.yhat = NaN;
  c.fit = NaN;
  c.rho = NaN;
  c.asymmetry = NaN;
  c.adjustedFit = NaN;
  c.kFit = NaN;
  c.outlierInfluence = NaN;
  c.agreement = NaN;
  c.coefficient = NaN;
  c.shift = NaN;
  c.complementCoefficient = NaN;
  c.complementShift = NaN;
}

/**
 * Adds sum_t factors[t] * w_t,i to target[i] on every usable row, w_t the weights of calibration t:
 * w_t,i = 1/N + coefficient_t (delta_t,i r_i - shift_t). One pass whatever the number of thresholds:
 * a row's bucket says at which thresholds it is retained. A zero factor skips its calibration.
 */
export function addWeights(rows: ScoredRows, fitted: CensorCalibration, factors: ArrayLike<number>, target: Float64Array, scratch?: CalibrationScratch): void {
  const { relevance } = rows;
  const { buckets } = fitted;
  // slopes[b]: the summed slopes of the thresholds a row in bucket b is retained at (positions < b).
  const slopes = scratch ? scratch.slopes : new Float64Array(fitted.calibrations.length + 1);
  const base = slopesOf(rows, fitted, factors, slopes);
  for (let i = 0; i < relevance.length; i++) {
    const r = relevance[i];
    if (r === r) target[i] += base + slopes[buckets[i]] * r;
  }
}

/**
 * `addWeights` of two censors' calibrations of one model in one pass: on each usable row both
 * censors' weighted sums are added to target[i] at once, their bases and the row's two slopes
 * added first (kernels `addWeightsTwo`), which is two `addWeights` calls within rounding
 * (docs/methodology.md 7.2, "The weights' pass"). Each needs its own scratch (its slopes).
 *
 * @example
 * const [a, b] = calibrateBoth(model, y, outcome, settings, fitSettings, first, second);
 * addWeightsOfTwo(model, a, factorsA, first, b, factorsB, second, composite);
 */
export function addWeightsOfTwo(
  rows: ScoredRows,
  a: CensorCalibration,
  factorsA: ArrayLike<number>,
  scratchA: CalibrationScratch,
  b: CensorCalibration,
  factorsB: ArrayLike<number>,
  scratchB: CalibrationScratch,
  target: Float64Array,
): void {
  const { relevance } = rows;
  const baseA = slopesOf(rows, a, factorsA, scratchA.slopes);
  const baseB = slopesOf(rows, b, factorsB, scratchB.slopes);
  const passes = rows.passes;
  // A scratch holds at most 255 thresholds: its slopes fit the arena's 256.
  if (passes && passes.holds(relevance, a.buckets, b.buckets, target)) {
    const slopesA = passes.slopes[0];
    const slopesB = passes.slopes[1];
    // Copied by a loop (T + 1 values): cheaper than a call of set.
    for (let k = 0; k < scratchA.slopes.length; k++) slopesA[k] = scratchA.slopes[k];
    for (let k = 0; k < scratchB.slopes.length; k++) slopesB[k] = scratchB.slopes[k];
    passes.kernels.addWeightsTwo(relevance, a.buckets, slopesA, baseA, b.buckets, slopesB, baseB, target, relevance.length);
  } else {
    jsKernels.addWeightsTwo(relevance, a.buckets, scratchA.slopes, baseA, b.buckets, scratchB.slopes, baseB, target, relevance.length);
  }
}

/** Fills slopes[b] (the summed slopes of the thresholds a row in bucket b is retained at) and returns the weights' common part, as in `addWeights`. */
function slopesOf(rows: ScoredRows, fitted: CensorCalibration, factors: ArrayLike<number>, slopes: Float64Array): number {
  const { calibrations, rank } = fitted;
  const T = calibrations.length;
  const count = rows.usableCount;
  let base = 0;
  slopes.fill(0);
  for (let t = 0; t < T; t++) {
    const factor = factors[t];
    if (factor === 0) continue;
    const c = calibrations[t];
    base += factor * (1 / count - c.coefficient * c.shift);
    for (let b = rank[t] + 1; b <= T; b++) slopes[b] += factor * c.coefficient;
  }
  return base;
}

/**
 * Writes calibration t's weights (0 on unusable rows), its include mask and the weights the
 * complement of its retained set would get.
 */
export function weightsOf(
  rows: ScoredRows,
  fitted: CensorCalibration,
  t: number,
  out: { weights: Float64Array; include: Float64Array; excluded: Float64Array },
): void {
  const factors = new Float64Array(fitted.calibrations.length);
  factors[t] = 1;
  out.weights.fill(0);
  addWeights(rows, fitted, factors, out.weights);
  const { relevance, usableCount: count } = rows;
  const c = fitted.calibrations[t];
  const position = fitted.rank[t];
  for (let i = 0; i < relevance.length; i++) {
    const r = relevance[i];
    if (r !== r) {
      out.include[i] = 0;
      out.excluded[i] = 0;
      continue;
    }
    const kept = fitted.buckets[i] > position;
    out.include[i] = kept ? 1 : 0;
    out.excluded[i] = 1 / count + c.complementCoefficient * ((kept ? 0 : r) - c.complementShift);
  }
}

/** The full-sample regression (threshold 0, every usable row): the least-squares prediction at theta. */
export function linearPrediction(rows: ScoredRows, y: Float64Array, outcome: OutcomeStats): number {
  let cross = 0;
  for (let i = 0; i < y.length; i++) {
    const r = rows.relevance[i];
    if (r === r) cross += r * (y[i] - outcome.mean);
  }
  return outcome.mean + cross / (rows.usableCount - 1);
}
