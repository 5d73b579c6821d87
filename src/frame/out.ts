/**
 * Data out: results as a frame for the data tool the notebook already uses, and as CSV.
 *
 * A frame here is columns of cells with one label per row (the input's index or labels, carried
 * through from src/frame/table.ts). It leaves as:
 *
 * - a danfo DataFrame, when danfo is loaded in the session. danfo is never imported by this
 *   package; its `DataFrame` class is found structurally, in this order: one given with
 *   `useDataFrames(dfd)`; the class of the last danfo DataFrame read as input (readTable); a
 *   danfojs-node or danfojs module already in Node's require cache (what tslab's CommonJS cells
 *   load); `globalThis.dfd` (the browser build). The row labels become the DataFrame's index.
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
import { createRequire } from "node:module";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
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

/** The part of a danfo module this file uses: the DataFrame class. */
export interface DanfoModule {
  DataFrame: DataFrameClass;
}

/** danfo's DataFrame class (danfojs or danfojs-node): `new DataFrame({ col: [...] }, { index, columns })`. */
export type DataFrameClass = new (data: Record<string, unknown[]>, options?: { index?: Array<string | number>; columns?: string[] }) => object;

/** Which form `toFrame()` returns: "auto" (danfo when loaded, else plain), "danfo" (an error without it) or "columns". */
export type FrameForm = "auto" | "danfo" | "columns";

/** Options of every `toFrame()`. */
export interface ToFrameOptions {
  /** Default "auto". */
  as?: FrameForm;
}

let given: DataFrameClass | null | undefined;
let seen: DataFrameClass | undefined;

/**
 * Tells `toFrame()` which danfo to build DataFrames with; `null`: plain column objects always;
 * `"auto"` (the default): danfo as found in the session.
 *
 * @example
 * import * as dfd from "danfojs-node";
 * rbp.useDataFrames(dfd);
 * const df = p.toFrame(); // a dfd.DataFrame indexed by the input's labels
 */
export function useDataFrames(danfo: DanfoModule | null | "auto"): void {
  if (danfo === null || danfo === "auto") {
    given = danfo === null ? null : undefined;
    return;
  }
  if (typeof danfo?.DataFrame !== "function") throw new TypeError("useDataFrames: expected a danfo module (an object with a DataFrame class), or null");
  given = danfo.DataFrame;
}

/** Called by readTable with each DataFrame read as input: its class is danfo's, loaded in the session. */
export function rememberDataFrame(frame: object): void {
  const ctor = (frame as { constructor?: unknown }).constructor;
  if (typeof ctor === "function" && ctor !== Object && ctor.name === "DataFrame") seen = ctor as DataFrameClass;
}

/** The danfo DataFrame class loaded in this session, if any (never loads danfo itself). */
export function sessionDataFrame(): DataFrameClass | undefined {
  if (given === null) return undefined;
  if (given !== undefined) return given;
  if (seen !== undefined) return seen;
  const fromCache = fromRequireCache();
  if (fromCache !== undefined) return fromCache;
  const global = (globalThis as { dfd?: { DataFrame?: unknown } }).dfd;
  return typeof global?.DataFrame === "function" ? (global.DataFrame as DataFrameClass) : undefined;
}

/** danfojs-node or danfojs, when a CommonJS require (a tslab cell) has already loaded it from the working folder. */
function fromRequireCache(): DataFrameClass | undefined {
  let require: NodeJS.Require;
  try {
    require = createRequire(join(process.cwd(), "noop.js"));
  } catch {
    return undefined;
  }
  for (const name of ["danfojs-node", "danfojs"]) {
    let path: string;
    try {
      path = require.resolve(name);
    } catch {
      continue;
    }
    const loaded = require.cache[path]?.exports as { DataFrame?: unknown } | undefined;
    if (typeof loaded?.DataFrame === "function") return loaded.DataFrame as DataFrameClass;
  }
  return undefined;
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
