/**
 * The engine's input: outcomes y (N), attributes X (N x K, row-major, NaN = missing) and the
 * circumstances theta (K). `checkData` is the one place where shapes and finiteness are checked;
 * the wire layer and the client call it too, so a bad request fails the same way everywhere.
 */
import { invalid } from "./errors.js";
import { basisKernels } from "./kernels/basis.js";

export interface Dataset {
  /** Outcomes, length `rows`, all finite. */
  readonly y: Float64Array;
  /** Attributes, row-major `rows` x `cols`; NaN marks a missing value. */
  readonly X: Float64Array;
  readonly rows: number;
  readonly cols: number;
}

/** Checks a dataset and one theta; throws InvalidInputError naming the first field at fault. */
export function checkData(data: Dataset, theta: Float64Array): void {
  const { y, X, rows, cols } = data;
  if (!Number.isInteger(cols) || cols < 1) invalid("X", "at least one attribute column");
  if (!Number.isInteger(rows) || rows < 1) invalid("X", "at least one row");
  if (X.length !== rows * cols) invalid("X", `${rows} rows of ${cols} values`, `got ${X.length} values in all`);
  if (y.length !== rows) invalid("y", `${rows} values, one per row of X`, `got ${y.length}`);
  if (rows <= cols) {
    invalid("X", `more rows than columns (N > K)`, `got N=${rows} rows and K=${cols} columns`);
  }
  for (let i = 0; i < rows; i++) {
    if (!Number.isFinite(y[i])) invalid(`y[${i}]`, "a finite number", `got ${y[i]}`);
  }
  const v = basisKernels().firstInfinite(X);
  if (v >= 0) invalid(`X[${Math.floor(v / cols)}][${v % cols}]`, "a finite number or a missing value", `got ${X[v]}`);
  if (theta.length !== cols) invalid("theta", `K=${cols} values, one per column of X`, `got ${theta.length}`);
  for (let j = 0; j < cols; j++) {
    if (!Number.isFinite(theta[j])) invalid(`theta[${j}]`, "a finite number", `got ${theta[j]}`);
  }
}

/** Builds a Dataset from rows of numbers (null or NaN = missing). */
export function datasetFromRows(y: ArrayLike<number>, X: ReadonlyArray<ArrayLike<number | null>>): Dataset {
  const rows = X.length;
  const cols = rows > 0 ? X[0].length : 0;
  const flat = new Float64Array(rows * cols);
  X.forEach((row, i) => {
    if (row.length !== cols) invalid(`X[${i}]`, `${cols} values like the first row`, `got ${row.length}`);
    for (let j = 0; j < cols; j++) {
      const v = row[j];
      flat[i * cols + j] = v === null ? NaN : v;
    }
  });
  return { y: Float64Array.from(y), X: flat, rows, cols };
}
