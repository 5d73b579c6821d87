/**
 * Bounds on the size of X's JSON before encoding it, so that an X far over the 5 MiB limit is
 * refused without spending the time (and memory) to encode it.
 *
 * `JSON.stringify` writes a finite number as `Number#toString` does (shortest round-trip form),
 * NaN and infinities as `null`, and -0 as `0`. Per cell:
 * - null, NaN, ±Infinity: exactly 4 (`null`);
 * - an integer below 1e21 in magnitude: exactly its digits (and a sign);
 * - any other number: at least 3 (`0.5`; a magnitude of 1 or more adds its integer digits) and
 *   at most 18 for a magnitude in [1, 1e21) (17 significant digits and a point; every double of
 *   1e17 or more is an integer), 25 in [1e-7, 1) (`0.` + up to 6 zeros + 17 digits), and 23 in
 *   exponent form (`d.` + 16 digits + `e-308`); one more for a sign.
 * Brackets and commas are counted exactly. So `lower <= JSON.stringify(X).length <= upper`, and
 * both are exact for integer data.
 */

const POW10 = Array.from({ length: 22 }, (_, i) => 10 ** i);

/** Digits of a non-negative integer below 1e21. */
function digits(n: number): number {
  let d = 1;
  while (d < 21 && n >= POW10[d]) d++;
  return d;
}

export interface SizeBounds {
  lower: number;
  upper: number;
  /** Every cell is null or a finite number other than -0: JSON writes X back as itself. */
  exact: boolean;
}

/** Running sums of `jsonSizeBounds` (one per call; `addRow` adds a row's cells). */
interface Sums {
  lower: number;
  upper: number;
  exact: boolean;
}

/**
 * Adds one row's cells to `s`. A function of its own, called once per row: V8 optimizes it as a
 * whole after a few rows, with the feedback of every kind of cell it has seen. As one loop inside
 * `jsonSizeBounds` it ran from on-stack-replaced code that was thrown away at the first branch
 * its rows had not taken (y's cells of 1 or more after X's below 1), every call, and boxed each
 * double in the interpreter (340 KB of garbage per N=1,000, K=10 call).
 */
function addRow(row: unknown[], s: Sums): void {
  const frame = 2 + Math.max(0, row.length - 1);
  let lower = s.lower + frame;
  let upper = s.upper + frame;
  let exact = s.exact;
  for (let j = 0; j < row.length; j++) {
    const v = row[j];
    if (typeof v !== "number" || !Number.isFinite(v)) {
      // null, NaN, ±Infinity -> "null"; anything else is invalid anyway: count it as null.
      if (v !== null) exact = false;
      lower += 4;
      upper += 4;
      continue;
    }
    const sign = v < 0 ? 1 : 0;
    const a = sign ? -v : v;
    if (Number.isInteger(a) && a < 1e21) {
      if (a === 0 && 1 / v < 0) exact = false;
      const n = (a === 0 ? 1 : digits(a)) + (a === 0 ? 0 : sign);
      lower += n;
      upper += n;
    } else if (a >= 1e21) {
      lower += 5 + sign; // "1e+21"
      upper += 23 + sign;
    } else if (a >= 1) {
      // The digits of its integer part: a >= 10^d exactly when its integer part is (10^d is an integer).
      lower += digits(a) + 2 + sign;
      upper += 18 + sign;
    } else {
      lower += 3 + sign;
      upper += (a >= 1e-7 ? 25 : 23) + sign;
    }
  }
  s.lower = lower;
  s.upper = upper;
  s.exact = exact;
}

/**
 * Lower and upper bounds on `JSON.stringify(X).length` (bytes: the text is ASCII) for a
 * rectangular or ragged array of rows of numbers/nulls. Returns undefined when X is not an array
 * of arrays (validation will say what is wrong).
 */
export function jsonSizeBounds(X: unknown): SizeBounds | undefined {
  if (!Array.isArray(X)) return undefined;
  const frame = 2 + Math.max(0, X.length - 1); // [ ] and commas between rows
  const s: Sums = { lower: frame, upper: frame, exact: true };
  for (let i = 0; i < X.length; i++) {
    const row: unknown = X[i];
    if (!Array.isArray(row)) return undefined;
    addRow(row, s);
  }
  return { lower: s.lower, upper: s.upper, exact: s.exact };
}

/** X read by `readMatrix`: its cells, shape and JSON size bounds. */
export interface MatrixRead extends SizeBounds {
  /** Every cell in row order, null as NaN. */
  values: Float64Array;
  rows: number;
  cols: number;
  /** The bounds are those of X's shape alone (a byte and 26 bytes a cell); else `jsonSizeBounds`'s own. */
  loose: boolean;
}

/** The most characters `JSON.stringify` writes for one number or null (see the top of this file), a sign included. */
const CELL_MAX = 26;

/**
 * X read once for a request (client/prepare.ts): when X is N >= 1 rows (arrays) of the same
 * K >= 1 numbers or nulls (what the request schema's X accepts), its cells in row order (null as
 * NaN) in a new Float64Array (in a SharedArrayBuffer with `shared`), with bounds on its JSON's
 * size and whether JSON writes it back as itself. Else undefined: `jsonSizeBounds` and the schema
 * then read X as they would without it.
 * - When its shape alone keeps its JSON within `maxBytes` (at most 26 bytes a cell), the bounds
 *   are the shape's (`loose`: a byte a cell below).
 * - When its shape alone could pass `maxBytes`, the bounds are `jsonSizeBounds`'s, summed in the
 *   same pass (`addRow`, the same numbers), and the parser reads none of X: at N=100,000, K=10
 *   (integers) `checkRequest` went from 9.74 to 7.62 ms warm, its bounds' own pass and the
 *   schema's read of X spared.
 * - When even a byte a cell passes `maxBytes`, undefined (nothing is copied: `jsonSizeBounds`
 *   then says by how much). So the array made is at most 8 bytes for each byte of the limit.
 *
 * @example
 * readMatrix([[1, null], [2, 3]], { shared: false, maxBytes: 1e6 })!.values; // Float64Array [1, NaN, 2, 3]
 */
export function readMatrix(X: unknown, settings: { shared: boolean; maxBytes: number }): MatrixRead | undefined {
  if (!Array.isArray(X) || X.length === 0) return undefined;
  const rows = X.length;
  const first: unknown = X[0];
  if (!Array.isArray(first) || first.length === 0) return undefined;
  const cols = first.length;
  const cells = rows * cols;
  // [ ], the commas between rows, and each row's [ ] and commas.
  const frame = 2 + (rows - 1) + rows * (2 + (cols - 1));
  if (frame + cells > settings.maxBytes) return undefined;
  const upper = frame + CELL_MAX * cells;
  // The shape could pass the limit: jsonSizeBounds' sums, row by row as it makes them.
  const sums: Sums | undefined = upper > settings.maxBytes ? { lower: 2 + (rows - 1), upper: 2 + (rows - 1), exact: true } : undefined;
  const values = new Float64Array(settings.shared ? new SharedArrayBuffer(8 * cells) : new ArrayBuffer(8 * cells));
  let exact = true;
  for (let i = 0; i < rows; i++) {
    const row: unknown = X[i];
    if (!Array.isArray(row) || row.length !== cols) return undefined;
    const at = i * cols;
    for (let j = 0; j < cols; j++) {
      const v: unknown = row[j];
      if (typeof v === "number") {
        values[at + j] = v;
        // v - v is NaN for NaN and ±Infinity (JSON writes null), and -0 is written 0.
        if (v - v !== 0 || (v === 0 && 1 / v < 0)) exact = false;
      } else if (v === null) values[at + j] = NaN;
      else return undefined;
    }
    if (sums !== undefined) addRow(row, sums);
  }
  if (sums !== undefined) return { values, rows, cols, lower: sums.lower, upper: sums.upper, exact, loose: false };
  return { values, rows, cols, lower: frame + cells, upper, exact, loose: true };
}
