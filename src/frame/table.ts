/**
 * Tabular inputs in one shape: named columns of raw cells (column-major) and a row label per row.
 *
 * Accepted inputs, recognised by shape (danfo is never imported here, so danfojs and danfojs-node
 * frames, which share one API, are both read):
 *
 * - a danfo DataFrame: an object with `columns: string[]`, `index: (string | number)[]`,
 *   `shape: [rows, cols]` and `values`, an array of rows (`$isSeries` not true);
 * - an array of row objects `[{ Horsepower: 130, Name: "chevrolet chevelle" }, ...]` (columns in
 *   the order they first appear; a key absent from a row is a missing value there);
 * - an object of columns `{ Horsepower: [130, 165], Name: [...] }` (arrays or typed arrays of one
 *   length);
 * - plain arrays `{ y: number[], X: number[][], names?, outcome?, rowLabels? }`.
 */
import { FrameError } from "./errors.js";
import { DANFO } from "./danfo.js";

/** What a danfo DataFrame (danfojs or danfojs-node) exposes that this module reads. */
export interface DataFrameLike {
  readonly columns: ReadonlyArray<string | number>;
  readonly index: ReadonlyArray<string | number>;
  readonly shape: ReadonlyArray<number>;
  readonly values: ReadonlyArray<ReadonlyArray<unknown>>;
}

/** What a danfo Series exposes that this module reads (one row of circumstances, indexed by name). */
export interface SeriesLike {
  readonly index: ReadonlyArray<string | number>;
  readonly values: ReadonlyArray<unknown>;
  readonly $isSeries?: boolean;
}

/** A row object: column name to cell. */
export type RowObject = Readonly<Record<string, unknown>>;

/** An object of columns: column name to an array of cells. */
export type ColumnObject = Readonly<Record<string, ArrayLike<unknown>>>;

/** Outcome and attributes as plain arrays; names default to x1..xK and the outcome to "y". */
export interface PlainArrays {
  readonly y: ArrayLike<number | null | undefined>;
  readonly X: ReadonlyArray<ArrayLike<number | null | undefined>>;
  /** Attribute names, one per column of X. */
  readonly names?: ReadonlyArray<string>;
  /** The outcome's name. */
  readonly outcome?: string;
  /** A label per row (default: the row positions). */
  readonly rowLabels?: ReadonlyArray<string | number>;
}

/** Any accepted data input. */
export type FrameInput = DataFrameLike | ReadonlyArray<RowObject> | ColumnObject | PlainArrays;

export type TableKind = "dataframe" | "rows" | "columns" | "arrays";

/** A normalised table: columns of raw cells, all of length `rows`. */
export interface Table {
  readonly kind: TableKind;
  readonly columns: string[];
  readonly data: Map<string, unknown[]>;
  readonly rows: number;
  /** One label per row: a frame's index, or the row position. */
  readonly labels: string[];
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function isArrayLike(v: unknown): v is ArrayLike<unknown> {
  return Array.isArray(v) || (ArrayBuffer.isView(v) && !(v instanceof DataView));
}

/** True for a danfo DataFrame (danfojs or danfojs-node), recognised by its shape. */
export function isDataFrameLike(v: unknown): v is DataFrameLike {
  if (!isObject(v)) return false;
  const o = v as Record<string, unknown>;
  if (o.$isSeries === true) return false;
  const { columns, index, shape } = o;
  if (!Array.isArray(columns) || !Array.isArray(index) || !Array.isArray(shape) || shape.length !== 2) return false;
  const values = o.values;
  return Array.isArray(values) && (values.length === 0 || Array.isArray(values[0]));
}

/** True for a danfo Series (one-dimensional, with an index). */
export function isSeriesLike(v: unknown): v is SeriesLike {
  if (!isObject(v)) return false;
  const o = v as Record<string, unknown>;
  if (!Array.isArray(o.index) || !Array.isArray(o.values)) return false;
  if (o.$isSeries === true) return true;
  return o.columns === undefined && (o.values as unknown[]).every((c) => !Array.isArray(c));
}

/** True for `{ y: [...], X: [[...], ...] }`. */
export function isPlainArrays(v: unknown): v is PlainArrays {
  if (!isObject(v)) return false;
  const { y, X } = v as Record<string, unknown>;
  return isArrayLike(y) && Array.isArray(X) && X.every((row) => isArrayLike(row));
}

/** True for an object whose every value is an array (or typed array). */
export function isColumnObject(v: unknown): v is ColumnObject {
  if (!isObject(v) || isDataFrameLike(v) || isSeriesLike(v)) return false;
  const values = Object.values(v);
  return values.length > 0 && values.every(isArrayLike);
}

export function describeValue(v: unknown): string {
  if (v === undefined) return "undefined";
  if (v === null) return "null";
  if (typeof v === "string") return `the string ${JSON.stringify(v.length > 30 ? `${v.slice(0, 30)}...` : v)}`;
  if (typeof v === "number" || typeof v === "boolean" || typeof v === "bigint") return `${typeof v} ${String(v)}`;
  if (Array.isArray(v)) return `an array of ${v.length}`;
  if (v instanceof Date) return "a Date";
  return `a value of type ${typeof v}`;
}

function fromDataFrame(df: DataFrameLike): Table {
  const columns = df.columns.map(String);
  const values = df.values;
  const rows = values.length;
  const data = new Map<string, unknown[]>();
  columns.forEach((name, j) => {
    if (data.has(name)) throw new FrameError(`the DataFrame has two columns named "${name}"`, { column: name });
    const col = new Array<unknown>(rows);
    for (let i = 0; i < rows; i++) col[i] = values[i][j];
    data.set(name, col);
  });
  const labels = df.index.length === rows ? df.index.map(String) : Array.from({ length: rows }, (_, i) => String(i));
  return { kind: "dataframe", columns, data, rows, labels };
}

function fromRows(rowsIn: ReadonlyArray<unknown>): Table {
  const columns: string[] = [];
  const seen = new Set<string>();
  rowsIn.forEach((row, i) => {
    if (!isObject(row)) {
      throw new FrameError(`row ${i} is ${describeValue(row)}, expected an object of named values`, { row: String(i) });
    }
    for (const key of Object.keys(row)) {
      if (!seen.has(key)) {
        seen.add(key);
        columns.push(key);
      }
    }
  });
  const rows = rowsIn.length;
  const data = new Map<string, unknown[]>();
  for (const name of columns)
    data.set(
      name,
      rowsIn.map((row) => (row as Record<string, unknown>)[name]),
    );
  return { kind: "rows", columns, data, rows, labels: Array.from({ length: rows }, (_, i) => String(i)) };
}

function fromColumns(obj: ColumnObject): Table {
  const columns = Object.keys(obj);
  const data = new Map<string, unknown[]>();
  let rows = -1;
  let first = "";
  for (const name of columns) {
    const col = Array.from(obj[name]);
    if (rows < 0) {
      rows = col.length;
      first = name;
    } else if (col.length !== rows) {
      throw new FrameError(`column "${name}" has ${col.length} values but column "${first}" has ${rows}; every column needs one value per row`, {
        column: name,
      });
    }
    data.set(name, col);
  }
  rows = Math.max(rows, 0);
  return { kind: "columns", columns, data, rows, labels: Array.from({ length: rows }, (_, i) => String(i)) };
}

/** The shape of plain arrays (one outcome per row, rows of one width, names) and the names used; throws FrameError. */
export interface ArraysShape {
  rows: number;
  outcome: string;
  attributes: string[];
  labels: string[];
}

/**
 * Checks plain arrays' shape and names them (what `fromArrays` checks first, with the same errors).
 * Without row labels in `a`, the labels are `positions` when given (the caller's array of "0" to
 * String(rows - 1)), else a new array of them.
 */
export function arraysShape(a: PlainArrays, positions?: string[]): ArraysShape {
  const rows = a.X.length;
  const yLength = a.y.length;
  if (yLength !== rows) throw new FrameError(`y has ${yLength} values but X has ${rows} rows; give one outcome per row`, { column: a.outcome ?? "y" });
  const width = rows > 0 ? a.X[0].length : (a.names?.length ?? 0);
  a.X.forEach((row, i) => {
    if (row.length !== width) throw new FrameError(`X row ${i} has ${row.length} values but the first row has ${width}`, { row: String(i) });
  });
  if (a.names !== undefined && a.names.length !== width) {
    throw new FrameError(`names has ${a.names.length} entries but X has ${width} columns; give one name per column`);
  }
  const attributes = a.names !== undefined ? a.names.map(String) : Array.from({ length: width }, (_, j) => `x${j + 1}`);
  const outcome = a.outcome ?? "y";
  const seen = new Set([outcome]);
  for (const name of attributes) {
    if (seen.has(name)) throw new FrameError(`the name "${name}" is used twice (names and the outcome must be distinct)`, { column: name });
    seen.add(name);
  }
  if (a.rowLabels !== undefined && a.rowLabels.length !== rows) {
    throw new FrameError(`rowLabels has ${a.rowLabels.length} entries but X has ${rows} rows`);
  }
  const labels = a.rowLabels !== undefined ? a.rowLabels.map(String) : (positions ?? positionLabels(rows));
  return { rows, outcome, attributes, labels };
}

/** Position labels ("0", "1", ...) are kept for up to this many rows, shared by every call (strings are immutable). */
const POSITION_LABELS_KEPT = 1 << 17;
let positionLabelsKept: string[] = [];

/** The labels "0" to String(rows - 1), a new array (its strings made once per process up to POSITION_LABELS_KEPT rows). */
function positionLabels(rows: number): string[] {
  if (rows > POSITION_LABELS_KEPT) return Array.from({ length: rows }, (_, i) => String(i));
  if (positionLabelsKept.length < rows) {
    const kept = positionLabelsKept;
    positionLabelsKept = Array.from({ length: Math.max(rows, Math.min(POSITION_LABELS_KEPT, 2 * kept.length)) }, (_, i) =>
      i < kept.length ? kept[i] : String(i),
    );
  }
  return positionLabelsKept.slice(0, rows);
}

/** The frozen labels "0" to String(rows - 1) that requests of that many rows share, while any holds them. */
let sharedLabels: WeakRef<ReadonlyArray<string>> | undefined;

/** Up to this many rows, the last shared labels are held even when no request holds them (at most 40 KiB). */
const LABELS_HELD_ROWS = 10_000;
let heldLabels: ReadonlyArray<string> | undefined;

/**
 * @internal The labels "0" to String(rows - 1) as one frozen array, the same for every request of
 * `rows` rows while one of them keeps it (a notebook Prediction's context: no array of N labels
 * each), and, for up to 10,000 rows, while they are the last asked for (made again after every
 * collection, they were ~0.03 ms of a warm N=1,000 call whose Predictions are not kept).
 */
export function sharedPositionLabels(rows: number): ReadonlyArray<string> {
  if (heldLabels !== undefined && heldLabels.length === rows) return heldLabels;
  const kept = sharedLabels?.deref();
  if (kept !== undefined && kept.length === rows) return kept;
  const labels = Object.freeze(positionLabels(rows));
  sharedLabels = new WeakRef(labels);
  heldLabels = rows <= LABELS_HELD_ROWS ? labels : undefined;
  return labels;
}

/** Plain arrays become a table whose first column is the outcome; returns the names used. */
function fromArrays(a: PlainArrays): { table: Table; outcome: string; attributes: string[] } {
  const { rows, outcome, attributes, labels } = arraysShape(a);
  const data = new Map<string, unknown[]>();
  data.set(outcome, Array.from(a.y as ArrayLike<unknown>));
  attributes.forEach((name, j) =>
    data.set(
      name,
      a.X.map((row) => row[j]),
    ),
  );
  return { table: { kind: "arrays", columns: [outcome, ...attributes], data, rows, labels }, outcome, attributes };
}

export interface ReadTable {
  table: Table;
  /** For plain arrays: the outcome name and the attribute names they carry. */
  outcome?: string;
  attributes?: string[];
}

/** Reads any accepted input into a Table; throws FrameError for anything else. */
export function readTable(input: unknown, what = "data"): ReadTable {
  if (isDataFrameLike(input)) {
    DANFO.remember(input);
    return { table: fromDataFrame(input) };
  }
  if (Array.isArray(input)) return { table: fromRows(input) };
  if (isPlainArrays(input)) return fromArrays(input);
  if (isColumnObject(input)) return { table: fromColumns(input) };
  throw new FrameError(
    `${what}: expected a danfo DataFrame, an array of row objects, an object of columns or { y, X } arrays, got ${isObject(input) ? "an object that is none of these" : describeValue(input)}`,
  );
}
