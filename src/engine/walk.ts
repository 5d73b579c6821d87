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
import { PIVOT_TOLERANCE } from "./linalg.js";
import type { ScoredRows } from "./calibrate.js";

export interface WalkedModel extends ScoredRows {
  infoX: Float64Array;
  infoTheta: number;
  bounds: Float64Array;
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
  for (let j = 0; j < K; j++) {
    let sum = 0;
    for (let i = 0; i < N; i++) sum += X[i * K + j];
    mean[j] = sum / N;
    let ss = 0;
    let constant = true;
    for (let i = 0; i < N; i++) {
      const d = X[i * K + j] - mean[j];
      ss += d * d;
      if (X[i * K + j] !== X[j]) constant = false;
    }
    // A constant column has no scale: mark it so every combination holding it is singular.
    scale[j] = constant ? 0 : Math.sqrt(ss / (N - 1));
    for (let i = 0; i < N; i++) z[j * N + i] = constant ? 0 : (X[i * K + j] - mean[j]) / scale[j];
  }
  const corr = new Float64Array(K * K);
  for (let a = 0; a < K; a++) {
    for (let b = a; b < K; b++) {
      let s = 0;
      for (let i = 0; i < N; i++) s += z[a * N + i] * z[b * N + i];
      corr[a * K + b] = corr[b * K + a] = s / (N - 1);
    }
  }
  return { rows: N, cols: K, z, thetaZ: standardTheta(mean, scale, theta), mean, scale, corr };
}

/** The same standardised attributes with another theta (X's moments are not recomputed). */
export function withTheta(shared: Standardized, theta: Float64Array): Standardized {
  return { ...shared, thetaZ: standardTheta(shared.mean, shared.scale, theta) };
}

function standardTheta(mean: Float64Array, scale: Float64Array, theta: Float64Array): Float64Array {
  return Float64Array.from(scale, (sd, j) => (sd === 0 ? 0 : (theta[j] - mean[j]) / sd));
}

/**
 * Calls `visit(index, model)` for each combination whose index is listed in `indices` (ascending
 * column lists), in trie order, or `singular(index)` when its covariance is singular. The model's
 * arrays are reused between calls.
 */
export function walkCombinations(
  shared: Standardized,
  y: Float64Array,
  combinations: readonly number[][],
  indices: readonly number[],
  logistic: boolean,
  visit: (index: number, model: WalkedModel) => void,
  singular: (index: number) => void,
  reuse?: WalkLevels,
): void {
  walkCombinationsMany(shared, [shared.thetaZ], y, combinations, indices, logistic, (index, _, model) => visit(index, model), singular, reuse);
}

/**
 * `walkCombinations` for several thetas at once (each a `thetaZ` in the standard units of
 * `shared`): per combination, `visit(index, t, model)` for t = 0, 1, ... The work that does not
 * depend on theta (the factor, the whitened attributes, informativeness) is done once; each
 * theta's model is bit-identical to the one `walkCombinations` gives for that theta alone.
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
  indices: readonly number[],
  logistic: boolean,
  visit: (index: number, t: number, model: WalkedModel) => void,
  singular: (index: number) => void,
  /** The per-depth arrays, reused from an earlier walk of the same sizes (a fresh set when absent or of other sizes). */
  reuse?: WalkLevels,
): void {
  const { rows: N, cols: K, z, scale, corr } = shared;
  const M = thetaZs.length;
  let positives = 0;
  for (let i = 0; i < N; i++) if (y[i] === 1) positives++;

  const levels = reuse && reuse.fits(N, K, M) ? reuse : new WalkLevels(N, K, M);
  const { L, u, info, positivesDistance, rel, sim, bounds, v, infoTheta, models } = levels;
  const stack: number[] = [];
  let singularFrom = Infinity; // depth at which the current path first became singular
  // Whether a level has its similarity and bounds: only a visited level needs them (a deeper level
  // is built from relevance and informativeness alone).
  const finished = new Uint8Array(K + 1);

  const order = [...indices].sort((p, q) => compareLex(combinations[p], combinations[q]));
  for (const index of order) {
    const combination = combinations[index];
    let common = 0;
    while (common < stack.length && common < combination.length && stack[common] === combination[common]) common++;
    // A combination that is a strict prefix of the stack reuses its level: pop past it to recompute nothing.
    stack.length = common;
    if (singularFrom >= common) singularFrom = Infinity;
    for (let d = common; d < combination.length; d++) {
      const j = combination[d];
      stack.push(j);
      if (singularFrom <= d) continue;
      if (scale[j] === 0 || !extend(d, j, d + 1 === combination.length)) singularFrom = d;
    }
    if (singularFrom < combination.length) {
      singular(index);
      continue;
    }
    const depth = combination.length;
    if (!finished[depth]) finish(depth);
    for (let t = 0; t < M; t++) {
      const model = models[t][depth];
      model.infoTheta = infoTheta[t][depth];
      model.positivesDistance = positivesDistance[depth];
      visit(index, t, model);
    }
  }

  /** Adds column j at depth d (with the new level's similarity and bounds when it is `visited`); false when the extended covariance is singular. */
  function extend(d: number, j: number, visited: boolean): boolean {
    let diag = corr[j * K + j];
    for (let m = 0; m < d; m++) {
      let s = corr[j * K + stack[m]];
      for (let p = 0; p < m; p++) s -= L[d * K + p] * L[m * K + p];
      const l = s / L[m * K + m];
      L[d * K + m] = l;
      diag -= l * l;
    }
    if (!(diag > PIVOT_TOLERANCE)) return false;
    const pivot = Math.sqrt(diag);
    L[d * K + d] = pivot;
    const ud = u[d];
    ud.set(z.subarray(j * N, (j + 1) * N));
    // ud -= l_m u_m for m = 0, 1, ... in that order, four columns per pass (the same arithmetic, a quarter of the passes).
    let m = 0;
    const row = d * K;
    for (; m + 4 <= d; m += 4) subtract4(ud, u[m], u[m + 1], u[m + 2], u[m + 3], L[row + m], L[row + m + 1], L[row + m + 2], L[row + m + 3], N);
    if (m + 2 <= d) {
      subtract2(ud, u[m], u[m + 1], L[row + m], L[row + m + 1], N);
      m += 2;
    }
    if (m < d) subtract1(ud, u[m], L[row + m], N);
    const inv = 1 / pivot;
    const infoPrev = info[d];
    const infoNext = info[d + 1];
    // The first theta's pass also finishes the shared column (scaled u_d, info_x); the others read it.
    let positiveSum = 0;
    for (let t = 0; t < M; t++) {
      const vt = v[t];
      let vd = thetaZs[t][j];
      for (let q = 0; q < d; q++) vd -= L[d * K + q] * vt[q];
      vd *= inv;
      vt[d] = vd;
      const relPrev = rel[t][d];
      const relNext = rel[t][d + 1];
      const simNext = sim[t][d + 1];
      const thetaInfo = infoTheta[t][d] + vd * vd;
      const halfTheta = 0.5 * thetaInfo;
      if (!visited) {
        if (t === 0) positiveSum += scaleFirst(ud, inv, vd, relPrev, relNext, infoPrev, infoNext, logistic ? y : null, N);
        else for (let i = 0; i < N; i++) relNext[i] = relPrev[i] + ud[i] * vd;
      } else if (t === 0) {
        positiveSum += finishFirst(ud, inv, vd, halfTheta, relPrev, relNext, infoPrev, infoNext, simNext, bounds[t][d + 1], logistic ? y : null, N);
      } else finishOther(ud, vd, halfTheta, relPrev, relNext, infoNext, simNext, bounds[t][d + 1], N);
      infoTheta[t][d + 1] = thetaInfo;
    }
    finished[d + 1] = +visited;
    const g = positives > 0 ? positiveSum / positives : 0;
    positivesDistance[d + 1] = positivesDistance[d] + g * g;
    return true;
  }

  /** The similarity and bounds of a level extended without them (the arithmetic of `finishFirst`). */
  function finish(depth: number): void {
    for (let t = 0; t < M; t++) finishLevel(rel[t][depth], info[depth], 0.5 * infoTheta[t][depth], sim[t][depth], bounds[t][depth], N);
    finished[depth] = 1;
  }
}

/** `finishFirst` for a level that is not visited: scales u_d, extends relevance and informativeness (no similarity, no bounds). */
function scaleFirst(
  ud: Float64Array,
  inv: number,
  vd: number,
  relPrev: Float64Array,
  relNext: Float64Array,
  infoPrev: Float64Array,
  infoNext: Float64Array,
  positives: Float64Array | null,
  N: number,
): number {
  for (let i = 0; i < N; i++) {
    const value = ud[i] * inv;
    ud[i] = value;
    relNext[i] = relPrev[i] + value * vd;
    infoNext[i] = infoPrev[i] + value * value;
  }
  let positiveSum = 0;
  if (positives) for (let i = 0; i < N; i++) if (positives[i] === 1) positiveSum += ud[i];
  return positiveSum;
}

/** The similarity and bounds of a level from its relevance and informativeness. */
function finishLevel(rel: Float64Array, info: Float64Array, halfTheta: number, sim: Float64Array, bounds: Float64Array, N: number): void {
  let rMin = Infinity;
  let rMax = -Infinity;
  let sMin = Infinity;
  let sMax = -Infinity;
  for (let i = 0; i < N; i++) {
    const r = rel[i];
    const s = r - 0.5 * info[i] - halfTheta;
    sim[i] = s;
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

/** ud[i] -= l0 u0[i] + ... in that order (four columns). */
function subtract4(
  ud: Float64Array,
  u0: Float64Array,
  u1: Float64Array,
  u2: Float64Array,
  u3: Float64Array,
  l0: number,
  l1: number,
  l2: number,
  l3: number,
  N: number,
): void {
  for (let i = 0; i < N; i++) ud[i] = ud[i] - l0 * u0[i] - l1 * u1[i] - l2 * u2[i] - l3 * u3[i];
}

function subtract2(ud: Float64Array, u0: Float64Array, u1: Float64Array, l0: number, l1: number, N: number): void {
  for (let i = 0; i < N; i++) ud[i] = ud[i] - l0 * u0[i] - l1 * u1[i];
}

function subtract1(ud: Float64Array, u0: Float64Array, l0: number, N: number): void {
  for (let i = 0; i < N; i++) ud[i] -= l0 * u0[i];
}

/**
 * The first theta's pass over a new level: scales u_d in place, extends relevance and
 * informativeness, writes the similarity and the bounds; returns the sum of the scaled u_d over the
 * rows whose y is 1 (0 without `positives`).
 */
function finishFirst(
  ud: Float64Array,
  inv: number,
  vd: number,
  halfTheta: number,
  relPrev: Float64Array,
  relNext: Float64Array,
  infoPrev: Float64Array,
  infoNext: Float64Array,
  simNext: Float64Array,
  bounds: Float64Array,
  positives: Float64Array | null,
  N: number,
): number {
  let rMin = Infinity;
  let rMax = -Infinity;
  let sMin = Infinity;
  let sMax = -Infinity;
  let positiveSum = 0;
  for (let i = 0; i < N; i++) {
    const value = ud[i] * inv;
    ud[i] = value;
    const r = relPrev[i] + value * vd;
    const x = infoPrev[i] + value * value;
    const s = r - 0.5 * x - halfTheta;
    relNext[i] = r;
    infoNext[i] = x;
    simNext[i] = s;
    rMin = r < rMin ? r : rMin;
    rMax = r > rMax ? r : rMax;
    sMin = s < sMin ? s : sMin;
    sMax = s > sMax ? s : sMax;
  }
  if (positives) for (let i = 0; i < N; i++) if (positives[i] === 1) positiveSum += ud[i];
  bounds[0] = rMin;
  bounds[1] = rMax;
  bounds[2] = sMin;
  bounds[3] = sMax;
  return positiveSum;
}

/** Another theta's pass over a level `finishFirst` has scaled: relevance, similarity and bounds. */
function finishOther(
  ud: Float64Array,
  vd: number,
  halfTheta: number,
  relPrev: Float64Array,
  relNext: Float64Array,
  infoNext: Float64Array,
  simNext: Float64Array,
  bounds: Float64Array,
  N: number,
): void {
  let rMin = Infinity;
  let rMax = -Infinity;
  let sMin = Infinity;
  let sMax = -Infinity;
  for (let i = 0; i < N; i++) {
    const r = relPrev[i] + ud[i] * vd;
    const s = r - 0.5 * infoNext[i] - halfTheta;
    relNext[i] = r;
    simNext[i] = s;
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

/**
 * The arrays of a walk, one level per depth of the trie (per theta where the level depends on it).
 * Level 0 is all zeros and never written; a deeper level is recomputed before it is read, so the
 * same levels serve walk after walk (a Grid's chunks) without being cleared.
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
  readonly sim: Float64Array[][];
  readonly bounds: Float64Array[][];
  readonly v: Float64Array[];
  readonly infoTheta: Float64Array[];
  /** The model handed to `visit` per theta and depth (its arrays are the level's). */
  readonly models: WalkedModel[][];
  constructor(
    readonly rows: number,
    readonly cols: number,
    readonly thetas: number,
  ) {
    const [N, K, M] = [rows, cols, thetas];
    this.L = new Float64Array(K * K);
    this.u = Array.from({ length: K }, () => new Float64Array(N));
    this.info = Array.from({ length: K + 1 }, () => new Float64Array(N));
    this.positivesDistance = new Float64Array(K + 1);
    this.rel = Array.from({ length: M }, () => Array.from({ length: K + 1 }, () => new Float64Array(N)));
    this.sim = Array.from({ length: M }, () => Array.from({ length: K + 1 }, () => new Float64Array(N)));
    this.bounds = Array.from({ length: M }, () => Array.from({ length: K + 1 }, () => new Float64Array(4)));
    this.v = Array.from({ length: M }, () => new Float64Array(K));
    this.infoTheta = Array.from({ length: M }, () => new Float64Array(K + 1));
    this.models = Array.from({ length: M }, (_, t) =>
      Array.from({ length: K + 1 }, (_, d) => ({
        relevance: this.rel[t][d],
        similarity: this.sim[t][d],
        bounds: this.bounds[t][d],
        infoX: this.info[d],
        infoTheta: 0,
        usableCount: N,
        positivesDistance: 0,
      })),
    );
  }

  /** Whether these levels serve a walk of N rows, K attributes and M thetas. */
  fits(N: number, K: number, M: number): boolean {
    return this.rows === N && this.cols === K && this.thetas === M;
  }
}

function compareLex(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}
