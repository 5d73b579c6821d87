/**
 * Means and covariance of the attributes (docs/methodology.md section 1), over a chosen set of columns.
 * Covariances use the N-1 denominator; NaN marks a missing value.
 */
import { ComputationError } from "./errors.js";
import { basisKernels } from "./kernels/basis.js";
import type { Dataset } from "./data.js";
import type { MissingMoments } from "./options.js";

export interface Moments {
  /** Column means, one per selected column. */
  mean: Float64Array;
  /** Covariance, row-major, selected x selected. */
  cov: Float64Array;
}

/**
 * Moments of `columns` of X. `complete` uses the rows flagged in `rows` (1 = use);
 * `pairwise` uses each column's present values for its mean and each pair's common rows for
 * their covariance, with that pair's own count in the denominator.
 */
export function moments(data: Dataset, columns: ArrayLike<number>, mode: MissingMoments, rows: Uint8Array): Moments {
  if (mode === "complete") return completeMoments(data, columns, rows);
  const result = pairwiseMoments(data, columns);
  zeroConstantColumns(data, columns, result.cov);
  return result;
}

/**
 * A constant column must have variance exactly 0: rounding in its mean leaves ~1e-31 otherwise,
 * which the scale-invariant singularity test cannot tell from an attribute in tiny units.
 */
function zeroConstantColumns(data: Dataset, columns: ArrayLike<number>, cov: Float64Array): void {
  const k = columns.length;
  for (let a = 0; a < k; a++) {
    let first = NaN;
    let constant = true;
    for (let i = 0; i < data.rows && constant; i++) {
      const v = data.X[i * data.cols + columns[a]];
      if (v !== v) continue;
      if (first !== first) first = v;
      else if (v !== first) constant = false;
    }
    if (!constant) continue;
    for (let b = 0; b < k; b++) cov[a * k + b] = cov[b * k + a] = 0;
  }
}

function completeMoments(data: Dataset, columns: ArrayLike<number>, rows: Uint8Array): Moments {
  const k = columns.length;
  const mean = new Float64Array(k);
  const cov = new Float64Array(k * k);
  // The used rows' means, centred values and covariance, each entry the sum of its products over
  // the rows in order, a constant column's exactly 0 (basis.wat, or its plain twin).
  const count = basisKernels().completeMoments(data.X, data.rows, data.cols, columns, rows, mean, cov);
  if (count < 2) {
    throw new ComputationError(`Only ${count} row(s) have every attribute present; the covariance needs at least 2.`, "X");
  }
  return { mean, cov };
}

function pairwiseMoments(data: Dataset, columns: ArrayLike<number>): Moments {
  const { X, cols: stride, rows } = data;
  const k = columns.length;
  const mean = new Float64Array(k);
  for (let a = 0; a < k; a++) {
    let sum = 0;
    let count = 0;
    for (let i = 0; i < rows; i++) {
      const v = X[i * stride + columns[a]];
      if (v === v) {
        sum += v;
        count++;
      }
    }
    if (count < 2) throw new ComputationError(`Attribute column ${columns[a]} has fewer than 2 present values.`, "X");
    mean[a] = sum / count;
  }
  const cov = new Float64Array(k * k);
  for (let a = 0; a < k; a++) {
    for (let b = a; b < k; b++) {
      let sum = 0;
      let count = 0;
      for (let i = 0; i < rows; i++) {
        const va = X[i * stride + columns[a]];
        const vb = X[i * stride + columns[b]];
        if (va === va && vb === vb) {
          sum += (va - mean[a]) * (vb - mean[b]);
          count++;
        }
      }
      if (count < 2) {
        throw new ComputationError(
          `Attribute columns ${columns[a]} and ${columns[b]} are present together in fewer than 2 rows, so their covariance is undefined; use missing_moments: "complete" or fill the gaps.`,
          "options.missing_moments",
        );
      }
      cov[a * k + b] = cov[b * k + a] = sum / (count - 1);
    }
  }
  return { mean, cov };
}
