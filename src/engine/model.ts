/**
 * One relevance model: the scores of every observation for one set of attribute columns
 * (docs/methodology.md section 2). Rows missing a used attribute are not usable: their scores are NaN
 * and they later get weight exactly 0.
 */
import type { Dataset } from "./data.js";
import { invalid } from "./errors.js";
import { invertCovariance, quadraticForm } from "./linalg.js";
import { basisKernels, jsBasis } from "./kernels/basis.js";
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

/** Rows that have every one of `columns` present (the plain loop: a combination's own, warm, with no copy of X). */
export function usableRows(data: Dataset, columns: ArrayLike<number>): { usable: Uint8Array; count: number } {
  const usable = new Uint8Array(data.rows);
  return { usable, count: jsBasis.usableRows(data.X, data.rows, data.cols, columns, usable) };
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
  const kernels = basisKernels();
  const usable = new Uint8Array(data.rows);
  const count = kernels.usableRows(data.X, data.rows, data.cols, columns, usable);
  if (count <= k) {
    invalid("X", "more rows with every used attribute present than attributes (N > K)", `${count} complete rows for K=${k}`);
  }
  const { mean, cov } = moments(data, columns, spec.missing, usable);
  const inverse = spec.covInv ?? invertCovariance(cov, k, spec.invMethod);
  // quadraticForm(inverse, k, x, 0, x, 0) of each usable row's centred x, with quadraticForm's very operations.
  const infoX = new Float64Array(data.rows);
  kernels.informativeness(data.X, data.rows, data.cols, columns, usable, mean, inverse, infoX);

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

  // Each usable row's dot(x - mean, direction), in dot's order.
  const relevance = new Float64Array(data.rows);
  const similarity = new Float64Array(data.rows);
  basisKernels().relevance(data.X, data.rows, data.cols, columns, usable, mean, direction, infoX, infoTheta, relevance, similarity);
  return { columns: [...columns], usable, usableCount: count, relevance, similarity, infoX, infoTheta, positivesDistance: basis.positivesDistance };
}

function dot(a: Float64Array, b: Float64Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}
