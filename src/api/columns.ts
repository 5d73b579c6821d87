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

/**
 * A long column of a result held as typed numbers in the place of its plain array, for a reader
 * that keeps results compactly (the notebook's Prediction): the embedded service's in-process
 * lane reads such a result straight from its worker's typed arrays (`readDecoded`'s columns
 * form), without making the plain arrays that the reader would only read back into typed ones.
 * A result holding one is never handed to other code: the reader takes the column as its own.
 *
 * A warm N=1,000 K=10 Grid made, then dropped, about 280 KB of plain arrays a call that way.
 */
export class HeldColumn implements TypedColumn {
  readonly values: Float64Array;
  readonly width: number | undefined;
  readonly rows: number;

  constructor(values: Float64Array, width: number | undefined, rows: number) {
    this.values = values;
    this.width = width;
    this.rows = rows;
  }

  /**
   * The column of `values` (N numbers, or N rows of `width`), when a reader may keep it: long,
   * its own buffer (nothing else writes it) and of the right length; undefined otherwise.
   *
   * @example
   * const column = HeldColumn.of(values, undefined) ?? numberList(values);
   */
  static of(values: Float64Array, width: number | undefined): HeldColumn | undefined {
    const rows = width === undefined ? values.length : values.length / width;
    if (rows < NOTED_FROM || !Number.isInteger(rows) || values.byteOffset !== 0 || values.byteLength !== values.buffer.byteLength) return undefined;
    return new HeldColumn(values, width, rows);
  }
}

const columnReaders = new WeakSet<object>();

/**
 * Marks the options of a wait (or a read) whose caller holds the result compactly: the
 * in-process wire may then answer a result whose long columns are `HeldColumn`s. Only the
 * notebook's own calls are marked; every other caller gets plain arrays.
 *
 * @example
 * const result = await client.wait(receipt, readsColumns({ signal })); // new Prediction({ result, ... })
 */
export function readsColumns<T extends object>(options: T): T {
  columnReaders.add(options);
  return options;
}

/** Whether `options` were marked by `readsColumns`. */
export function wantsColumns(options: object | undefined): boolean {
  return options !== undefined && columnReaders.has(options);
}
