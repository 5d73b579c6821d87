/**
 * The regression baseline of a backtest: ordinary least squares with an intercept on a step's
 * training rows, evaluated at each evaluation row. Its own normal equations and elimination (not
 * linalg.ts's `invertCovariance`, which equilibrates and inverts a covariance with another pivot
 * test): the baseline's numbers are these, and a backtest's results must not change.
 */

/**
 * Ordinary least squares with an intercept on the complete rows, evaluated at theta; null when
 * there are fewer complete rows than coefficients or the attributes are collinear.
 *
 * @example
 * olsPredict([5, 7, 9], [[1], [2], [3]], [4]); // 11
 */
export function olsPredict(y: ReadonlyArray<number>, X: ReadonlyArray<ReadonlyArray<number | null>>, theta: ReadonlyArray<number>): number | null {
  const normal = new NormalEquations(theta.length);
  normal.add(y, X, 0, y.length);
  return normal.predict(theta);
}

/**
 * The normal equations of OLS with an intercept, summed row by row (complete rows only). Adding
 * rows [0, a) and then [a, b) sums in the same order as adding [0, b) at once: an expanding
 * window's equations grow from the previous step's, with the same numbers as summed anew.
 */
class NormalEquations {
  readonly #P: number;
  readonly #A: Float64Array[];
  #rows = 0;

  constructor(K: number, from?: NormalEquations) {
    this.#P = K + 1;
    this.#A = from !== undefined ? from.#A.map((r) => r.slice()) : Array.from({ length: K + 1 }, () => new Float64Array(K + 2));
    this.#rows = from !== undefined ? from.#rows : 0;
  }

  add(y: ReadonlyArray<number>, X: ReadonlyArray<ReadonlyArray<number | null>>, from: number, to: number): void {
    const P = this.#P;
    const A = this.#A;
    // One row's (1, x), refilled in place: the same products in the same order as a new array per row.
    const z = new Float64Array(P);
    z[0] = 1;
    rows: for (let i = from; i < to; i++) {
      const x = X[i];
      for (let k = 1; k < P; k++) {
        const v = x[k - 1];
        if (v === null) continue rows;
        z[k] = v;
      }
      this.#rows++;
      for (let a = 0; a < P; a++) {
        for (let b = 0; b < P; b++) A[a][b] += z[a] * z[b];
        A[a][P] += z[a] * y[i];
      }
    }
  }

  /** The fit at theta (the equations are kept: the elimination works on a copy). */
  predict(theta: ReadonlyArray<number>): number | null {
    const K = theta.length;
    const P = this.#P;
    if (this.#rows < P) return null;
    const A = this.#A.map((r) => r.slice());
    // Gaussian elimination with partial pivoting on the normal equations.
    const scale = Math.max(...A.map((r, a) => Math.abs(r[a])), 1e-300);
    for (let c = 0; c < P; c++) {
      let p = c;
      for (let r = c + 1; r < P; r++) if (Math.abs(A[r][c]) > Math.abs(A[p][c])) p = r;
      if (Math.abs(A[p][c]) <= 1e-12 * scale) return null;
      [A[c], A[p]] = [A[p], A[c]];
      for (let r = 0; r < P; r++) {
        if (r === c) continue;
        const f = A[r][c] / A[c][c];
        if (f !== 0) for (let k = c; k <= P; k++) A[r][k] -= f * A[c][k];
      }
    }
    let yhat = A[0][P] / A[0][0];
    for (let j = 0; j < K; j++) yhat += (A[j + 1][P] / A[j + 1][j + 1]) * theta[j];
    return Number.isFinite(yhat) ? yhat : null;
  }
}

/**
 * The regression baseline of every step: OLS on the step's training rows `[from, to)`. An
 * expanding window's equations are carried from step to step (each row summed once, the same
 * numbers as anew); a rolling window's are summed over its rows.
 *
 * @example
 * const [first] = regressionBaselines(y, X, [{ from: 0, to: 50 }], true);
 * first(X[50]); // OLS on rows 0..49 at row 50's attributes
 */
export function regressionBaselines(
  y: ReadonlyArray<number>,
  X: ReadonlyArray<ReadonlyArray<number | null>>,
  steps: ReadonlyArray<{ from: number; to: number }>,
  expanding: boolean,
): Array<(theta: ReadonlyArray<number>) => number | null> {
  const K = X[0]?.length ?? 0;
  let running = new NormalEquations(K);
  let at = 0;
  return steps.map(({ from, to }) => {
    let normal: NormalEquations;
    if (expanding && from === 0 && to >= at) {
      running.add(y, X, at, to);
      at = to;
      normal = running;
      running = new NormalEquations(K, running);
    } else {
      normal = new NormalEquations(K);
      normal.add(y, X, from, to);
    }
    return (theta) => normal.predict(theta);
  });
}
