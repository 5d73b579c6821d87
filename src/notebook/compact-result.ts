/**
 * A Prediction's result held compactly: each per-observation column (`relevance`, `similarity`,
 * `info_x`, and the N x T rows of `weights` and `include`) as one `Float64Array`, the rest as
 * given. The plain `Result` is made again when read, the same value (deep-equal, the same
 * `JSON.stringify` text), and kept behind a `WeakRef`, so that a Prediction keeps only the compact
 * form once nobody holds its plain result.
 *
 * A result from JSON holds numbers and null only: null is held as NaN, and a column holding NaN
 * (a result built by hand) is kept as given, so that every value reads back as itself (-0 too).
 * At N=100,000, K=10 a Grid's plain result took 8.7 MiB of heap (one-value rows `[v]` about 56
 * bytes a value); its four columns take 3.1 MiB as Float64Arrays.
 */
import { HeldColumn, typedColumnOf, type TypedColumn } from "../api/columns.js";
import type { Num, Result } from "../client/index.js";

/** Shorter arrays stay as they are (a Float64Array costs more than a short array). */
const MIN_COLUMN = 32;

/** A column held compactly: N numbers, or N rows of `width` numbers (NaN for null). */
type Column = TypedColumn;

export class CompactResult {
  /** The result's members in order: a column, or the value as given (small). */
  readonly #members: ReadonlyArray<[string, Column | unknown]>;
  readonly #columns: ReadonlyMap<string, Column>;
  #made: WeakRef<Result> | undefined;
  /** The last `view`, while something holds it. */
  #view: WeakRef<Result> | undefined;

  private constructor(members: Array<[string, Column | unknown]>, columns: Map<string, Column>) {
    this.#members = members;
    this.#columns = columns;
  }

  /**
   * The compact form of a result (plain data: what JSON reads). Anything else than plain data is
   * kept as given and answered as given; a `HeldColumn` (a result the embedded service read for
   * this reader, `fromOwnV3Columns`) is taken as the column it is.
   *
   * @example
   * const compact = CompactResult.of(result); // compact.result() deep-equals result
   */
  static of(result: Result): CompactResult {
    const members: Array<[string, Column | unknown]> = [];
    const columns = new Map<string, Column>();
    for (const key of Object.keys(result)) {
      const value = (result as unknown as Record<string, unknown>)[key];
      const column = columnOf(value);
      if (column !== undefined) columns.set(key, column);
      members.push([key, column ?? value]);
    }
    return new CompactResult(members, columns);
  }

  /**
   * The plain result: the one made last while something holds it, else made again (every member
   * a new array or object, so that a change to one read never reaches the compact form).
   */
  result(): Result {
    const kept = this.#made?.deref();
    if (kept !== undefined) return kept;
    const out: Record<string, unknown> = {};
    for (const [key, value] of this.#members) {
      const column = this.#columns.get(key);
      out[key] = column !== undefined ? columnValue(column) : plainCopy(value);
    }
    const made = out as unknown as Result;
    this.#made = new WeakRef(made);
    return made;
  }

  /**
   * The result for a reader of a few members (the Prediction's tables and charts): the plain
   * result while something holds it, else an object of the same members whose columns are made
   * when first read (each once), so that a chart of the weights makes no other column.
   *
   * @example
   * summaryTable(compact.view(), context); // makes no per-observation column
   */
  view(): Result {
    const kept = this.#made?.deref() ?? this.#view?.deref();
    if (kept !== undefined) return kept;
    const out: Record<string, unknown> = {};
    const settle = (key: string, value: unknown) => Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
    for (const [key, value] of this.#members) {
      const column = this.#columns.get(key);
      if (column === undefined) out[key] = plainCopy(value);
      else
        Object.defineProperty(out, key, {
          enumerable: true,
          configurable: true,
          get: () => {
            const made = columnValue(column);
            settle(key, made);
            return made;
          },
          set: (v: unknown) => settle(key, v),
        });
    }
    const view = out as unknown as Result;
    this.#view = new WeakRef(view);
    return view;
  }

  /** A member that is not a column (yhat, fit, k, grid_search ...), read without making the result; the compact form's own: do not change it. */
  small<K extends keyof Result>(key: K): Result[K] {
    if (this.#columns.has(key)) return this.result()[key];
    for (const [name, value] of this.#members) if (name === key) return value as Result[K];
    return undefined as Result[K];
  }

  /** The number of rows of a member (an array's length) without making it. */
  rows(key: keyof Result): number | undefined {
    const column = this.#columns.get(key);
    if (column !== undefined) return column.rows;
    const value = this.small(key);
    return Array.isArray(value) ? value.length : undefined;
  }

  /** The first value of every row of an N x T member (`weights`, `include`), as JSON reads it, without making the result. */
  firstOfRows(key: "weights" | "include"): Num[] | undefined {
    const column = this.#columns.get(key);
    if (column === undefined) return (this.small(key) as Num[][] | undefined)?.map((row) => row[0] ?? null);
    const { values, width, rows } = column;
    const out: Num[] = [];
    for (let i = 0; i < rows; i++) {
      const v = values[i * (width ?? 1)];
      out.push(v === v ? v : null);
    }
    return out;
  }
}

/** A column of `value` when it is a long plain array of numbers, or of rows of numbers of one width; undefined otherwise. */
function columnOf(value: unknown): Column | undefined {
  // Read for this reader by the embedded service straight from its worker's typed arrays (fromOwnV3Columns): those numbers.
  if (value instanceof HeldColumn) return value;
  if (!plainArray(value) || value.length < MIN_COLUMN) return undefined;
  // Read by the embedded service from its worker's typed arrays, and unchanged since: those numbers.
  const typed = typedColumnOf(value);
  if (typed !== undefined) return typed;
  const rows = value.length;
  const first = value[0];
  if (!plainArray(first)) {
    const values = new Float64Array(rows);
    for (let i = 0; i < rows; i++) {
      const v = value[i];
      if (v === null) values[i] = NaN;
      else if (typeof v === "number" && v === v) values[i] = v;
      else return undefined;
    }
    return { values, width: undefined, rows };
  }
  const width = first.length;
  if (width === 0) return undefined;
  const values = new Float64Array(rows * width);
  for (let i = 0; i < rows; i++) {
    const row = value[i];
    if (!plainArray(row) || row.length !== width) return undefined;
    for (let j = 0; j < width; j++) {
      const v = row[j];
      if (v === null) values[i * width + j] = NaN;
      else if (typeof v === "number" && v === v) values[i * width + j] = v;
      else return undefined;
    }
  }
  return { values, width, rows };
}

/** The plain value of a column: numbers pushed one by one (an array of doubles, as JSON.parse makes it), NaN as null. */
function columnValue({ values, width, rows }: Column): unknown[] {
  const out: unknown[] = [];
  if (width === undefined) {
    for (let i = 0; i < rows; i++) {
      const v = values[i];
      out.push(v === v ? v : null);
    }
    return out;
  }
  if (width === 1) {
    // One value a row (weights, include of one calibration): a literal, an array of one number from the start (a row grown by push was 4x slower).
    for (let i = 0; i < rows; i++) {
      const v = values[i];
      out.push(v === v ? [v] : [null]);
    }
    return out;
  }
  for (let i = 0; i < rows; i++) {
    const row: Num[] = [];
    for (let j = 0; j < width; j++) {
      const v = values[i * width + j];
      row.push(v === v ? v : null);
    }
    out.push(row);
  }
  return out;
}

/** A new copy of plain data (arrays and plain objects); anything else as it is. */
function plainCopy(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(plainCopy);
  if (value === null || typeof value !== "object") return value;
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) out[key] = plainCopy((value as Record<string, unknown>)[key]);
  return out;
}

function plainArray(value: unknown): value is unknown[] {
  return Array.isArray(value) && Object.getPrototypeOf(value) === Array.prototype;
}
