/**
 * Small dense linear algebra for the K x K covariance of the attributes: its inverse (three
 * methods, chosen by `options.inv_method`), a symmetric eigendecomposition, and the quadratic
 * forms the relevance and similarity scores are made of. Matrices are square, row-major
 * Float64Arrays; K is small (tens), so plain O(K^3) loops are enough.
 */
import { ComputationError } from "./errors.js";
import type { InvMethod } from "./options.js";

/**
 * A pivot of the equilibrated (unit-diagonal, correlation-like) matrix at or below this is treated
 * as zero. Equilibrating first makes the verdict independent of the attributes' units; 1e-12 is
 * about 1e4 ulps, loose enough to catch exact linear dependence lost in rounding, tight enough to
 * accept a merely ill-conditioned covariance.
 */
export const PIVOT_TOLERANCE = 1e-12;

/**
 * The pseudoinverse drops eigenvalues with |lambda| <= this times the largest |lambda|: those are
 * rounding noise of directions in which the covariance is really zero, and inverting them would
 * blow the noise up to 1e12 and more.
 */
const EIGEN_TOLERANCE = 1e-12;

/** Jacobi converges quadratically; this cap only guards against a pathological input. */
const MAX_JACOBI_SWEEPS = 100;

/** Returns S^-1 (a new k x k array) for a symmetric covariance S, by the given method. */
export function invertCovariance(S: Float64Array, k: number, method: InvMethod): Float64Array {
  if (S.length !== k * k) throw new RangeError(`invertCovariance: expected ${k * k} values, got ${S.length}`);
  for (let v = 0; v < S.length; v++) {
    if (!Number.isFinite(S[v])) {
      throw new ComputationError(
        `The covariance of X has a non-finite entry at [${Math.floor(v / k)}][${v % k}] ` +
          `(do two attributes share no complete rows?), so it cannot be inverted.`,
      );
    }
  }
  switch (method) {
    case "gaussian":
      return invertEquilibrated(S, k, invertLU, method);
    case "cholesky":
      return invertEquilibrated(S, k, invertCholesky, method);
    case "pseudoinverse":
      return pseudoinverse(S, k);
  }
}

/**
 * Inverts S as D^-1/2 R^-1 D^-1/2 with R = D^-1/2 S D^-1/2 and D = diag(S), so that the
 * singularity test inside `invertR` sees a unit diagonal whatever the attributes' scales.
 * `invertR` returns null when R is singular (or not positive definite) by PIVOT_TOLERANCE.
 */
function invertEquilibrated(
  S: Float64Array,
  k: number,
  invertR: (R: Float64Array, k: number) => Float64Array | null,
  method: "gaussian" | "cholesky",
): Float64Array {
  const scale = new Float64Array(k);
  for (let j = 0; j < k; j++) {
    const d = S[j * k + j];
    // A zero variance is a constant attribute; a negative one cannot come from data. Only an
    // exact zero is caught: rounding noise of a constant column looks, after equilibration, like an
    // attribute in tiny units, so the covariance builder must give constant columns exactly 0.
    if (!(d > 0) || !Number.isFinite(d)) throw failure(method);
    scale[j] = 1 / Math.sqrt(d);
  }
  const R = new Float64Array(k * k);
  for (let i = 0; i < k; i++) {
    for (let j = 0; j < k; j++) R[i * k + j] = scale[i] * S[i * k + j] * scale[j];
  }
  const Rinv = invertR(R, k);
  if (Rinv === null) throw failure(method);
  for (let i = 0; i < k; i++) {
    for (let j = 0; j < k; j++) Rinv[i * k + j] *= scale[i] * scale[j];
  }
  return Rinv;
}

function failure(method: "gaussian" | "cholesky"): ComputationError {
  const message =
    method === "gaussian"
      ? `The covariance of X is singular (an attribute is constant or a linear combination of others), ` +
        `so inv_method "gaussian" cannot invert it; use inv_method: "pseudoinverse" or drop the redundant attribute.`
      : `The covariance of X is not positive definite (an attribute is constant or a linear combination of ` +
        `others, or pairwise-complete moments made it indefinite), so inv_method "cholesky" cannot invert it; ` +
        `use inv_method: "pseudoinverse" (or "gaussian" if it is merely indefinite) or drop the redundant attribute.`;
  return new ComputationError(message, "options.inv_method");
}

/** LU with partial pivoting, then one solve per column of the identity. Null if singular. */
function invertLU(A: Float64Array, k: number): Float64Array | null {
  const lu = Float64Array.from(A);
  const perm = new Int32Array(k);
  for (let i = 0; i < k; i++) perm[i] = i;
  for (let c = 0; c < k; c++) {
    let p = c;
    for (let r = c + 1; r < k; r++) if (Math.abs(lu[r * k + c]) > Math.abs(lu[p * k + c])) p = r;
    if (!(Math.abs(lu[p * k + c]) > PIVOT_TOLERANCE)) return null;
    if (p !== c) {
      for (let j = 0; j < k; j++) {
        const t = lu[c * k + j];
        lu[c * k + j] = lu[p * k + j];
        lu[p * k + j] = t;
      }
      const t = perm[c];
      perm[c] = perm[p];
      perm[p] = t;
    }
    const pivot = lu[c * k + c];
    for (let r = c + 1; r < k; r++) {
      const f = (lu[r * k + c] /= pivot);
      if (f !== 0) for (let j = c + 1; j < k; j++) lu[r * k + j] -= f * lu[c * k + j];
    }
  }
  const inv = new Float64Array(k * k);
  const x = new Float64Array(k);
  for (let col = 0; col < k; col++) {
    // P A = L U, so A x = e_col becomes L U x = P e_col.
    for (let i = 0; i < k; i++) {
      let s = perm[i] === col ? 1 : 0;
      for (let j = 0; j < i; j++) s -= lu[i * k + j] * x[j];
      x[i] = s;
    }
    for (let i = k - 1; i >= 0; i--) {
      let s = x[i];
      for (let j = i + 1; j < k; j++) s -= lu[i * k + j] * x[j];
      x[i] = s / lu[i * k + i];
    }
    for (let i = 0; i < k; i++) inv[i * k + col] = x[i];
  }
  // S^-1 is symmetric; averaging away the rounding asymmetry makes a'S^-1 b equal b'S^-1 a exactly.
  for (let i = 0; i < k; i++) {
    for (let j = i + 1; j < k; j++) {
      const m = 0.5 * (inv[i * k + j] + inv[j * k + i]);
      inv[i * k + j] = m;
      inv[j * k + i] = m;
    }
  }
  return inv;
}

/** A = L L', then A^-1 = L'^-1 L^-1. Null if A is not positive definite. */
function invertCholesky(A: Float64Array, k: number): Float64Array | null {
  const L = new Float64Array(k * k);
  for (let j = 0; j < k; j++) {
    let d = A[j * k + j];
    for (let m = 0; m < j; m++) d -= L[j * k + m] * L[j * k + m];
    if (!(d > PIVOT_TOLERANCE)) return null;
    const ljj = Math.sqrt(d);
    L[j * k + j] = ljj;
    for (let i = j + 1; i < k; i++) {
      let s = A[i * k + j];
      for (let m = 0; m < j; m++) s -= L[i * k + m] * L[j * k + m];
      L[i * k + j] = s / ljj;
    }
  }
  // W = L^-1, lower triangular, by forward substitution column by column.
  const W = new Float64Array(k * k);
  for (let c = 0; c < k; c++) {
    W[c * k + c] = 1 / L[c * k + c];
    for (let i = c + 1; i < k; i++) {
      let s = 0;
      for (let m = c; m < i; m++) s -= L[i * k + m] * W[m * k + c];
      W[i * k + c] = s / L[i * k + i];
    }
  }
  // (W'W)_ij = sum over m >= max(i, j) of W_mi W_mj; computed once per pair, so exactly symmetric.
  const inv = new Float64Array(k * k);
  for (let i = 0; i < k; i++) {
    for (let j = i; j < k; j++) {
      let s = 0;
      for (let m = j; m < k; m++) s += W[m * k + i] * W[m * k + j];
      inv[i * k + j] = s;
      inv[j * k + i] = s;
    }
  }
  return inv;
}

/** Moore-Penrose inverse V diag(1/lambda) V' over the eigenvalues above EIGEN_TOLERANCE. */
function pseudoinverse(S: Float64Array, k: number): Float64Array {
  const { values, vectors } = symmetricEigen(S, k);
  let largest = 0;
  for (let j = 0; j < k; j++) largest = Math.max(largest, Math.abs(values[j]));
  const cutoff = EIGEN_TOLERANCE * largest;
  const inv = new Float64Array(k * k);
  for (let e = 0; e < k; e++) {
    const lambda = values[e];
    // Strict `>`: for the zero matrix the cutoff is 0 and every eigenvalue is dropped, giving zero.
    if (!(Math.abs(lambda) > cutoff)) continue;
    const w = 1 / lambda;
    for (let i = 0; i < k; i++) {
      const vi = vectors[i * k + e] * w;
      for (let j = i; j < k; j++) inv[i * k + j] += vi * vectors[j * k + e];
    }
  }
  for (let i = 0; i < k; i++) for (let j = 0; j < i; j++) inv[i * k + j] = inv[j * k + i];
  return inv;
}

/**
 * Eigendecomposition A = V diag(values) V' of a symmetric matrix by cyclic Jacobi rotations:
 * simple, accurate to rounding for small K, and orthogonal V by construction. `values` ascend;
 * column j of `vectors` (row-major k x k) belongs to values[j].
 */
export function symmetricEigen(A: Float64Array, k: number): { values: Float64Array; vectors: Float64Array } {
  if (A.length !== k * k) throw new RangeError(`symmetricEigen: expected ${k * k} values, got ${A.length}`);
  const a = Float64Array.from(A);
  const v = new Float64Array(k * k);
  for (let i = 0; i < k; i++) v[i * k + i] = 1;
  let total = 0;
  for (let i = 0; i < a.length; i++) total += a[i] * a[i];
  // Stop when the off-diagonal part is rounding noise relative to the whole matrix.
  const done = total * Number.EPSILON * Number.EPSILON;

  for (let sweep = 0; sweep < MAX_JACOBI_SWEEPS; sweep++) {
    let off = 0;
    for (let p = 0; p < k; p++) for (let q = p + 1; q < k; q++) off += a[p * k + q] * a[p * k + q];
    if (off <= done) break;
    for (let p = 0; p < k; p++) {
      for (let q = p + 1; q < k; q++) {
        const apq = a[p * k + q];
        if (apq === 0) continue;
        // The rotation (c, s) that zeroes a_pq, taking the smaller angle for stability.
        const theta = (a[q * k + q] - a[p * k + p]) / (2 * apq);
        const t = (theta >= 0 ? 1 : -1) / (Math.abs(theta) + Math.hypot(theta, 1));
        const c = 1 / Math.hypot(t, 1);
        const s = t * c;
        for (let r = 0; r < k; r++) {
          const arp = a[r * k + p];
          const arq = a[r * k + q];
          a[r * k + p] = c * arp - s * arq;
          a[r * k + q] = s * arp + c * arq;
        }
        for (let r = 0; r < k; r++) {
          const apr = a[p * k + r];
          const aqr = a[q * k + r];
          a[p * k + r] = c * apr - s * aqr;
          a[q * k + r] = s * apr + c * aqr;
        }
        a[p * k + q] = 0;
        a[q * k + p] = 0;
        for (let r = 0; r < k; r++) {
          const vrp = v[r * k + p];
          const vrq = v[r * k + q];
          v[r * k + p] = c * vrp - s * vrq;
          v[r * k + q] = s * vrp + c * vrq;
        }
      }
    }
  }

  const order = Array.from({ length: k }, (_, i) => i).sort((i, j) => a[i * k + i] - a[j * k + j]);
  const values = new Float64Array(k);
  const vectors = new Float64Array(k * k);
  order.forEach((src, dst) => {
    values[dst] = a[src * k + src];
    for (let r = 0; r < k; r++) vectors[r * k + dst] = v[r * k + src];
  });
  return { values, vectors };
}

/** a' Sinv b, with a and b read from a[aOffset..aOffset+k) and b[bOffset..bOffset+k). */
export function quadraticForm(Sinv: Float64Array, k: number, a: Float64Array, aOffset: number, b: Float64Array, bOffset: number): number {
  let sum = 0;
  for (let i = 0, row = 0; i < k; i++, row += k) {
    let inner = 0;
    for (let j = 0; j < k; j++) inner += Sinv[row + j] * b[bOffset + j];
    sum += a[aOffset + i] * inner;
  }
  return sum;
}

/** A x for a k x k matrix A. */
export function matVec(A: Float64Array, k: number, x: Float64Array): Float64Array {
  const out = new Float64Array(k);
  for (let i = 0, row = 0; i < k; i++, row += k) {
    let s = 0;
    for (let j = 0; j < k; j++) s += A[row + j] * x[j];
    out[i] = s;
  }
  return out;
}
