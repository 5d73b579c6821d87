/**
 * The typed column a plain array of a result was read from, so that a reader holding results
 * compactly (the notebook's Prediction) can take the numbers without reading them into a new
 * typed array. The service's in-process lane reads a result its worker posted as typed arrays
 * (`readDecoded`) into the plain arrays a result is made of, and notes each long one here; the
 * reader checks that the array still holds those numbers before it takes them.
 *
 * At N=100,000, K=10 a Grid's four per-observation columns took 8-39 ms of the notebook's thread
 * to copy into new typed arrays (their allocation, mostly), after the engine.
 */

/** A column as typed numbers: N numbers (`width` undefined) or N rows of `width` numbers; NaN for null. */
export interface TypedColumn {
  values: Float64Array;
  width: number | undefined;
  rows: number;
}

const sources = new WeakMap<readonly unknown[], TypedColumn>();

/** Shorter arrays are not noted: a reader keeps them as they are. */
const NOTED_FROM = 32;

/**
 * Notes that `plain` was read from `values` (NaN read as null): N numbers, or N rows of `width`.
 * `values` must be its own (nothing else writes it) and cover its whole buffer.
 *
 * @example
 * noteColumn(list, values, undefined); // list[i] === values[i] (null for NaN)
 */
export function noteColumn(plain: readonly unknown[], values: Float64Array, width: number | undefined): void {
  if (plain.length < NOTED_FROM || values.byteOffset !== 0 || values.byteLength !== values.buffer.byteLength) return;
  if (values.length !== plain.length * (width ?? 1)) return;
  sources.set(plain, { values, width, rows: plain.length });
}

/**
 * The typed column `plain` was read from, when it still holds those numbers (every value checked:
 * a change to the array, or to one of its rows, answers undefined); the column is then the
 * caller's, to keep and not to write.
 *
 * @example
 * const column = typedColumnOf(result.relevance); // column.values[i] is result.relevance[i], NaN for null
 */
export function typedColumnOf(plain: readonly unknown[]): TypedColumn | undefined {
  const column = sources.get(plain);
  if (column === undefined || plain.length !== column.rows) return undefined;
  const { values, width } = column;
  if (width === undefined) {
    for (let i = 0; i < plain.length; i++) if (!same(plain[i], values[i])) return undefined;
    return column;
  }
  for (let i = 0; i < plain.length; i++) {
    const row = plain[i];
    if (!Array.isArray(row) || row.length !== width) return undefined;
    for (let j = 0; j < width; j++) if (!same(row[j], values[i * width + j])) return undefined;
  }
  return column;
}

/** Whether a plain value is what a typed value reads as: the same number (-0 apart from 0), or null for NaN. */
function same(plain: unknown, typed: number): boolean {
  if (typed !== typed) return plain === null;
  return typeof plain === "number" && Object.is(plain, typed);
}
