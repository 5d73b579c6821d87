/**
 * `toRequest(data, spec)`: data in any accepted shape (see table.ts) and a cell's choice of
 * columns become plain arrays y, X and theta, with the attribute names, ready for a request.
 *
 * ```ts
 * toRequest(cars, { y: "Miles_per_Gallon", theta: "last" })
 * // X defaults to every other numeric column; the string columns Name and Origin are skipped.
 * ```
 *
 * - Missing values (null, NaN, undefined) in X become null; rows whose outcome is missing are
 *   dropped and `dropped`/`notes` say how many.
 * - A requested column that is not numeric is an error naming it (FrameError). For the default X,
 *   columns that are not numeric (or wholly missing) are skipped with a note.
 * - theta:
 *   - `"last"`: the last row of X as sent (what a Grid does without theta); it stays in the data.
 *   - a row position or a list of them (0-based positions in the input, negative from the end;
 *     a row whose outcome is missing may be used, which predicts that outcome): those rows'
 *     attributes, the rows staying in the data;
 *   - a DataFrame, row objects, an object of columns, one row object or a danfo Series of new
 *     circumstances: the X columns are picked by name (a missing column is an error naming it).
 *   Every theta value must be a finite number: a missing one is an error naming the row and column.
 *   One row of circumstances gives `theta: number[]`, several give `number[][]` (an experiment).
 */
import { checkColumn, cellKind, notNumericError, toCell } from "./cells.js";
import { FrameError } from "./errors.js";
import { keepPrint, newPrint, printOf, printRow } from "./kept.js";
import {
  arraysShape,
  describeValue,
  isDataFrameLike,
  isPlainArrays,
  isSeriesLike,
  readTable,
  sharedPositionLabels,
  type DataFrameLike,
  type FrameInput,
  type RowObject,
  type ColumnObject,
  type SeriesLike,
  type Table,
} from "./table.js";

/** New circumstances given as data: a DataFrame, row objects, an object of columns, one row object or a Series. */
export type ThetaData = DataFrameLike | ReadonlyArray<RowObject> | ColumnObject | RowObject | SeriesLike;

/** Which circumstances to predict for. */
export type ThetaSpec = "last" | number | ReadonlyArray<number> | ThetaData;

/** A notebook cell's choice of columns. */
export interface FrameSpec {
  /** The outcome column. Required for tables; for plain arrays it names the outcome (default "y"). */
  y?: string;
  /** The attribute columns (default: every other numeric column; for plain arrays, every column of X). */
  X?: string | ReadonlyArray<string>;
  /** The circumstances (none: the request carries no theta, as a Grid may). */
  theta?: ThetaSpec;
  /**
   * A column whose values label the rows (a date, a name), as a DataFrame's index does: it labels
   * every table, chart and `toFrame()` row, and is never an attribute. Circumstances given as data
   * take their labels from the same column when they have it.
   */
  index?: string;
}

/** Plain arrays for a request, with the names that label every table and chart. */
export interface FrameRequest {
  /** Outcomes of the rows kept (finite numbers). */
  y: number[];
  /** Attributes of the rows kept, N x K; null is a missing value. */
  X: (number | null)[][];
  /** One row of circumstances (K) or several (an experiment); absent when none was asked for. */
  theta?: number[] | number[][];
  /** Attribute names, one per column of X. */
  attributes: string[];
  /** The outcome's name. */
  outcome: string;
  /** A label per row kept: the frame's index, or the row's position in the input. */
  rowLabels: string[];
  /** A label per theta row (a row label for positions and "last", the index of a frame of new circumstances). */
  thetaLabels?: string[];
  /** The name of the label column (spec.index), when one was named. */
  indexName?: string;
  /** How many rows were dropped because their outcome was missing. */
  dropped: number;
  /** What was done to the data, in words (dropped rows, skipped columns). */
  notes: string[];
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;
}

function isRowObject(v: unknown): v is RowObject {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !ArrayBuffer.isView(v);
}

/** Turns data and a cell's column choice into y, X, theta and names. Throws FrameError. */
export function toRequest(data: FrameInput, spec: FrameSpec = {}): FrameRequest {
  return plainRequest(data, spec, false) ?? tableRequest(data, spec);
}

/**
 * @internal `toRequest` for a notebook call: plain arrays' rows of plain numbers are kept, not
 * copied (kept.ts: the request's fingerprint says when the caller changes them after the call).
 */
export function toKeptRequest(data: FrameInput, spec: FrameSpec = {}): FrameRequest {
  return plainRequest(data, spec, true) ?? tableRequest(data, spec);
}

/** `toRequest` through the table (readTable): every input but plain arrays read row by row. */
function tableRequest(data: FrameInput, spec: FrameSpec): FrameRequest {
  const read = readTable(data);
  const table = spec.index !== undefined ? labelledBy(read.table, spec.index, "data") : read.table;
  const notes: string[] = [];

  // The outcome.
  const outcome = read.outcome ?? spec.y;
  if (read.outcome !== undefined && spec.y !== undefined && spec.y !== read.outcome) {
    throw new FrameError(`spec.y is "${spec.y}" but the arrays name their outcome "${read.outcome}"`, { column: spec.y });
  }
  if (outcome === undefined) {
    throw new FrameError(`name the outcome column, for example { y: "${table.columns[0] ?? "outcome"}" }; the columns are ${listNames(table.columns)}`);
  }
  const yCells = column(table, outcome, "outcome");
  const yCheck = checkColumn(yCells);
  if (!yCheck.numeric) throw notNumericError(table, outcome, "outcome", yCheck.bad!);

  // The attributes.
  let attributes: string[];
  if (spec.X !== undefined) {
    attributes = typeof spec.X === "string" ? [spec.X] : [...spec.X];
    if (attributes.length === 0) throw new FrameError("X names no column; name at least one attribute or leave X out to use every numeric column");
    const seen = new Set<string>();
    for (const name of attributes) {
      if (typeof name !== "string") throw new FrameError(`X: expected column names, got ${describeValue(name)}`);
      if (name === outcome) throw new FrameError(`"${name}" is the outcome and cannot also be an attribute`, { column: name });
      if (name === spec.index) throw new FrameError(`"${name}" is the index (the row labels) and cannot also be an attribute`, { column: name });
      if (seen.has(name)) throw new FrameError(`X names "${name}" twice`, { column: name });
      seen.add(name);
      const check = checkColumn(column(table, name, "attribute"));
      if (!check.numeric) throw notNumericError(table, name, "attribute", check.bad!);
    }
  } else if (read.attributes !== undefined) {
    attributes = read.attributes;
    for (const name of attributes) {
      const check = checkColumn(table.data.get(name)!);
      if (!check.numeric) throw notNumericError(table, name, "attribute", check.bad!);
    }
  } else {
    attributes = [];
    const skipped: string[] = [];
    const empty: string[] = [];
    for (const name of table.columns) {
      if (name === outcome || name === spec.index) continue;
      const check = checkColumn(table.data.get(name)!);
      if (!check.numeric) skipped.push(name);
      else if (check.empty) empty.push(name);
      else attributes.push(name);
    }
    if (skipped.length > 0) notes.push(`skipped ${skipped.length === 1 ? "a column that is" : "columns that are"} not numeric: ${skipped.join(", ")}`);
    if (empty.length > 0) notes.push(`skipped ${empty.length === 1 ? "a column" : "columns"} with no values: ${empty.join(", ")}`);
    if (attributes.length === 0) {
      throw new FrameError(`no numeric attribute column besides the outcome "${outcome}"; the columns are ${listNames(table.columns)}`);
    }
  }

  // The rows kept: those with an outcome.
  const xCols = attributes.map((name) => table.data.get(name)!);
  const kept: number[] = [];
  for (let i = 0; i < table.rows; i++) if (cellKind(yCells[i]) === "number") kept.push(i);
  const dropped = table.rows - kept.length;
  if (dropped > 0) notes.push(`dropped ${plural(dropped, "row")} with no ${outcome}`);
  const y = kept.map((i) => yCells[i] as number);
  const X = kept.map((i) => xCols.map((col) => toCell(col[i])));
  const rowLabels = kept.map((i) => table.labels[i]);

  const out: FrameRequest = { y, X, attributes, outcome, rowLabels, dropped, notes };
  if (spec.index !== undefined) out.indexName = spec.index;
  if (spec.theta !== undefined) {
    const theta = readTheta(spec.theta, table, kept, attributes, spec.index);
    out.theta = theta.rows.length === 1 ? theta.rows[0] : theta.rows;
    out.thetaLabels = theta.labels;
  }
  return out;
}

/**
 * `toRequest` of plain arrays `{ y, X }` with every column (no X, index or theta but "last" in the
 * spec), read row by row: the same request without building the table's columns and reading the
 * rows back from them (at N=100,000, K=10 that was most of a notebook call's 60 ms on the main
 * thread before the engine). Undefined, for the general path to read and to report, when the data
 * are other than that or a cell is neither a finite number nor missing. With `keep`, a row of
 * finite numbers that is a plain array is the caller's own (not copied), and so is X itself
 * when every row is and none is dropped; the request's fingerprint is kept (kept.ts).
 */
function plainRequest(data: FrameInput, spec: FrameSpec, keep: boolean): FrameRequest | undefined {
  if (isDataFrameLike(data) || Array.isArray(data) || !isPlainArrays(data)) return undefined;
  if (spec.X !== undefined || spec.index !== undefined || (spec.theta !== undefined && spec.theta !== "last")) return undefined;
  // The positions as labels (no labels given) for a kept request: the frozen array that the
  // notebook's requests of N rows share, copied only when a row is dropped.
  const shared = keep && data.rowLabels === undefined ? (sharedPositionLabels(data.X.length) as string[]) : undefined;
  const { rows, outcome, attributes, labels } = arraysShape(data, shared);
  if (spec.y !== undefined && spec.y !== outcome) return undefined;
  const K = attributes.length;
  const yIn = data.y;
  // X sized once (no spare capacity kept by a Prediction), trimmed when rows are dropped. y grows
  // by push and is copied at its size at the end: an array sized first has holes to V8 ("holey
  // doubles"), whose cells every later pass (the size bounds, the exactness check) boxed one by
  // one: 32 KB of garbage at N=1,000 per pass, and 320 KB for X's rows when a pass saw both kinds
  // at one site.
  const yGrown: number[] = [];
  const X = new Array<(number | null)[]>(rows);
  // Labels of the rows kept: `labels` itself until a row is dropped.
  let rowLabels: string[] | undefined;
  let n = 0;
  let borrowed = 0;
  // The fingerprint of X as kept (kept.ts), each row as it is read: no second pass over X.
  const print = keep ? newPrint() : undefined;
  for (let i = 0; i < rows; i++) {
    const outcomeValue = yIn[i];
    const hasOutcome = typeof outcomeValue === "number" && outcomeValue - outcomeValue === 0;
    if (!hasOutcome && !(outcomeValue === null || outcomeValue === undefined || Number.isNaN(outcomeValue))) return undefined;
    const row = data.X[i];
    let whole = true;
    for (let j = 0; j < K; j++) {
      const v = row[j];
      // A finite number (v - v is NaN for NaN and the infinities), or a missing value (null below).
      if (!(typeof v === "number" && v - v === 0)) {
        if (v === null || v === undefined || Number.isNaN(v)) whole = false;
        else return undefined;
      }
    }
    if (!hasOutcome) {
      rowLabels ??= labels.slice(0, n);
      continue;
    }
    yGrown.push(outcomeValue);
    // A row of numbers only is copied whole (an array of doubles, read faster by every later pass than one built cell by cell).
    const plainRow = whole && Array.isArray(row) && Object.getPrototypeOf(row) === Array.prototype;
    if (plainRow && keep) borrowed++;
    X[n] = plainRow ? (keep ? (row as number[]) : row.slice()) : whole ? Array.from(row as ArrayLike<number>) : missingAsNull(row, K);
    if (print !== undefined) printRow(print, X[n]);
    if (rowLabels !== undefined) rowLabels.push(labels[i]);
    n++;
  }
  X.length = n;
  const y = yGrown.slice();
  const dropped = rows - n;
  const notes = dropped > 0 ? [`dropped ${plural(dropped, "row")} with no ${outcome}`] : [];
  // Every row the caller's and none dropped: X is the caller's too (no array of N rows kept for it).
  const callers = borrowed === rows && Array.isArray(data.X) && Object.getPrototypeOf(data.X) === Array.prototype;
  const labelled = rowLabels ?? labels;
  const out: FrameRequest = { y, X: callers ? (data.X as (number | null)[][]) : X, attributes, outcome, rowLabels: labelled, dropped, notes };
  if (borrowed > 0) keepPrint(out, printOf(print!, n));
  if (spec.theta === "last") {
    const last = X[X.length - 1];
    // No row, or a missing value in the last: the general path says so.
    if (last === undefined || last.some((v) => v === null)) return undefined;
    out.theta = last.slice() as number[];
    out.thetaLabels = [labelled[labelled.length - 1]];
  }
  return out;
}

/** A row's K cells with every missing value (null, undefined, NaN) as null. */
function missingAsNull(row: ArrayLike<unknown>, K: number): (number | null)[] {
  const cells = new Array<number | null>(K);
  for (let j = 0; j < K; j++) {
    const v = row[j];
    cells[j] = typeof v === "number" && v - v === 0 ? v : null;
  }
  return cells;
}

function listNames(names: ReadonlyArray<string>): string {
  if (names.length === 0) return "(none)";
  const shown = names.slice(0, 20).map((n) => `"${n}"`);
  return names.length > 20 ? `${shown.join(", ")} and ${names.length - 20} more` : shown.join(", ");
}

function column(table: Table, name: string, role: string): unknown[] {
  const cells = table.data.get(name);
  if (cells === undefined) {
    throw new FrameError(`${role} column "${name}" is not in the data; the columns are ${listNames(table.columns)}`, { column: name });
  }
  return cells;
}

interface ThetaRows {
  rows: number[][];
  labels: string[];
}

/** One theta row from raw cells, every value a finite number. */
function thetaRow(cells: ReadonlyArray<unknown>, attributes: ReadonlyArray<string>, label: string, source: string): number[] {
  return cells.map((v, j) => {
    const kind = cellKind(v);
    if (kind === "number") return v as number;
    const name = attributes[j];
    if (kind === "missing") {
      throw new FrameError(`theta ${source} ${label} has no value for "${name}"; every circumstance needs a number`, { column: name, row: label });
    }
    throw new FrameError(`theta ${source} ${label}, column "${name}" holds ${describeValue(v)}; expected a finite number`, { column: name, row: label });
  });
}

/** The table with its row labels taken from column `name` (a date, a name), as a frame's index. */
function labelledBy(table: Table, name: string, what: string): Table {
  if (typeof name !== "string") throw new FrameError(`index: expected a column name, got ${describeValue(name)}`);
  const cells = table.data.get(name);
  if (cells === undefined) {
    throw new FrameError(`index column "${name}" is not in the ${what}; the columns are ${listNames(table.columns)}`, { column: name });
  }
  const labels = cells.map((v, i) => {
    if (v === null || v === undefined || (typeof v === "number" && Number.isNaN(v))) {
      throw new FrameError(`index column "${name}" has no label at row ${table.labels[i]}; every row needs one`, { column: name, row: table.labels[i] });
    }
    return v instanceof Date ? v.toISOString() : String(v);
  });
  return { ...table, labels };
}

function readTheta(theta: ThetaSpec, table: Table, kept: ReadonlyArray<number>, attributes: ReadonlyArray<string>, index?: string): ThetaRows {
  const cellsAt = (i: number): unknown[] => attributes.map((name) => table.data.get(name)![i]);
  if (theta === "last") {
    if (kept.length === 0) throw new FrameError('theta "last": there is no row with an outcome');
    const i = kept[kept.length - 1];
    const label = table.labels[i];
    return { rows: [thetaRow(cellsAt(i), attributes, label, '"last", row')], labels: [label] };
  }
  if (typeof theta === "string") throw new FrameError(`theta: expected "last", row positions or data of new circumstances, got ${describeValue(theta)}`);
  if (typeof theta === "number" || (Array.isArray(theta) && theta.length > 0 && theta.every((p) => typeof p === "number"))) {
    const positions = typeof theta === "number" ? [theta] : (theta as ReadonlyArray<number>);
    const rows: number[][] = [];
    const labels: string[] = [];
    for (const p of positions) {
      if (!Number.isInteger(p) || p >= table.rows || p < -table.rows) {
        throw new FrameError(`theta: row position ${p} is not a row of the data (0 to ${table.rows - 1}, or negative from the end)`);
      }
      const i = p < 0 ? table.rows + p : p;
      const label = table.labels[i];
      rows.push(thetaRow(cellsAt(i), attributes, label, "row"));
      labels.push(label);
    }
    return { rows, labels };
  }
  if (Array.isArray(theta) && theta.length === 0) throw new FrameError("theta: the list is empty; give row positions or rows of circumstances");

  // New circumstances as data.
  let source: Table;
  let single = false;
  if (isSeriesLike(theta) && !isDataFrameLike(theta)) {
    const s = theta as SeriesLike;
    const row: Record<string, unknown> = {};
    s.index.forEach((name, j) => (row[String(name)] = s.values[j]));
    source = readTable([row], "theta").table;
    single = true;
  } else if (isRowObject(theta) && !isDataFrameLike(theta) && Object.values(theta).every((v) => !Array.isArray(v) && !ArrayBuffer.isView(v))) {
    source = readTable([theta], "theta").table;
    single = true;
  } else {
    source = readTable(theta, "theta").table;
  }
  if (source.rows === 0) throw new FrameError("theta: the circumstances have no rows");
  if (index !== undefined && source.data.has(index)) {
    source = labelledBy(source, index, "circumstances");
    single = false;
  }
  const missing = attributes.filter((name) => !source.data.has(name));
  if (missing.length > 0) {
    throw new FrameError(`theta has no column ${missing.map((n) => `"${n}"`).join(", ")}; the circumstances need every attribute (${attributes.join(", ")})`, {
      column: missing[0],
    });
  }
  const rows: number[][] = [];
  for (let i = 0; i < source.rows; i++) {
    const cells = attributes.map((name) => source.data.get(name)![i]);
    rows.push(thetaRow(cells, attributes, source.labels[i], "row"));
  }
  return { rows, labels: single ? ["theta"] : source.labels };
}
