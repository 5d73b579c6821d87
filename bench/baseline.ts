/**
 * A straightforward Grid (docs/methodology.md sections 1 to 4 and 7), written independently of the engine
 * as the yardstick of `npm run bench`. Nothing is shared between combinations or cells: per
 * combination the mean, the covariance (N-1) and its inverse (plain Gauss-Jordan) are computed
 * from scratch, then relevance, informativeness and similarity row by row; per censor and
 * threshold a copy of the censor scores is sorted for the percentile, and the PSR weights, fit and
 * asymmetry are computed from the weight vectors themselves. Unoptimised, but not deliberately slow.
 *
 * Only the combination plan is taken from the engine, so that both evaluate the same list, and the
 * tie tolerance of the cut's rule (docs/ties.md), so that both keep the same rows at a tie.
 */
import { planCombinations } from "../src/engine/combinations.js";
import type { Dataset } from "../src/engine/data.js";
import { CUT_TIE_TOLERANCE } from "../src/engine/choices.js";

export interface BaselineOptions {
  /** Percent thresholds (fractions); default [0, 0.2, 0.5, 0.8]. */
  thresholds?: number[];
  max_iter: number;
  seed: number;
}

export interface BaselineResult {
  yhat: number;
  fit: number;
  adjustedFit: number;
  weights: Float64Array;
  combinations: number;
  cells: number;
  /** Cells that retain fewer than 2 rows, have no relevance spread, or a singular covariance. */
  invalidCells: number;
}

const CENSORS = ["relevance", "similarity"] as const;

export function baselineGrid(data: Dataset, theta: Float64Array, options: BaselineOptions): BaselineResult {
  const { y, X, rows: N, cols: K } = data;
  const thresholds = options.thresholds ?? [0, 0.2, 0.5, 0.8];
  const plan = planCombinations(K, {
    min_k: undefined,
    max_k: undefined,
    allowed_k: undefined,
    required_attributes: undefined,
    attribute_groups: undefined,
    attribute_combi: undefined,
    max_iter: options.max_iter,
    seed: options.seed,
  });

  let sumA = 0;
  let sumA2 = 0;
  let sumAYhat = 0;
  const sumAW = new Float64Array(N);
  let cells = 0;
  let invalidCells = 0;

  for (const columns of plan.combinations) {
    const k = columns.length;
    const model = relevanceModel(X, N, K, theta, columns);
    if (model === null) {
      cells += CENSORS.length * thresholds.length;
      invalidCells += CENSORS.length * thresholds.length;
      continue;
    }
    const { relevance, similarity } = model;
    for (const censor of CENSORS) {
      const scores = censor === "relevance" ? relevance : similarity;
      for (const t of thresholds) {
        cells++;
        const sorted = Float64Array.from(scores).sort();
        // docs/ties.md: scores within `width` of each other are equal, as in exact arithmetic.
        const width = CUT_TIE_TOLERANCE * Math.max(1, Math.abs(sorted[0]), Math.abs(sorted[N - 1]));
        const cut = percentileLinear(sorted, t, width);
        const include = new Uint8Array(N);
        for (let i = 0; i < N; i++) include[i] = scores[i] >= cut - width ? 1 : 0;
        const w = psrWeights(relevance, include);
        if (w === null) {
          invalidCells++;
          continue;
        }
        const exclude = new Uint8Array(N);
        for (let i = 0; i < N; i++) exclude[i] = 1 - include[i];
        const wMinus = psrWeights(relevance, exclude);

        let yhat = 0;
        for (let i = 0; i < N; i++) yhat += w[i] * y[i];
        const rhoPlus = correlation(w, y);
        const fit = rhoPlus * rhoPlus;
        const asymmetry = wMinus === null ? 0 : 0.5 * (rhoPlus - correlation(wMinus, y)) ** 2;
        const a = k * (fit + asymmetry);
        if (!(a > 0)) continue;
        sumA += a;
        sumA2 += a * a;
        sumAYhat += a * yhat;
        for (let i = 0; i < N; i++) sumAW[i] += a * w[i];
      }
    }
  }

  const weights = new Float64Array(N);
  let yhat: number;
  if (sumA > 0) {
    for (let i = 0; i < N; i++) weights[i] = sumAW[i] / sumA;
    yhat = sumAYhat / sumA;
  } else {
    weights.fill(1 / N);
    yhat = mean(y);
  }
  const rho = correlation(weights, y);
  return {
    yhat,
    fit: rho * rho,
    adjustedFit: sumA > 0 ? sumA2 / sumA : 0,
    weights,
    combinations: plan.combinations.length,
    cells,
    invalidCells,
  };
}

/** Relevance and similarity of every row for one combination of columns, or null when its covariance is singular. */
function relevanceModel(
  X: Float64Array,
  N: number,
  K: number,
  theta: Float64Array,
  columns: number[],
): { relevance: Float64Array; similarity: Float64Array } | null {
  const k = columns.length;
  // The selected columns, row-major N x k.
  const x = new Float64Array(N * k);
  for (let i = 0; i < N; i++) for (let a = 0; a < k; a++) x[i * k + a] = X[i * K + columns[a]];
  const th = new Float64Array(k);
  for (let a = 0; a < k; a++) th[a] = theta[columns[a]];

  const xbar = new Float64Array(k);
  for (let i = 0; i < N; i++) for (let a = 0; a < k; a++) xbar[a] += x[i * k + a];
  for (let a = 0; a < k; a++) xbar[a] /= N;

  const cov = new Float64Array(k * k);
  const d = new Float64Array(k);
  for (let i = 0; i < N; i++) {
    for (let a = 0; a < k; a++) d[a] = x[i * k + a] - xbar[a];
    for (let a = 0; a < k; a++) for (let b = 0; b < k; b++) cov[a * k + b] += d[a] * d[b];
  }
  for (let e = 0; e < k * k; e++) cov[e] /= N - 1;

  const inv = gaussJordanInverse(cov, k);
  if (inv === null) return null;

  const dTheta = new Float64Array(k);
  for (let a = 0; a < k; a++) dTheta[a] = th[a] - xbar[a];
  const infoTheta = quadraticForm(inv, dTheta, dTheta, k);

  const relevance = new Float64Array(N);
  const similarity = new Float64Array(N);
  for (let i = 0; i < N; i++) {
    for (let a = 0; a < k; a++) d[a] = x[i * k + a] - xbar[a];
    const r = quadraticForm(inv, d, dTheta, k);
    const infoX = quadraticForm(inv, d, d, k);
    relevance[i] = r;
    similarity[i] = r - 0.5 * (infoX + infoTheta);
  }
  return { relevance, similarity };
}

/** u' A v for a k x k row-major A. */
function quadraticForm(A: Float64Array, u: Float64Array, v: Float64Array, k: number): number {
  let s = 0;
  for (let a = 0; a < k; a++) {
    let row = 0;
    for (let b = 0; b < k; b++) row += A[a * k + b] * v[b];
    s += u[a] * row;
  }
  return s;
}

/** Gauss-Jordan elimination with partial pivoting on [A | I]; null when a pivot vanishes. */
function gaussJordanInverse(A: Float64Array, k: number): Float64Array | null {
  const w = 2 * k;
  const m = new Float64Array(k * w);
  for (let a = 0; a < k; a++) {
    for (let b = 0; b < k; b++) m[a * w + b] = A[a * k + b];
    m[a * w + k + a] = 1;
  }
  let scale = 0;
  for (let e = 0; e < k * k; e++) scale = Math.max(scale, Math.abs(A[e]));
  for (let c = 0; c < k; c++) {
    let p = c;
    for (let r = c + 1; r < k; r++) if (Math.abs(m[r * w + c]) > Math.abs(m[p * w + c])) p = r;
    if (!(Math.abs(m[p * w + c]) > 1e-12 * scale)) return null;
    if (p !== c) {
      for (let j = 0; j < w; j++) {
        const tmp = m[c * w + j];
        m[c * w + j] = m[p * w + j];
        m[p * w + j] = tmp;
      }
    }
    const pivot = m[c * w + c];
    for (let j = 0; j < w; j++) m[c * w + j] /= pivot;
    for (let r = 0; r < k; r++) {
      if (r === c) continue;
      const f = m[r * w + c];
      if (f === 0) continue;
      for (let j = 0; j < w; j++) m[r * w + j] -= f * m[c * w + j];
    }
  }
  const inv = new Float64Array(k * k);
  for (let a = 0; a < k; a++) for (let b = 0; b < k; b++) inv[a * k + b] = m[a * w + k + b];
  return inv;
}

/**
 * numpy.percentile(sorted, 100 t) with the default "linear" method, on ascending values, snapped to
 * the neighbour it is within `width` of (the lower first); the minimum when every value is within
 * `width` of every other (docs/ties.md).
 */
function percentileLinear(sorted: Float64Array, t: number, width: number): number {
  const n = sorted.length;
  if (!(sorted[n - 1] - sorted[0] > width)) return sorted[0];
  const h = (n - 1) * t;
  const lo = Math.floor(h);
  const hi = Math.min(lo + 1, n - 1);
  const g = h - lo;
  const a = sorted[lo];
  const b = sorted[hi];
  // numpy's _lerp: a + (b - a) g, computed from the upper end when g >= 0.5.
  const cut = g >= 0.5 ? b - (b - a) * (1 - g) : a + (b - a) * g;
  return cut - a <= width ? a : b - cut <= width ? b : cut;
}

/**
 * PSR weights (docs/methodology.md section 4) for the rows with include[i] = 1:
 * w_i = 1/N + lambda^2/(n-1) (delta_i r_i - phi rbar), lambda^2 = full_var / part_var.
 * Null when fewer than 2 rows are retained or the retained relevance is all zero.
 */
function psrWeights(relevance: Float64Array, include: Uint8Array): Float64Array | null {
  const N = relevance.length;
  let n = 0;
  let sumR = 0;
  let sumR2Retained = 0;
  let sumR2 = 0;
  for (let i = 0; i < N; i++) {
    const r = relevance[i];
    sumR2 += r * r;
    if (include[i]) {
      n++;
      sumR += r;
      sumR2Retained += r * r;
    }
  }
  if (n < 2) return null;
  const phi = n / N;
  const rbar = sumR / n;
  const fullVar = sumR2 / (N - 1);
  const partVar = sumR2Retained / (n - 1);
  if (!(partVar > 0)) return null;
  const lambdaSq = fullVar / partVar;
  const w = new Float64Array(N);
  for (let i = 0; i < N; i++) w[i] = 1 / N + (lambdaSq / (n - 1)) * (include[i] * relevance[i] - phi * rbar);
  return w;
}

function mean(v: Float64Array): number {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i];
  return s / v.length;
}

/** Pearson correlation; 0 when either vector is constant. */
function correlation(u: Float64Array, v: Float64Array): number {
  const mu = mean(u);
  const mv = mean(v);
  let suv = 0;
  let suu = 0;
  let svv = 0;
  for (let i = 0; i < u.length; i++) {
    const du = u[i] - mu;
    const dv = v[i] - mv;
    suv += du * dv;
    suu += du * du;
    svv += dv * dv;
  }
  return suu > 0 && svv > 0 ? suv / Math.sqrt(suu * svv) : 0;
}
