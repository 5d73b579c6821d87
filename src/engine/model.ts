/**
 * One relevance model: the scores of every observation for one set of attribute columns
 * (docs/methodology.md section 2). Rows missing a used attribute are not usable: their scores are NaN
 * and they later get weight exactly 0.
 */
import type { Dataset } from "./data.js";
import { invalid } from "./errors.js";
import { invertCovariance, quadraticForm } from "./linalg.js";
import { moments } from "./moments.js";
import type { InvMethod, MissingMoments } from "./options.js";

export interface Model {
  /** Attribute columns of X the model uses, ascending. */
  columns: number[];
  /** 1 where the row has every used attribute. */
  usable: Uint8Array;
  usableCount: number;
  /** r_i = (x_i - xbar)' S^-1 (theta - xbar); NaN on unusable rows. */
  relevance: Float64Array;
  /** sim_i = -1/2 d(x_i, theta) = r_i - (info_x_i + info_theta) / 2; NaN on unusable rows. */
  similarity: Float64Array;
  /** d(x_i, xbar); NaN on unusable rows. */
  infoX: Float64Array;
  /** d(theta, xbar). */
  infoTheta: number;
  /** d(mu1, xbar), mu1 the mean attributes of the usable rows with y = 1; only for the logistic scale. */
  positivesDistance: number;
}

export interface ModelSpec {
  columns: number[];
  missing: MissingMoments;
  invMethod: InvMethod;
  /** Replaces the computed inverse when given (K x K over `columns`). */
  covInv?: Float64Array | null;
  /** Compute `positivesDistance` (logistic scale). */
  logistic?: boolean;
}

/** Rows that have every one of `columns` present. */
export function usableRows(data: Dataset, columns: ArrayLike<number>): { usable: Uint8Array; count: number } {
  const usable = new Uint8Array(data.rows);
  let count = 0;
  for (let i = 0; i < data.rows; i++) {
    let ok = 1;
    for (let a = 0; a < columns.length; a++) {
      const v = data.X[i * data.cols + columns[a]];
      if (v !== v) {
        ok = 0;
        break;
      }
    }
    usable[i] = ok;
    count += ok;
  }
  return { usable, count };
}

/**
 * Builds the model of `spec.columns` at theta; throws when too few rows are complete or the
 * covariance cannot be inverted.
 *
 * @example
 * const model = buildModel(data, theta, { columns: [0, 2], missing: "complete", invMethod: "gaussian" });
 */
export function buildModel(data: Dataset, theta: Float64Array, spec: ModelSpec): Model {
  return modelAt(modelBasis(data, spec), data, theta);
}

/** What a model is apart from theta: its rows, moments, inverse, informativeness and d(mu1, xbar). */
export interface ModelBasis {
  columns: number[];
  usable: Uint8Array;
  count: number;
  mean: Float64Array;
  inverse: Float64Array;
  infoX: Float64Array;
  positivesDistance: number;
}

/**
 * The part of `buildModel` that does not depend on theta, so that several thetas (an experiment's
 * rows) share it; `modelAt` finishes the model at one theta with the very numbers of `buildModel`.
 *
 * @example
 * const basis = modelBasis(data, { columns: [0, 1], missing: "complete", invMethod: "gaussian" });
 * const [a, b] = [modelAt(basis, data, thetaA), modelAt(basis, data, thetaB)];
 */
export function modelBasis(data: Dataset, spec: ModelSpec): ModelBasis {
  const { columns } = spec;
  const k = columns.length;
  const { usable, count } = usableRows(data, columns);
  if (count <= k) {
    invalid("X", "more rows with every used attribute present than attributes (N > K)", `${count} complete rows for K=${k}`);
  }
  const { mean, cov } = moments(data, columns, spec.missing, usable);
  const inverse = spec.covInv ?? invertCovariance(cov, k, spec.invMethod);

  const infoX = new Float64Array(data.rows).fill(NaN);
  const { rows: used, centred } = centredRows(data, columns, mean, usable, count);
  // quadraticForm(inverse, k, x, 0, x, 0) of each row x, four rows a pass (their sums independent), each with quadraticForm's very operations.
  let p = 0;
  for (; p + 4 <= count; p += 4) {
    const [x0, x1, x2, x3] = [p * k, (p + 1) * k, (p + 2) * k, (p + 3) * k];
    let [q0, q1, q2, q3] = [0, 0, 0, 0];
    for (let a = 0, row = 0; a < k; a++, row += k) {
      let [i0, i1, i2, i3] = [0, 0, 0, 0];
      for (let b = 0; b < k; b++) {
        const s = inverse[row + b];
        i0 += s * centred[x0 + b];
        i1 += s * centred[x1 + b];
        i2 += s * centred[x2 + b];
        i3 += s * centred[x3 + b];
      }
      q0 += centred[x0 + a] * i0;
      q1 += centred[x1 + a] * i1;
      q2 += centred[x2 + a] * i2;
      q3 += centred[x3 + a] * i3;
    }
    infoX[used[p]] = q0;
    infoX[used[p + 1]] = q1;
    infoX[used[p + 2]] = q2;
    infoX[used[p + 3]] = q3;
  }
  for (; p < count; p++) infoX[used[p]] = quadraticForm(inverse, k, centred, p * k, centred, p * k);

  let positivesDistance = NaN;
  if (spec.logistic) {
    const mu1 = new Float64Array(k);
    let positives = 0;
    for (let i = 0; i < data.rows; i++) {
      if (!usable[i] || data.y[i] !== 1) continue;
      positives++;
      for (let a = 0; a < k; a++) mu1[a] += data.X[i * data.cols + columns[a]];
    }
    for (let a = 0; a < k; a++) mu1[a] = mu1[a] / positives - mean[a];
    positivesDistance = quadraticForm(inverse, k, mu1, 0, mu1, 0);
  }
  return { columns: [...columns], usable, count, mean, inverse, infoX, positivesDistance };
}

/** The model of a basis at theta (its informativeness array is the basis's own). */
export function modelAt(basis: ModelBasis, data: Dataset, theta: Float64Array): Model {
  const { columns, usable, count, mean, inverse, infoX } = basis;
  const k = columns.length;
  const centredTheta = new Float64Array(k);
  for (let a = 0; a < k; a++) centredTheta[a] = theta[columns[a]] - mean[a];
  const direction = new Float64Array(k);
  for (let a = 0; a < k; a++) {
    let s = 0;
    for (let b = 0; b < k; b++) s += inverse[a * k + b] * centredTheta[b];
    direction[a] = s;
  }
  const infoTheta = dot(centredTheta, direction);

  const relevance = new Float64Array(data.rows).fill(NaN);
  const { rows: used, centred } = centredRows(data, columns, mean, usable, count);
  // Each row's dot(x, direction), four rows a pass (their sums independent), in dot's order.
  let p = 0;
  for (; p + 4 <= count; p += 4) {
    const [x0, x1, x2, x3] = [p * k, (p + 1) * k, (p + 2) * k, (p + 3) * k];
    let [s0, s1, s2, s3] = [0, 0, 0, 0];
    for (let a = 0; a < k; a++) {
      const d = direction[a];
      s0 += centred[x0 + a] * d;
      s1 += centred[x1 + a] * d;
      s2 += centred[x2 + a] * d;
      s3 += centred[x3 + a] * d;
    }
    relevance[used[p]] = s0;
    relevance[used[p + 1]] = s1;
    relevance[used[p + 2]] = s2;
    relevance[used[p + 3]] = s3;
  }
  for (; p < count; p++) {
    let sum = 0;
    for (let a = 0; a < k; a++) sum += centred[p * k + a] * direction[a];
    relevance[used[p]] = sum;
  }

  const similarity = new Float64Array(data.rows);
  for (let i = 0; i < data.rows; i++) similarity[i] = relevance[i] - 0.5 * (infoX[i] + infoTheta);
  return { columns: [...columns], usable, usableCount: count, relevance, similarity, infoX, infoTheta, positivesDistance: basis.positivesDistance };
}

/** The usable rows' indices and their centred values x_i - mean, row after row (count x k). */
function centredRows(
  data: Dataset,
  columns: readonly number[],
  mean: Float64Array,
  usable: Uint8Array,
  count: number,
): { rows: Int32Array; centred: Float64Array } {
  const k = columns.length;
  const rows = new Int32Array(count);
  const centred = new Float64Array(count * k);
  for (let i = 0, p = 0; i < data.rows; i++) {
    if (!usable[i]) continue;
    rows[p] = i;
    for (let a = 0; a < k; a++) centred[p * k + a] = data.X[i * data.cols + columns[a]] - mean[a];
    p++;
  }
  return { rows, centred };
}

function dot(a: Float64Array, b: Float64Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}
