/**
 * Cells: what counts as a number, as missing, and as not numeric.
 *
 * - A finite JS number is a value.
 * - null, undefined and NaN are missing values.
 * - Everything else is not numeric: strings (numeric strings too, such as "130", so that a CSV
 *   read without type conversion fails loudly instead of being half converted), booleans, dates,
 *   objects. Infinity and -Infinity are errors of their own (the service rejects them).
 */
import { FrameError } from "./errors.js";
import { describeValue, type Table } from "./table.js";

export type CellKind = "number" | "missing" | "infinite" | "other";

export function cellKind(v: unknown): CellKind {
  if (v === null || v === undefined) return "missing";
  if (typeof v === "number") {
    if (Number.isNaN(v)) return "missing";
    return Number.isFinite(v) ? "number" : "infinite";
  }
  return "other";
}

export interface ColumnCheck {
  /** Every cell is a finite number or missing. */
  numeric: boolean;
  /** Every cell is missing. */
  empty: boolean;
  /** The first cell that is not numeric (its row position), when not numeric. */
  bad?: { row: number; value: unknown; kind: CellKind };
}

export function checkColumn(cells: ReadonlyArray<unknown>): ColumnCheck {
  let empty = true;
  for (let i = 0; i < cells.length; i++) {
    const k = cellKind(cells[i]);
    if (k === "number") empty = false;
    else if (k !== "missing") return { numeric: false, empty: false, bad: { row: i, value: cells[i], kind: k } };
  }
  return { numeric: true, empty };
}

/** The error for a column that must be numeric and is not. */
export function notNumericError(table: Table, column: string, role: string, bad: { row: number; value: unknown; kind: CellKind }): FrameError {
  const label = table.labels[bad.row];
  const hint =
    bad.kind === "infinite"
      ? "infinities are not accepted; use null for a missing value"
      : typeof bad.value === "string" && bad.value.trim() !== "" && Number.isFinite(Number(bad.value))
        ? "numbers given as strings are not converted: convert the column with Number(...), or read the file with type conversion (danfo readCSV does)"
        : "only numbers, and null, NaN or undefined for a missing value, are accepted";
  const what = bad.kind === "infinite" ? "not finite" : "not numeric";
  return new FrameError(`${role} column "${column}" is ${what}: row ${label} holds ${describeValue(bad.value)}; ${hint}`, {
    column,
    row: label,
  });
}

/** A cell as sent: a finite number or null. Call only on a checked column. */
export function toCell(v: unknown): number | null {
  return cellKind(v) === "number" ? (v as number) : null;
}
