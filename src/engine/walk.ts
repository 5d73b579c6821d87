/**
 * Relevance models for many attribute combinations that share one set of moments (complete data),
 * visited in trie order so that each combination extends its prefix by one column.
 *
 * In standardised units (correlation matrix R) a combination's Cholesky factor extends its
 * prefix's by one row, so u = L^-1 (x_i - xbar) gains one coordinate per added column. Then
 * relevance r_i = u_i . v and info_x_i = |u_i|^2 (v = L^-1 (theta - xbar)) grow by one term each:
 * a combination costs O(N depth) instead of moments, an inverse and O(N K^2) quadratic forms.
 *
 * Only v depends on theta: the factor L, the whitened attributes u_i and info_x_i depend on X and
 * the combination alone, so an experiment (many thetas against one X) walks once for all its
 * thetas (`walkCombinationsMany`), each theta's scores computed exactly as if it were walked alone.
 */
import type { Dataset } from "./data.js";
import { basisKernels } from "./kernels/basis.js";
import {
  calibrateConstantsLength,
  EXTEND_FRAME,
  jsKernels,
  RowArena,
  WALK_PLAN,
  walkPlanBytes,
  walkPlanIn,
  type ExtendCalibrate,
  type ExtendLevel,
  type KernelChoice,
  type RowKernels,
  type WalkPlan,
} from "./kernels/rows.js";
import { PIVOT_TOLERANCE } from "./linalg.js";
import { ArenaPasses, type ScoredRows } from "./calibrate.js";

export interface WalkedModel extends ScoredRows {
  infoX: Float64Array;
  infoTheta: number;
  bounds: Float64Array;
  passes: ArenaPasses;
  /** Which of the walk's thetas the model is for (0 to M - 1). */
  theta: number;
  /** Whether its cells were added as its level was made (`WalkLevels.calibrating`); false otherwise. */
  calibrated: boolean;
}

/** Attributes in standard units, shared by every combination of a complete-data Grid. */
export interface Standardized {
  rows: number;
  cols: number;
  /** Column-major (x_ij - mean_j) / sd_j; a constant column is all 0 with scale 0. */
  z: Float64Array;
  thetaZ: Float64Array;
  mean: Float64Array;
  scale: Float64Array;
  /** Correlation matrix, row-major K x K. */
  corr: Float64Array;
}

export function standardize(data: Dataset, theta: Float64Array): Standardized {
  const { rows: N, cols: K, X } = data;
  const mean = new Float64Array(K);
  const scale = new Float64Array(K);
  const z = new Float64Array(K * N);
  const corr = new Float64Array(K * K);
  // Each column's mean and sum of squares in row order; a constant column has no scale (0), so
  // every combination holding it is singular (basis.wat, or its plain twin).
  basisKernels().standardize(X, N, K, mean, scale, z, corr);
  return { rows: N, cols: K, z, thetaZ: standardTheta(mean, scale, theta), mean, scale, corr };
}

/** The same standardised attributes with another theta (X's moments are not recomputed). */
export function withTheta(shared: Standardized, theta: Float64Array): Standardized {
  return { ...shared, thetaZ: standardTheta(shared.mean, shared.scale, theta) };
}

function standardTheta(mean: Float64Array, scale: Float64Array, theta: Float64Array): Float64Array {
  const out = new Float64Array(scale.length);
  for (let j = 0; j < scale.length; j++) out[j] = scale[j] === 0 ? 0 : (theta[j] - mean[j]) / scale[j];
  return out;
}

/**
 * Calls `visit(index, model)` for each combination whose index is listed in `indices` (ascending
 * column lists), in the order of `trieOrder` (which also orders each one's columns), or in the
 * order and along the columns of a `Trie` given instead; or `singular(index)` when its covariance
 * is singular. The model's arrays are reused between calls.
 */
export function walkCombinations(
  shared: Standardized,
  y: Float64Array,
  combinations: readonly number[][],
  indices: readonly number[] | Trie,
  logistic: boolean,
  visit: (index: number, model: WalkedModel) => void,
  singular: (index: number) => void,
  reuse?: WalkLevels,
  cells?: WalkedCells,
): void {
  walkCombinationsMany(shared, [shared.thetaZ], y, combinations, indices, logistic, (index, _, model) => visit(index, model), singular, reuse, cells);
}

/**
 * Takes the cells of `count` visits made in the walk's kernel (`WalkPlan`'s block: each visit's
 * 2 T cells, one visit after another, in the order of the walk), instead of a `visit` of each.
 */
export type WalkedCells = (block: WalkPlan, count: number) => void;

/**
 * `walkCombinations` for several thetas at once (each a `thetaZ` in the standard units of
 * `shared`): per combination, `visit(index, t, model)` for t = 0, 1, ... The work that does not
 * depend on theta (the factor, the whitened attributes, informativeness) is done once; each
 * theta's model is bit-identical to the one `walkCombinations` gives for that theta alone.
 *
 * Long on purpose: one hot loop over the combinations, each theta's update inline, so that the
 * shared factor and the whitened attributes stay in locals.
 *
 * @example
 * walkCombinationsMany(shared, [withTheta(shared, a).thetaZ, withTheta(shared, b).thetaZ], y, combinations, [0, 1], false,
 *   (index, t, model) => console.log(index, t, model.relevance[0]), (index) => console.log(index, "singular"));
 */
export function walkCombinationsMany(
  shared: Standardized,
  thetaZs: readonly Float64Array[],
  y: Float64Array,
  combinations: readonly number[][],
  indices: readonly number[] | Trie,
  logistic: boolean,
  visit: (index: number, t: number, model: WalkedModel) => void,
  singular: (index: number) => void,
  /** The per-depth arrays, reused from an earlier walk of the same sizes (a fresh set when absent or of other sizes). */
  reuse?: WalkLevels,
  /** Where the kernel may hand the cells it made (`walkInKernel`): given, a walk whose levels are `calibrating` runs in one kernel call. */
  cells?: WalkedCells,
): void {
  const { rows: N, cols: K, scale, corr } = shared;
  const M = thetaZs.length;
  // The rows whose y is 1, for the logistic scale's positives distance (0 on the linear scale either way: its sums are 0).
  let positives = 0;
  if (logistic) for (let i = 0; i < N; i++) if (y[i] === 1) positives++;

  const levels = reuse && reuse.fits(N, K, M) ? reuse : WalkLevels.forThread(N, K, M);
  const { L, u, info, positivesDistance, rel, sim, bounds, v, infoTheta, models, kernels } = levels;
  const columns = levels.columnsOf(shared);
  // Only with the arena's own copy of the columns (columnsOf), which its frame points at; it reads
  // the correlations and the first theta from the arena too.
  const extendLevel = columns === levels.copiedColumns ? levels.extendLevel : undefined;
  // A visited level's cells in the same call, when the range asked for them (one theta).
  const extendCalibrate = extendLevel && M === 1 && levels.calibrating ? levels.extendCalibrate : undefined;
  // The first levels of a path keep their columns' residuals (docs/architecture.md "Residuals of
  // the first levels") once this thread has walked a few Grids' chunks: in a fresh process V8
  // runs the kernels unoptimised at first, and there the residuals cost a Grid more than they save.
  const residualDepth = extendLevel && walksOnThread++ >= WALKS_BEFORE_RESIDUALS ? levels.residualDepth : 0;
  if (extendLevel) {
    extendLevel.useResiduals(residualDepth);
    levels.corr.set(corr);
    levels.thetaZ.set(thetaZs[0]);
  }
  // The current path's columns, stack[0..top): a typed array (the levels', which extendLevel reads) and a depth (setting an array's length is a runtime call).
  const stack = levels.path;
  let top = 0;
  let singularFrom = Infinity; // depth at which the current path first became singular
  // The depth whose similarity and bounds the levels hold (-1: none). Only a visited level needs
  // them (a deeper level is built from relevance and informativeness alone), so one similarity
  // array per theta serves every depth (`WalkLevels.sim`).
  let similarityAt = -1;

  // Each combination's columns in the order of a trie that shares more levels (`trieOrder`), unless the caller gave the trie.
  const trie = "paths" in indices ? indices : trieOrder(combinations, indices);
  if (extendCalibrate && cells && !logistic) {
    walkInKernel(levels, scale, N, trie, flatTrie(trie, residualDepth), visit, singular, cells, finish);
    return;
  }
  const { order, paths } = trie;
  const masks = residualDepth > 0 ? residualMasks(paths, residualDepth) : null;
  for (let o = 0; o < order.length; o++) {
    const index = order[o];
    const combination = paths[o];
    let common = 0;
    while (common < top && common < combination.length && stack[common] === combination[common]) common++;
    // A combination that is a strict prefix of the stack reuses its level: pop past it to recompute nothing.
    top = common;
    if (singularFrom >= common) singularFrom = Infinity;
    for (let d = common; d < combination.length; d++) {
      const j = combination[d];
      stack[top++] = j;
      if (singularFrom <= d) continue;
      if (scale[j] === 0 || !extend(d, j, d + 1 === combination.length)) singularFrom = d;
      else if (d < residualDepth) {
        const mask = masks![o * residualDepth + d];
        if (mask !== 0) extendLevel!.residuals(d, mask, N);
      }
    }
    if (singularFrom < combination.length) {
      singular(index);
      continue;
    }
    const depth = combination.length;
    if (similarityAt !== depth) finish(depth);
    for (let t = 0; t < M; t++) {
      const model = models[t][depth];
      model.infoTheta = infoTheta[t][depth];
      model.positivesDistance = positivesDistance[depth];
      visit(index, t, model);
      model.calibrated = false;
    }
  }

  /** Adds column j at depth d (with the new level's similarity and bounds when it is `visited`); false when the extended covariance is singular. */
  function extend(d: number, j: number, visited: boolean): boolean {
    // The first theta's level in one call where the kernels have it (the factor's row, its v_d and
    // informativeness, the level's pass: the very operations of the loops below, in their order).
    const first = extendLevel ? 1 : 0;
    // Level d + 1 is new: a similarity made of it or of a deeper level is no more.
    if (similarityAt > d) similarityAt = -1;
    if (extendCalibrate && visited) {
      const status = extendCalibrate.run(d, N, PIVOT_TOLERANCE);
      if (status === 3) return false;
      models[0][d + 1].calibrated = status === 1;
    } else if (extendLevel) {
      if (!extendLevel(d, visited, N, PIVOT_TOLERANCE)) return false;
    } else {
      let diag = corr[j * K + j];
      for (let m = 0; m < d; m++) {
        let s = corr[j * K + stack[m]];
        for (let p = 0; p < m; p++) s -= L[d * K + p] * L[m * K + p];
        const l = s / L[m * K + m];
        L[d * K + m] = l;
        diag -= l * l;
      }
      if (!(diag > PIVOT_TOLERANCE)) return false;
      L[d * K + d] = Math.sqrt(diag);
    }
    const ud = u[d];
    // ud = z_j - l_0 u_0 - l_1 u_1 - ... in that order: in the first theta's pass, one call with it (the kernels' subtract*First).
    const inv = first < M ? 1 / L[d * K + d] : 0;
    if (M === 0) kernels.subtractLevel(ud, columns[j], u, L, d * K, d, N);
    const infoPrev = info[d];
    const infoNext = info[d + 1];
    // The first theta's pass also finishes the shared column (scaled u_d, info_x); the others read it.
    for (let t = first; t < M; t++) {
      const vt = v[t];
      let vd = thetaZs[t][j];
      for (let q = 0; q < d; q++) vd -= L[d * K + q] * vt[q];
      vd *= inv;
      vt[d] = vd;
      const relPrev = rel[t][d];
      const relNext = rel[t][d + 1];
      const thetaInfo = infoTheta[t][d] + vd * vd;
      const halfTheta = 0.5 * thetaInfo;
      if (!visited) {
        if (t === 0) kernels.subtractScaleFirst(ud, columns[j], u, L, d * K, d, inv, vd, relPrev, relNext, infoPrev, infoNext, N);
        else kernels.extendRelevance(ud, vd, relPrev, relNext, N);
      } else if (t === 0)
        kernels.subtractFinishFirst(
          ud,
          columns[j],
          u,
          L,
          d * K,
          d,
          inv,
          vd,
          halfTheta,
          relPrev,
          relNext,
          infoPrev,
          infoNext,
          sim[t][d + 1],
          bounds[t][d + 1],
          N,
        );
      else kernels.finishOther(ud, vd, halfTheta, relPrev, relNext, infoNext, sim[t][d + 1], bounds[t][d + 1], N);
      infoTheta[t][d + 1] = thetaInfo;
    }
    if (visited) similarityAt = d + 1;
    // The mean of the scaled u_d over the rows whose y is 1 (logistic scale).
    let positiveSum = 0;
    if (logistic) for (let i = 0; i < N; i++) if (y[i] === 1) positiveSum += ud[i];
    const g = positives > 0 ? positiveSum / positives : 0;
    positivesDistance[d + 1] = positivesDistance[d] + g * g;
    return true;
  }

  /** The similarity and bounds of a level extended without them. */
  function finish(depth: number): void {
    for (let t = 0; t < M; t++) kernels.finishLevel(rel[t][depth], info[depth], 0.5 * infoTheta[t][depth], sim[t][depth], bounds[t][depth], N);
    similarityAt = depth;
  }
}

/**
 * `walkCombinationsMany`'s loop for one theta whose visited levels are calibrated as they are made
 * (`WalkLevels.extendCalibrate`), in the kernel (rows.wat `walkPaths`): the same levels, residuals
 * and calls in the same order, the paths written to the levels' `WalkPlan` up to its size at a
 * time. The kernel stops where the loop would do more than make a level and its cells: a singular
 * combination, a visit whose cells it could not make, a level made before. The caller's
 * `visit` or `singular` takes that one as the loop would, after `cells` has taken the visits before it.
 */
function walkInKernel(
  levels: WalkLevels,
  scale: Float64Array,
  N: number,
  { order, paths }: Trie,
  flat: FlatTrie,
  visit: (index: number, t: number, model: WalkedModel) => void,
  singular: (index: number) => void,
  cells: WalkedCells,
  /** walkCombinationsMany's `finish`: a level's similarity and bounds. */
  finish: (depth: number) => void,
): void {
  const plan = levels.plan!;
  const walk = levels.extendCalibrate!;
  const { frame, starts } = plan;
  const R = flat.R;
  let zeroScale = 0;
  for (let j = 0; j < scale.length; j++) if (scale[j] === 0) zeroScale |= 1 << j;
  frame[WALK_PLAN.residualLevels] = R;
  frame[WALK_PLAN.zeroScale] = zeroScale;
  frame[WALK_PLAN.top] = 0;
  frame[WALK_PLAN.singularFrom] = 0x7fffffff;
  frame[WALK_PLAN.similarityAt] = -1;
  frame[WALK_PLAN.visits] = 0;
  for (let from = 0; from < order.length; from += plan.paths) {
    const count = Math.min(plan.paths, order.length - from);
    // The paths [from, from + count) of the flat trie, their starts from 0.
    const first = flat.starts[from];
    for (let o = 0; o <= count; o++) starts[o] = flat.starts[from + o] - first;
    plan.columns.set(flat.columns.subarray(first, flat.starts[from + count]));
    plan.combinations.set(flat.combinations.subarray(from, from + count));
    plan.masks.set(flat.masks.subarray(from * R, (from + count) * R));
    frame[WALK_PLAN.next] = 0;
    frame[WALK_PLAN.count] = count;
    for (;;) {
      const status = walk.walkPaths(N, PIVOT_TOLERANCE);
      if (frame[WALK_PLAN.visits] > 0) {
        cells(plan, frame[WALK_PLAN.visits]);
        frame[WALK_PLAN.visits] = 0;
      }
      if (status === 0) break;
      if (status === 4) continue;
      const o = frame[WALK_PLAN.next];
      const index = order[from + o];
      const depth = paths[from + o].length;
      if (status === 1) singular(index);
      else {
        if (status === 3) {
          finish(depth);
          frame[WALK_PLAN.similarityAt] = depth;
        }
        const model = levels.models[0][depth];
        model.infoTheta = levels.infoTheta[0][depth];
        // The linear scale's (no walk in the kernel is logistic): walkCombinationsMany's positivesDistance, 0 at every depth.
        model.positivesDistance = 0;
        visit(index, 0, model);
        model.calibrated = false;
      }
      frame[WALK_PLAN.next] = o + 1;
    }
  }
}

/**
 * The arrays of a walk, one level per depth of the trie (per theta where the level depends on it).
 * Level 0 is all zeros and never written; a deeper level is recomputed before it is read, so the
 * same levels serve walk after walk (a Grid's chunks) without being cleared. They live in one
 * `RowArena`, whose kernels (WebAssembly unless `choice` is "js" or it cannot be had) do the
 * walk's passes over the rows and those of its models' calibrations (`ArenaPasses`); the results
 * are the same bits either way.
 *
 * @example
 * const levels = new WalkLevels(1000, 10, 1);
 * walkCombinationsMany(shared, [shared.thetaZ], y, combinations, [0, 1, 2], false, visit, singular, levels);
 */
export class WalkLevels {
  readonly L: Float64Array;
  readonly u: Float64Array[];
  readonly info: Float64Array[];
  readonly positivesDistance: Float64Array;
  readonly rel: Float64Array[][];
  /** Per theta, K + 1 times the same array: the similarity of the depth last made with it (walkCombinationsMany's `similarityAt`). */
  readonly sim: Float64Array[][];
  readonly bounds: Float64Array[][];
  readonly v: Float64Array[];
  readonly infoTheta: Float64Array[];
  /** The current path's columns (walkCombinationsMany's stack), and the correlations and first theta a walk copies in: extendLevel reads them. */
  readonly path: Int32Array;
  readonly corr: Float64Array;
  readonly thetaZ: Float64Array;
  /** The model handed to `visit` per theta and depth (its arrays are the level's). */
  readonly models: WalkedModel[][];
  readonly kernels: RowKernels;
  /** The scratch of a visited model's calibration (calibrate.ts `calibrateBoth`), in the same arena. */
  readonly passes: ArenaPasses;
  private readonly arena: RowArena;
  /** The arena's copy of the standardised columns (WebAssembly kernels read only their arena), and the array it copies. */
  private copied: Float64Array[] | null = null;
  private copiedFrom: Float64Array | null = null;
  /** The first theta's level pass on these tables (`RowKernels.extendLevelOn`), with the arena's columns. */
  readonly extendLevel: ExtendLevel | undefined;
  /** A visited level and its cells in one call (one theta), where the kernels have it: prepared by a range (grid-cells.ts), used while `calibrating`. */
  readonly extendCalibrate: ExtendCalibrate | undefined;
  /** The paths and visits of a walk in one call (`walkInKernel`), with `extendCalibrate`. */
  readonly plan: WalkPlan | undefined;
  /** Set by a range of cells around its walk once it has prepared `extendCalibrate`; walks make visited levels' cells while it is true. */
  calibrating = false;
  /** How many of a path's first levels `extendLevel` keeps the columns' residuals of (0 without it). */
  readonly residualDepth: number = 0;
  constructor(
    readonly rows: number,
    readonly cols: number,
    readonly thetas: number,
    readonly choice: KernelChoice = "wasm",
  ) {
    const [N, K, M] = [rows, cols, thetas];
    const R = residualLevelsFor(N, K);
    // The columns' copy (K), u (K), info (K + 1), then relevance (K + 1 per theta) and similarity (one per theta), the residuals (R K), a leaf's scratch (1) and the bounds.
    const levelArrays = 3 * K + 2 + M * (K + 2) + R * K;
    const arena = new RowArena(
      RowArena.bytesFor({
        doubles: [
          K * K,
          K * K,
          K * K,
          K,
          calibrateConstantsLength(K),
          ...new Array<number>(levelArrays).fill(N),
          ...new Array<number>(M * (K + 1)).fill(4),
          ...new Array<number>(M).fill(K),
          ...new Array<number>(M).fill(K + 1),
        ],
        ints: [EXTEND_FRAME, K],
      }) +
        ArenaPasses.bytesFor(N, M) +
        walkPlanBytes(WALK_PLAN_PATHS, K),
      choice,
    );
    this.arena = arena;
    this.kernels = arena.kernels;
    this.L = arena.array(K * K);
    this.u = arena.arrays(K, N);
    this.info = Array.from({ length: K + 1 }, () => arena.array(N));
    this.positivesDistance = new Float64Array(K + 1);
    this.rel = Array.from({ length: M }, () => Array.from({ length: K + 1 }, () => arena.array(N)));
    // One similarity array per theta, whichever depth it is of (walkCombinationsMany's `similarityAt`).
    this.sim = Array.from({ length: M }, () => new Array<Float64Array>(K + 1).fill(arena.array(N)));
    this.bounds = Array.from({ length: M }, () => Array.from({ length: K + 1 }, () => arena.array(4)));
    this.v = Array.from({ length: M }, () => arena.array(K));
    this.infoTheta = Array.from({ length: M }, () => arena.array(K + 1));
    this.path = arena.int32(K);
    this.corr = arena.array(K * K);
    this.thetaZ = arena.array(K);
    this.passes = new ArenaPasses(arena, N, M);
    let walkFrame: Int32Array | undefined;
    if (this.kernels.extendLevelOn) {
      this.copied = arena.arrays(K, N);
      const residuals = R > 0 ? arena.arrays(R * K, N) : [];
      const residualEntries = arena.array(K * K);
      walkFrame = arena.int32(EXTEND_FRAME);
      this.extendLevel = this.kernels.extendLevelOn(
        {
          u: this.u,
          info: this.info,
          rel: this.rel[0],
          sim: this.sim[0],
          bounds: this.bounds[0],
          columns: this.copied,
          L: this.L,
          corr: this.corr,
          path: this.path,
          thetaZ: this.thetaZ,
          v: this.v[0],
          infoTheta: this.infoTheta[0],
          residuals,
          residualEntries,
          scratch: arena.array(N),
          R,
          K,
          n: N,
        },
        walkFrame,
      );
      this.residualDepth = this.extendLevel ? R : 0;
    }
    const calibrates = walkFrame && this.extendLevel && this.passes.calibrateTwo && M === 1 && this.kernels.extendCalibrateOn;
    this.plan = calibrates ? walkPlanIn(arena, WALK_PLAN_PATHS, K) : undefined;
    this.extendCalibrate = calibrates
      ? this.kernels.extendCalibrateOn!(walkFrame!, this.passes.frame, arena.array(calibrateConstantsLength(K)), K, N, this.plan!)
      : undefined;
    this.models = Array.from({ length: M }, (_, t) =>
      Array.from({ length: K + 1 }, (_, d) => ({
        relevance: this.rel[t][d],
        similarity: this.sim[t][d],
        bounds: this.bounds[t][d],
        infoX: this.info[d],
        infoTheta: 0,
        usableCount: N,
        positivesDistance: 0,
        passes: this.passes,
        theta: t,
        calibrated: false,
      })),
    );
  }

  /** Whether these levels serve a walk of N rows, K attributes and M thetas. */
  fits(N: number, K: number, M: number): boolean {
    return this.rows === N && this.cols === K && this.thetas === M;
  }

  /**
   * Levels for a walk of N rows, K attributes and M thetas: the same ones as the last call on this
   * thread for the same sizes and kernels, when they take at most `THREAD_CACHE_BYTES`. A walk
   * leaves nothing in its levels that the next one reads (each starts from level 0; the copies of
   * z and y are checked against the arrays given), and walks never run inside one another, so one
   * set serves every Grid of a thread in turn. Reusing them spares each Grid a memory and an
   * instance, and keeps the calls into the WebAssembly kernels aimed at the same functions, which
   * V8 then calls directly (a Grid at N=1,000 took a tenth longer through the generic call path).
   *
   * @example
   * const levels = WalkLevels.forThread(1000, 10, 1); // the same object on the next call with these sizes
   */
  static forThread(N: number, K: number, M: number, choice: KernelChoice = "wasm"): WalkLevels {
    const last = threadLevels;
    if (last && last.fits(N, K, M) && last.choice === choice) return last;
    const levels = new WalkLevels(N, K, M, choice);
    if (levels.arena.capacity <= THREAD_CACHE_BYTES) threadLevels = levels;
    return levels;
  }

  /** The arena's copy of the columns (null until made). */
  get copiedColumns(): Float64Array[] | null {
    return this.copied;
  }

  /** The standardised columns of `shared` as the kernels may read them (copied into the arena once per `shared.z`). */
  columnsOf(shared: Standardized): Float64Array[] {
    const { rows: N, cols: K, z } = shared;
    if (this.kernels === jsKernels) return Array.from({ length: K }, (_, j) => z.subarray(j * N, (j + 1) * N));
    if (this.copiedFrom !== z) {
      this.copied ??= Array.from({ length: K }, () => this.arena.array(N));
      for (let j = 0; j < K; j++) this.copied[j].set(z.subarray(j * N, (j + 1) * N));
      this.copiedFrom = z;
    }
    return this.copied!;
  }
}

/**
 * For each path o and depth d < R, the columns (bit j for column j) that the levels below its
 * level d add while that level stays on the walk's path: those of path o past d and of the paths
 * after it that share its first d + 1 columns (mask at o R + d). One sweep from the last path
 * back, not a scan per level: a scan in the walk's loop cost a cold Grid (the CLI's) about 4 ms.
 *
 * @example
 * residualMasks([[0], [0, 1], [0, 2, 3]], 1); // Int32Array [14, 14, 12]: below level [0] (made at path 0), columns 1, 2 and 3
 */
function residualMasks(paths: readonly (readonly number[])[], R: number): Int32Array {
  const masks = new Int32Array(paths.length * R);
  const below = new Int32Array(R);
  for (let o = paths.length - 1; o >= 0; o--) {
    const path = paths[o];
    const next = o + 1 < paths.length ? paths[o + 1] : null;
    const common = next ? commonPrefix(path, next) : 0;
    // Levels from depth `common` on are not the next path's: their columns start afresh.
    for (let d = common; d < R; d++) below[d] = 0;
    let suffix = 0;
    for (let m = path.length - 1; m >= 0; m--) {
      if (m < R) below[m] |= suffix;
      suffix |= 1 << path[m];
    }
    for (let d = 0; d < R; d++) masks[o * R + d] = below[d];
  }
  return masks;
}

/**
 * How many of a path's first levels keep the residuals of the columns below them (R K arrays of
 * N): 3 (at most K - 1), fewer where they would take more than `RESIDUAL_BYTES`, none beyond 30
 * attributes (the columns below a level are a bit mask).
 */
function residualLevelsFor(N: number, K: number): number {
  if (K > 30) return 0;
  let R = Math.max(0, Math.min(3, K - 1));
  while (R > 0 && R * K * N * 8 > RESIDUAL_BYTES) R--;
  return R;
}
const RESIDUAL_BYTES = 4 * 2 ** 20;

/**
 * Walks (a Grid's chunks) a thread makes before its walks keep residuals: two Grids of 16 chunks
 * (N=1,000, 1,000 combinations). The results are the same bits either way. A fresh process's
 * first Grid took 1.5-2 ms longer with them at K=10 (about 27 ms) and 3.5 ms at K=14 (about 45),
 * for 0.2 and 0.5 ms less a warm Grid.
 */
export const WALKS_BEFORE_RESIDUALS = 32;
let walksOnThread = 0;

/** The levels `WalkLevels.forThread` keeps for the next walk of the same sizes (one set: a thread walks one Grid at a time). */
let threadLevels: WalkLevels | undefined;
/** Larger levels are not kept (N=100,000 and K=10 take 45 MB): at that size a Grid spends next to nothing in calls. */
const THREAD_CACHE_BYTES = 64 * 2 ** 20;

/** The paths a `WalkPlan` holds (a Grid's chunk, grid.ts GRID_CHUNK, in one); a longer walk writes them this many at a time. */
const WALK_PLAN_PATHS = 64;

/** How many leading entries a and b share. */
export function commonPrefix(a: readonly number[], b: readonly number[]): number {
  let k = 0;
  while (k < a.length && k < b.length && a[k] === b[k]) k++;
  return k;
}

function compareLex(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

/**
 * The order in which a walk visits the listed combinations, and the columns of each in the order
 * it adds them (`paths[o]` for `order[o]`). A walk builds one level per node of the trie of these
 * paths. In ascending column order a sampled set of combinations shares few prefixes (a Grid's
 * chunk of 64 of K = 14's 1,000 sampled combinations: about 168 levels for 64 visits); so when more than a quarter of
 * the levels would be visited by nobody, each node instead adds next the column that most of the
 * combinations below it hold (the lowest on a tie), and that trie is taken when it has fewer
 * nodes (about 129 for such a chunk). A combination's model does not depend on the order of its
 * columns but for rounding (docs/methodology.md 7.2).
 *
 * With `asListed`, the combinations are in a walk's order already (walk-order.ts `walkOrder`: a
 * Grid's chunks in the order of a tree that shares more levels than a chunk's own trie), and the
 * walk takes them in the listed order along their listed columns.
 *
 * @example
 * trieOrder([[0, 2], [1, 2], [2]], [0, 1, 2]); // { order: [2, 0, 1], paths: [[2], [2, 0], [2, 1]] }: 3 levels, against 4
 * trieOrder([[2], [2, 0], [2, 1]], [0, 1, 2], true); // { order: [0, 1, 2], paths: [[2], [2, 0], [2, 1]] }
 */
export function trieOrder(combinations: readonly (readonly number[])[], indices: readonly number[], asListed = false): Trie {
  // A Grid's chunks are runs of its plan's indices, and plans are kept for the next Grid (`planCombinations`): so are their tries (about 0.7 ms a Grid at K = 14).
  const run = indices.every((index, q) => index === indices[0] + q);
  const key = `${indices[0]} ${indices.length}${asListed ? " listed" : ""}`;
  let kept = run ? recentTries.get(combinations) : undefined;
  const known = kept?.get(key);
  if (known) return known;
  const chosen = asListed ? { order: indices, paths: indices.map((index) => combinations[index]) } : chooseTrie(combinations, indices);
  if (run) {
    if (!kept) recentTries.set(combinations, (kept = new Map()));
    kept.set(key, chosen);
  }
  return chosen;
}

/** A walk's order of its combinations and the columns of each in the order it adds them (`trieOrder`). */
export interface Trie {
  order: readonly number[];
  paths: readonly (readonly number[])[];
}

/** `trieOrder`'s answer, made afresh: ascending order, or the greedy trie when it has fewer levels. */
function chooseTrie(combinations: readonly (readonly number[])[], indices: readonly number[]): Trie {
  // Ascending order; a Grid's plan lists its combinations in it already, which one pass confirms (no sort, no copy).
  let order = indices;
  for (let q = 1; q < indices.length; q++) {
    if (compareLex(combinations[indices[q - 1]], combinations[indices[q]]) > 0) {
      order = [...indices].sort((p, q) => compareLex(combinations[p], combinations[q]));
      break;
    }
  }
  const ascending = { order, paths: order.map((index) => combinations[index]) };
  // Its levels: each combination's columns past its common prefix with the one before it.
  let levels = 0;
  let widest = 0;
  for (let o = 0; o < order.length; o++) {
    const c = combinations[order[o]];
    const before = o > 0 ? combinations[order[o - 1]] : [];
    levels += c.length - commonPrefix(c, before);
    for (const j of c) widest = Math.max(widest, j + 1);
  }
  if (4 * (levels - order.length) <= levels || widest > 30) return ascending;
  const greedy = greedyTrie(combinations, indices, widest);
  return greedy.levels < levels ? { order: greedy.order, paths: greedy.paths } : ascending;
}

/** `trieOrder`'s answers for runs of a plan's indices, by plan (as long as the plan is kept). */
const recentTries = new WeakMap<readonly (readonly number[])[], Map<string, Trie>>();

/** A trie's paths as a `WalkPlan` holds them (path o's columns at columns[starts[o] .. starts[o + 1])), its combinations, and its residual masks for R levels (`residualMasks`). */
interface FlatTrie {
  starts: Int32Array;
  columns: Int32Array;
  combinations: Int32Array;
  masks: Int32Array;
  R: number;
}

/** `FlatTrie` of a trie, kept with it (a Grid's tries are kept from Grid to Grid: `trieOrder`). */
function flatTrie(trie: Trie, R: number): FlatTrie {
  let flat = flatTries.get(trie);
  if (flat && flat.R === R) return flat;
  const { order, paths } = trie;
  const starts = new Int32Array(order.length + 1);
  for (let o = 0; o < order.length; o++) starts[o + 1] = starts[o] + paths[o].length;
  const columns = new Int32Array(starts[order.length]);
  for (let o = 0; o < order.length; o++) columns.set(paths[o], starts[o]);
  flat = { starts, columns, combinations: Int32Array.from(order), masks: residualMasks(paths, R), R };
  flatTries.set(trie, flat);
  return flat;
}
const flatTries = new WeakMap<Trie, FlatTrie>();

/** `trieOrder`'s trie of the most held column first, on columns below 30 (as bit masks). */
function greedyTrie(combinations: readonly (readonly number[])[], indices: readonly number[], K: number) {
  const n = indices.length;
  const rest = new Int32Array(n);
  const members = new Int32Array(n);
  for (let q = 0; q < n; q++) {
    for (const j of combinations[indices[q]]) rest[q] |= 1 << j;
    members[q] = q;
  }
  const counts = new Int32Array(K);
  const order: number[] = [];
  const paths: number[][] = [];
  let levels = 0;
  const swap = (a: number, b: number) => {
    const t = members[a];
    members[a] = members[b];
    members[b] = t;
  };
  // members[lo, hi) share the path `prefix`; rest holds each one's columns not yet on it.
  const grow = (lo: number, hi: number, prefix: number[]) => {
    let a = lo;
    for (let k = lo; k < hi; k++) {
      if (rest[members[k]] !== 0) continue;
      order.push(indices[members[k]]);
      paths.push(prefix);
      swap(k, a++);
    }
    while (a < hi) {
      counts.fill(0);
      for (let k = a; k < hi; k++) for (let m = rest[members[k]]; m !== 0; m &= m - 1) counts[31 - Math.clz32(m & -m)]++;
      let best = 0;
      for (let j = 1; j < K; j++) if (counts[j] > counts[best]) best = j;
      let b = a;
      for (let k = a; k < hi; k++) if ((rest[members[k]] >> best) & 1) swap(k, b++);
      for (let k = a; k < b; k++) rest[members[k]] &= ~(1 << best);
      levels++;
      grow(a, b, [...prefix, best]);
      a = b;
    }
  };
  grow(0, n, []);
  return { order, paths, levels };
}
