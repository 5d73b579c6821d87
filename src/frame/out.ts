/**
 * Data out: results as a frame for the data tool the notebook already uses, and as CSV.
 *
 * A frame here is columns of cells with one label per row (the input's index or labels, carried
 * through from src/frame/table.ts). It leaves as:
 *
 * - a danfo DataFrame, when danfo is loaded in the session (found as ./danfo.ts says). The row
 *   labels become the DataFrame's index.
 * - plain column objects otherwise: `{ label: [...], yhat: [...], ... }`, the first key holding
 *   the row labels (named after the input's index column when there was one, else "label"). Read
 *   back with `toRequest(frame, { index: "label", ... })`.
 *
 * CSV: RFC 4180 quoting, the label column first, missing values as empty cells, numbers in full
 * precision (JavaScript's shortest round-trip form). A text cell (a label, a column name, a text
 * value) that a spreadsheet would run as a formula, one beginning with =, +, -, @, a tab or a
 * carriage return, is written with a leading ' (OWASP's advice for CSV injection), which the
 * spreadsheet shows as text; numbers are never altered (-1.5 stays -1.5), nor a text cell that
 * is a plain decimal number ("-1.5", read back as that number, runs nothing).
 */
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { sessionDataFrame } from "./danfo.js";
import type { ColumnObject, DataFrameLike } from "./table.js";

/** A cell of an output frame. */
export type OutCell = number | string | boolean | null;

/** Columns of cells with a label per row: what every `toFrame()` is built from. */
export interface FrameColumns {
  /** The name of the label column (plain objects and CSV). */
  indexName: string;
  /** One label per row. */
  index: string[];
  /** Column names in order. */
  columns: string[];
  /** One array of cells per column, each as long as `index`. */
  data: Record<string, OutCell[]>;
}

/** Which form `toFrame()` returns: "auto" (danfo when loaded, else plain), "danfo" (an error without it) or "columns". */
export type FrameForm = "auto" | "danfo" | "columns";

/** Options of every `toFrame()`. */
export interface ToFrameOptions {
  /** Default "auto". */
  as?: FrameForm;
}

/** The frame in the form asked for: a danfo DataFrame indexed by the labels, or plain column objects. */
export function outputFrame(frame: FrameColumns, options: ToFrameOptions = {}): DataFrameLike | ColumnObject {
  const form = options.as ?? "auto";
  if (form !== "auto" && form !== "danfo" && form !== "columns") throw new TypeError(`toFrame: "as" is "auto", "danfo" or "columns", got ${String(form)}`);
  const DataFrame = form === "columns" ? undefined : sessionDataFrame();
  if (form === "danfo" && DataFrame === undefined) {
    throw new Error('toFrame({ as: "danfo" }): danfo is not loaded in this session; import danfojs-node (or danfojs) and pass it to useDataFrames(dfd)');
  }
  if (DataFrame !== undefined) {
    const data: Record<string, unknown[]> = {};
    for (const name of frame.columns) data[name] = frame.data[name].map((v) => (v === null ? null : v));
    return new DataFrame(data, { index: [...frame.index], columns: [...frame.columns] }) as DataFrameLike;
  }
  const out: Record<string, OutCell[]> = { [frame.indexName]: [...frame.index] };
  for (const name of frame.columns) out[name === frame.indexName ? `${name}_` : name] = [...frame.data[name]];
  return out;
}

/** What a spreadsheet runs as a formula when a cell begins with it (OWASP, CSV injection). */
const FORMULA_START = /^[=+\-@\t\r]/;
/** A plain decimal number written as text: a spreadsheet reads it as that number. */
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

function csvCell(v: OutCell | undefined): string {
  if (v === null || v === undefined || (typeof v === "number" && Number.isNaN(v))) return "";
  let s = typeof v === "number" ? String(v) : typeof v === "boolean" ? (v ? "true" : "false") : v;
  if (typeof v === "string" && FORMULA_START.test(s) && !DECIMAL.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) || s !== s.trim() ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The frame as CSV text (label column first). */
export function frameCsv(frame: FrameColumns): string {
  const lines = [[frame.indexName, ...frame.columns].map(csvCell).join(",")];
  frame.index.forEach((label, i) => lines.push([label, ...frame.columns.map((c) => frame.data[c][i])].map(csvCell).join(",")));
  return lines.join("\r\n") + "\r\n";
}

/** Writes the frame as CSV to `path` (folders created as needed); returns the absolute path. */
export async function writeFrameCsv(frame: FrameColumns, path: string): Promise<string> {
  const target = resolve(path);
  await mkdir(dirname(target), { recursive: true });
  await writeFile(target, frameCsv(frame), "utf8");
  return target;
}
