import { createRandom } from "../../src/engine/random.js";
import { describe, it, expect } from "vitest";
import { ComputationError } from "../../src/engine/errors.js";
import type { InvMethod } from "../../src/engine/options.js";
import { invertCovariance, matVec, quadraticForm, symmetricEigen } from "../../src/engine/linalg.js";

const METHODS: InvMethod[] = ["gaussian", "cholesky", "pseudoinverse"];

function randomMatrix(rows: number, cols: number, rand: () => number): Float64Array {
  return Float64Array.from({ length: rows * cols }, () => 2 * rand() - 1);
}

function multiply(A: Float64Array, B: Float64Array, k: number): Float64Array {
  const C = new Float64Array(k * k);
  for (let i = 0; i < k; i++)
    for (let j = 0; j < k; j++) {
      let s = 0;
      for (let m = 0; m < k; m++) s += A[i * k + m] * B[m * k + j];
      C[i * k + j] = s;
    }
  return C;
}

function transpose(A: Float64Array, k: number): Float64Array {
  const T = new Float64Array(k * k);
  for (let i = 0; i < k; i++) for (let j = 0; j < k; j++) T[j * k + i] = A[i * k + j];
  return T;
}

/** Well conditioned SPD: B'B + I with B random k x k. */
function randomSpd(k: number, seed: number): Float64Array {
  const B = randomMatrix(k, k, createRandom(seed));
  const S = multiply(transpose(B, k), B, k);
  for (let i = 0; i < k; i++) S[i * k + i] += 1;
  return S;
}

/** Sample covariance (n - 1 denominator) of an n x k row-major data matrix. */
function covariance(X: Float64Array, n: number, k: number): Float64Array {
  const mean = new Float64Array(k);
  for (let r = 0; r < n; r++) for (let j = 0; j < k; j++) mean[j] += X[r * k + j];
  for (let j = 0; j < k; j++) mean[j] /= n;
  const S = new Float64Array(k * k);
  for (let i = 0; i < k; i++)
    for (let j = 0; j < k; j++) {
      let s = 0;
      for (let r = 0; r < n; r++) s += (X[r * k + i] - mean[i]) * (X[r * k + j] - mean[j]);
      S[i * k + j] = s / (n - 1);
    }
  return S;
}

function identity(k: number): Float64Array {
  const I = new Float64Array(k * k);
  for (let i = 0; i < k; i++) I[i * k + i] = 1;
  return I;
}

function maxAbsDiff(A: Float64Array, B: Float64Array): number {
  expect(A.length).toBe(B.length);
  let m = 0;
  for (let i = 0; i < A.length; i++) m = Math.max(m, Math.abs(A[i] - B[i]));
  return m;
}

function maxAbs(A: Float64Array): number {
  return A.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
}

/** Max |A - B| relative to max |B|. */
function relDiff(A: Float64Array, B: Float64Array): number {
  return maxAbsDiff(A, B) / maxAbs(B);
}

function expectInvMethodError(fn: () => unknown, ...fragments: string[]): ComputationError {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(ComputationError);
  const err = caught as ComputationError;
  expect(err.field).toBe("options.inv_method");
  for (const f of fragments) expect(err.message).toContain(f);
  return err;
}

/** n x 4 data whose last column is 2 * column 0 + 3: an exactly singular covariance. */
function dependentData(n: number, seed: number): Float64Array {
  const k = 4;
  const X = randomMatrix(n, k, createRandom(seed));
  for (let r = 0; r < n; r++) X[r * k + 3] = 2 * X[r * k + 0] + 3;
  return X;
}

function scaleColumn(X: Float64Array, n: number, k: number, j: number, factor: number): Float64Array {
  const Y = Float64Array.from(X);
  for (let r = 0; r < n; r++) Y[r * k + j] *= factor;
  return Y;
}

describe("invertCovariance on SPD matrices", () => {
  for (const k of [1, 2, 5, 12, 30]) {
    it(`gives S S^-1 = I and agrees across methods (k=${k})`, () => {
      for (const seed of [1, 2, 3]) {
        const S = randomSpd(k, seed * 100 + k);
        const inverses = METHODS.map((m) => invertCovariance(S, k, m));
        for (const inv of inverses) {
          expect(maxAbsDiff(multiply(S, inv, k), identity(k))).toBeLessThan(1e-9);
          expect(maxAbsDiff(multiply(inv, S, k), identity(k))).toBeLessThan(1e-9);
        }
        expect(maxAbsDiff(inverses[0], inverses[1])).toBeLessThan(1e-9);
        expect(maxAbsDiff(inverses[0], inverses[2])).toBeLessThan(1e-9);
      }
    });
  }

  it("returns a new array and leaves S untouched", () => {
    const S = randomSpd(4, 9);
    const copy = Float64Array.from(S);
    for (const m of METHODS) {
      const inv = invertCovariance(S, 4, m);
      expect(inv).not.toBe(S);
      expect(Array.from(S)).toEqual(Array.from(copy));
    }
  });

  it("returns exactly symmetric inverses", () => {
    const k = 7;
    const S = randomSpd(k, 77);
    for (const m of METHODS) {
      const inv = invertCovariance(S, k, m);
      expect(Array.from(inv)).toEqual(Array.from(transpose(inv, k)));
    }
  });

  it("rejects a wrong length", () => {
    expect(() => invertCovariance(new Float64Array(5), 2, "gaussian")).toThrow(RangeError);
  });

  it("rejects non-finite entries with a ComputationError", () => {
    const S = randomSpd(3, 5);
    S[1] = NaN;
    for (const m of METHODS) expect(() => invertCovariance(S, 3, m)).toThrow(ComputationError);
  });
});

describe("invertCovariance on a symmetric indefinite nonsingular matrix", () => {
  // Positive diagonal (so equilibration passes) but eigenvalues of both signs.
  const k = 3;
  const S = Float64Array.from([1, 2, 0, 2, 1, 0.5, 0, 0.5, 3]);

  it("is indefinite (the premise of the test)", () => {
    const { values } = symmetricEigen(S, k);
    expect(values[0]).toBeLessThan(-0.5);
    expect(values[k - 1]).toBeGreaterThan(0.5);
  });

  it("gaussian inverts it", () => {
    const inv = invertCovariance(S, k, "gaussian");
    expect(maxAbsDiff(multiply(S, inv, k), identity(k))).toBeLessThan(1e-12);
  });

  it("gaussian pivots: a leading 2x2 block that is singular does not make S singular", () => {
    // det = -4, but eliminating without row exchanges meets a zero pivot at (1, 1).
    const T = Float64Array.from([1, 1, 2, 1, 1, 0, 2, 0, 1]);
    const inv = invertCovariance(T, 3, "gaussian");
    expect(maxAbsDiff(multiply(T, inv, 3), identity(3))).toBeLessThan(1e-12);
    expectInvMethodError(() => invertCovariance(T, 3, "cholesky"), "pseudoinverse");
  });

  it("pseudoinverse equals the inverse", () => {
    const inv = invertCovariance(S, k, "gaussian");
    expect(maxAbsDiff(invertCovariance(S, k, "pseudoinverse"), inv)).toBeLessThan(1e-12);
  });

  it("cholesky throws a ComputationError pointing at inv_method", () => {
    expectInvMethodError(() => invertCovariance(S, k, "cholesky"), "not positive definite", "pseudoinverse");
  });
});

describe("invertCovariance on an exactly singular covariance", () => {
  const n = 25;
  const k = 4;
  const S = covariance(dependentData(n, 42), n, k);

  it("gaussian throws, naming the way out", () => {
    expectInvMethodError(() => invertCovariance(S, k, "gaussian"), "singular", 'inv_method: "pseudoinverse"');
  });

  it("cholesky throws, naming the way out", () => {
    expectInvMethodError(() => invertCovariance(S, k, "cholesky"), "not positive definite", 'inv_method: "pseudoinverse"');
  });

  it("pseudoinverse satisfies the Moore-Penrose conditions", () => {
    const P = invertCovariance(S, k, "pseudoinverse");
    expect(relDiff(multiply(multiply(S, P, k), S, k), S)).toBeLessThan(1e-8);
    expect(relDiff(multiply(multiply(P, S, k), P, k), P)).toBeLessThan(1e-8);
    expect(maxAbsDiff(P, transpose(P, k))).toBeLessThanOrEqual(1e-12 * maxAbs(P));
    // Rank 3: P is not blown up by the rounding noise of the dropped direction.
    expect(maxAbs(P)).toBeLessThan(1e3);
  });

  it("a constant column is singular under gaussian and cholesky, not under pseudoinverse", () => {
    const X = randomMatrix(n, k, createRandom(7));
    for (let r = 0; r < n; r++) X[r * k + 2] = 5;
    const C = covariance(X, n, k);
    expect(C[2 * k + 2]).toBe(0);
    expectInvMethodError(() => invertCovariance(C, k, "gaussian"), 'inv_method: "pseudoinverse"');
    expectInvMethodError(() => invertCovariance(C, k, "cholesky"), 'inv_method: "pseudoinverse"');
    const P = invertCovariance(C, k, "pseudoinverse");
    expect(relDiff(multiply(multiply(C, P, k), C, k), C)).toBeLessThan(1e-8);
    for (let i = 0; i < k; i++) expect(P[i * k + 2]).toBe(0);
  });

  it("the zero matrix's pseudoinverse is the zero matrix", () => {
    const P = invertCovariance(new Float64Array(9), 3, "pseudoinverse");
    expect(Array.from(P)).toEqual(new Array(9).fill(0));
  });
});

describe("invertCovariance is scale invariant", () => {
  const n = 30;
  const k = 4;
  const X = randomMatrix(n, k, createRandom(2024));
  const S = covariance(X, n, k);

  for (const factor of [1e6, 1e-6]) {
    for (const method of ["gaussian", "cholesky"] as const) {
      it(`${method}: scaling a column by ${factor} keeps the verdict and transforms the inverse`, () => {
        for (let j = 0; j < k; j++) {
          const Sd = covariance(scaleColumn(X, n, k, j, factor), n, k);
          const inv = invertCovariance(S, k, method);
          const invD = invertCovariance(Sd, k, method);
          // (D S D)^-1 = D^-1 S^-1 D^-1 with D = diag(1, ..., factor, ..., 1).
          const expected = Float64Array.from(inv);
          for (let i = 0; i < k; i++) {
            expected[i * k + j] /= factor;
            expected[j * k + i] /= factor;
          }
          for (let v = 0; v < k * k; v++) {
            expect(Math.abs(invD[v] - expected[v])).toBeLessThanOrEqual(1e-9 * Math.abs(expected[v]) + 1e-300);
          }
        }
      });

      it(`${method}: a singular covariance stays singular when a column is scaled by ${factor}`, () => {
        const D = dependentData(n, 43);
        for (let j = 0; j < k; j++) {
          const Sd = covariance(scaleColumn(D, n, k, j, factor), n, k);
          expectInvMethodError(() => invertCovariance(Sd, k, method), "pseudoinverse");
        }
      });
    }
  }
});

describe("symmetricEigen", () => {
  function check(A: Float64Array, k: number): void {
    const { values, vectors: V } = symmetricEigen(A, k);
    const VL = Float64Array.from(V);
    for (let i = 0; i < k; i++) for (let j = 0; j < k; j++) VL[i * k + j] *= values[j];
    const scale = Math.max(maxAbs(A), 1);
    expect(maxAbsDiff(multiply(VL, transpose(V, k), k), A)).toBeLessThan(1e-12 * scale);
    expect(maxAbsDiff(multiply(transpose(V, k), V, k), identity(k))).toBeLessThan(1e-12);
    for (let j = 1; j < k; j++) expect(values[j]).toBeGreaterThanOrEqual(values[j - 1]);
  }

  it("reconstructs random symmetric matrices with orthonormal vectors", () => {
    for (const k of [1, 2, 3, 6, 10, 25, 50]) {
      const B = randomMatrix(k, k, createRandom(k));
      const A = new Float64Array(k * k);
      for (let i = 0; i < k; i++) for (let j = 0; j < k; j++) A[i * k + j] = B[i * k + j] + B[j * k + i];
      check(A, k);
    }
  });

  it("handles repeated eigenvalues, diagonal and zero matrices", () => {
    check(identity(5), 5);
    check(Float64Array.from([3, 0, 0, 0, -1, 0, 0, 0, 3]), 3);
    check(new Float64Array(16), 4);
    check(Float64Array.from([2, 1, 0, 1, 2, 0, 0, 0, 2]), 3);
  });

  it("finds known eigenvalues and eigenvectors", () => {
    const { values, vectors } = symmetricEigen(Float64Array.from([2, 1, 1, 2]), 2);
    expect(values[0]).toBeCloseTo(1, 14);
    expect(values[1]).toBeCloseTo(3, 14);
    // Eigenvector of 3 is (1, 1)/sqrt 2, up to sign: read column 1.
    expect(Math.abs(vectors[0 * 2 + 1])).toBeCloseTo(Math.SQRT1_2, 14);
    expect(vectors[0 * 2 + 1] * vectors[1 * 2 + 1]).toBeGreaterThan(0);
  });

  it("does not modify its input", () => {
    const A = Float64Array.from([4, 1, 1, 3]);
    symmetricEigen(A, 2);
    expect(Array.from(A)).toEqual([4, 1, 1, 3]);
  });
});

describe("quadraticForm and matVec", () => {
  const k = 6;
  const rand = createRandom(99);
  // Not symmetric, so swapping a and b or transposing the matrix would show.
  const M = randomMatrix(k, k, rand);
  const a = randomMatrix(3, k, rand);
  const b = randomMatrix(4, k, rand);

  it("quadraticForm matches a naive loop at any offsets", () => {
    for (const [ao, bo] of [
      [0, 0],
      [k, 2 * k],
      [2 * k, 3],
      [5, 3 * k],
    ]) {
      let naive = 0;
      for (let i = 0; i < k; i++) for (let j = 0; j < k; j++) naive += a[ao + i] * M[i * k + j] * b[bo + j];
      expect(quadraticForm(M, k, a, ao, b, bo)).toBeCloseTo(naive, 12);
    }
  });

  it("quadraticForm is a' M b, not b' M a", () => {
    const M2 = Float64Array.from([0, 1, 0, 0]);
    const x = Float64Array.from([1, 0]);
    const y = Float64Array.from([0, 1]);
    expect(quadraticForm(M2, 2, x, 0, y, 0)).toBe(1);
    expect(quadraticForm(M2, 2, y, 0, x, 0)).toBe(0);
  });

  it("matVec matches a naive loop", () => {
    const x = b.subarray(0, k);
    const out = matVec(M, k, x);
    expect(out.length).toBe(k);
    for (let i = 0; i < k; i++) {
      let s = 0;
      for (let j = 0; j < k; j++) s += M[i * k + j] * x[j];
      expect(out[i]).toBeCloseTo(s, 12);
    }
  });
});
