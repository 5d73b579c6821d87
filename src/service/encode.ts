/**
 * Results as served: the engine's result object as JSON, numbers rounded to `decimals` places
 * (the hosted service publishes 6; null keeps full precision), NaN and infinities as null.
 * Runs in the worker threads, so the main thread only moves strings.
 */
import { HeldColumn, noteColumn } from "../api/columns.js";

export type Rounder = (value: number) => number | null;

export function rounder(decimals: number | null): Rounder {
  if (decimals === null) return (v) => (Number.isFinite(v) ? v : null);
  const factor = 10 ** decimals;
  const limit = 2 ** 52;
  return (v) => {
    if (!Number.isFinite(v)) return null;
    if (Number.isInteger(v)) return v;
    const scaled = Math.abs(v) * factor;
    if (scaled >= limit) return v;
    const r = Math.round(scaled) / factor;
    return v < 0 && r !== 0 ? -r : r;
  };
}

/**
 * JSON text of `value` with every number passed through `round`: the text of
 * `JSON.stringify(value, (k, v) => (typeof v === "number" ? round(v) : v))`, byte for byte.
 *
 * Plain data (the engine's results: objects, arrays, numbers, strings, booleans, null) is written
 * without a replacer, which made V8 call back into JavaScript for every value and format every
 * number with its shortest round-trip algorithm (120 ms of a 4 MiB N=100,000 Grid result in a
 * worker, after the engine). Arrays of numbers (and arrays of such arrays) rounded to 0 to 6
 * decimals are written digit by digit from the rounded integer (`NumberText`); other arrays of
 * numbers are rounded into a new array that the native stringify writes. Anything else (a
 * `toJSON`, a class instance, a typed array, a cycle) is written by the replacer form.
 *
 * @example
 * encodeJson({ yhat: [1.23456789, NaN] }, 6); // '{"yhat":[1.234568,null]}'
 */
export function encodeJson(value: unknown, decimals: number | null): string {
  return encodeResult(value, decimals, false).json;
}

/**
 * A result as JSON text, the text of `encodeJson`, and, asked for `decoded`, the same value as
 * `JSON.parse` reads that text, in a form a worker can post cheaply: arrays of numbers as
 * `Float64Array`s (NaN for null) and arrays of such arrays as a `Map` of their numbers and row
 * widths, whose buffers are transferred (`decodedTransfer`), not copied. `readDecoded` turns it
 * into the parsed value. `decoded` is undefined for what is not plain data.
 *
 * @example
 * const { json, decoded } = encodeResult(result, 6, true); // readDecoded(decoded) deep-equals JSON.parse(json)
 */
export function encodeResult(value: unknown, decimals: number | null, decode: boolean): { json: string; decoded?: Decoded } {
  const round = rounder(decimals);
  const writer: Writer = { round, out: [], digits: NumberText.for(decimals), decode, text: true };
  const node = writePlain(value, writer, 0);
  if (node !== NOT_PLAIN) return { json: writer.out.join(""), ...(writer.decode ? { decoded: node as Decoded } : {}) };
  return { json: JSON.stringify(value, (_key, v: unknown) => (typeof v === "number" ? round(v) : v)) };
}

/**
 * The decoded form of `encodeResult(value, decimals, true)` without writing its text (a fraction
 * of the time): what a worker posts first, so that a reader in the service's process has the
 * result while the text is written. Undefined when `encodeResult` would give no decoded form.
 *
 * @example
 * const decoded = decodeResult(result, 6); // readDecoded(decoded) deep-equals JSON.parse(encodeJson(result, 6))
 */
export function decodeResult(value: unknown, decimals: number | null): Decoded | undefined {
  const writer: Writer = { round: rounder(decimals), out: [], digits: NumberText.for(decimals), decode: true, text: false };
  const node = writePlain(value, writer, 0);
  return node !== NOT_PLAIN && writer.decode ? (node as Decoded) : undefined;
}

/**
 * What a reader needs of a decoded result's text without the text: a bound on its length (every
 * number counted at its longest, NUMBER_BYTES) and every string and key it holds (the only parts
 * a scrub of secrets can change).
 *
 * @example
 * const { bytesAtMost, strings } = decodedOutline(decoded);
 */
export function decodedOutline(node: Decoded, out = { bytesAtMost: 0, strings: [] as string[] }): { bytesAtMost: number; strings: string[] } {
  if (node instanceof Float64Array) out.bytesAtMost += 2 + node.length * (NUMBER_BYTES + 1);
  else if (node instanceof Map) out.bytesAtMost += 2 + (node.get("values")?.length ?? 0) * (NUMBER_BYTES + 1) + (node.get("widths")?.length ?? 0) * 3;
  else if (Array.isArray(node)) {
    out.bytesAtMost += 2 + node.length;
    for (const item of node) decodedOutline(item, out);
  } else if (node !== null && typeof node === "object") {
    out.bytesAtMost += 2;
    for (const key of Object.keys(node)) {
      out.strings.push(key);
      out.bytesAtMost += JSON.stringify(key).length + 2;
      decodedOutline(node[key], out);
    }
  } else if (typeof node === "string") {
    out.strings.push(node);
    out.bytesAtMost += JSON.stringify(node).length;
  } else out.bytesAtMost += NUMBER_BYTES;
  return out;
}

/**
 * The text of `encodeJson(value, decimals)` written from `decodeResult(value, decimals)` (or
 * `encodeResult`'s decoded form), byte for byte: every number there is the rounded double whose
 * text the JSON holds (NaN for null), written as JSON writes it, digit by digit where `encodeJson`
 * writes digits. The embedded store writes a result's text this way only when it is first read
 * (inline.ts, store/packed.ts `DeferredText`), from the form its reader already has.
 *
 * @example
 * decodedJson(decodeResult(result, 6)!, 6) === encodeJson(result, 6); // true
 */
export function decodedJson(node: Decoded, decimals: number | null): string {
  const out: string[] = [];
  writeDecoded(node, out, NumberText.for(decimals));
  return out.join("");
}

function writeDecoded(node: Decoded, out: string[], digits: NumberText | undefined): void {
  if (node instanceof Float64Array) out.push(digits !== undefined ? digits.ofDecoded(node, undefined) : decodedList(node));
  else if (node instanceof Map) {
    const values = node.get("values") as Float64Array;
    const widths = node.get("widths") as Int32Array;
    if (digits !== undefined) out.push(digits.ofDecoded(values, widths));
    else {
      const rows: unknown[] = [];
      let at = 0;
      for (const width of widths) {
        const row = width < 0 ? values.subarray(at, ++at) : values.subarray(at, (at += width));
        rows.push(width < 0 ? (row[0] === row[0] ? row[0] : null) : Array.from(row, (v) => (v === v ? v : null)));
      }
      out.push(JSON.stringify(rows));
    }
  } else if (Array.isArray(node)) {
    out.push("[");
    for (let i = 0; i < node.length; i++) {
      if (i > 0) out.push(",");
      writeDecoded(node[i], out, digits);
    }
    out.push("]");
  } else if (node !== null && typeof node === "object") {
    let first = true;
    out.push("{");
    for (const key of Object.keys(node)) {
      out.push(first ? `${JSON.stringify(key)}:` : `,${JSON.stringify(key)}:`);
      first = false;
      writeDecoded(node[key], out, digits);
    }
    out.push("}");
  } else out.push(JSON.stringify(node));
}

/** Decoded numbers as JSON writes them (NaN as null). */
function decodedList(values: Float64Array): string {
  return JSON.stringify(Array.from(values, (v) => (v === v ? v : null)));
}

/** A parsed result as a worker posts it (`encodeResult`): see `readDecoded`. */
export type Decoded = null | number | string | boolean | Float64Array | Map<string, Float64Array | Int32Array> | Decoded[] | { [key: string]: Decoded };

/** About the memory a decoded result holds: its typed arrays' bytes, and 64 for every other part (an object, an array, a string). */
export function decodedBytes(node: Decoded): number {
  if (node instanceof Float64Array) return 64 + node.byteLength;
  if (node instanceof Map) {
    let bytes = 64;
    for (const part of node.values()) bytes += 64 + part.byteLength;
    return bytes;
  }
  let bytes = 64 + (typeof node === "string" ? node.length : 0);
  if (Array.isArray(node)) for (const item of node) bytes += decodedBytes(item);
  else if (node !== null && typeof node === "object") for (const key of Object.keys(node)) bytes += 64 + key.length + decodedBytes(node[key]);
  return bytes;
}

/** The buffers of a decoded result, to transfer with it. */
export function decodedTransfer(node: Decoded | undefined, out: ArrayBuffer[] = []): ArrayBuffer[] {
  if (node instanceof Float64Array) out.push(node.buffer as ArrayBuffer);
  else if (node instanceof Map) for (const part of node.values()) out.push(part.buffer as ArrayBuffer);
  else if (Array.isArray(node)) for (const item of node) decodedTransfer(item, out);
  else if (node !== null && typeof node === "object") for (const key of Object.keys(node)) decodedTransfer(node[key], out);
  return out;
}

/**
 * The value `JSON.parse` reads from the result's text, from its decoded form (`encodeResult`):
 * the same members in the same order, the same numbers (each the rounded double, whose shortest
 * text the JSON holds; -0 written as 0), null for NaN.
 *
 * @example
 * const results = readDecoded(done.decoded); // deep-equals JSON.parse(done.json)
 */
export function readDecoded(node: Decoded): unknown {
  return readNode(node, false);
}

/**
 * `readDecoded` for a reader that holds results compactly (the notebook's Prediction): each long
 * column that a reader may keep (`HeldColumn.of`) is a `HeldColumn` in the place of its plain
 * array; everything else is as `readDecoded` reads it.
 *
 * @example
 * const results = readDecodedColumns(done.decoded); // results.insights.relevance instanceof HeldColumn
 */
export function readDecodedColumns(node: Decoded): unknown {
  return readNode(node, true);
}

function readNode(node: Decoded, columns: boolean): unknown {
  if (node instanceof Float64Array) {
    const held = columns ? HeldColumn.of(node, undefined) : undefined;
    if (held !== undefined) return held;
    const list = numberList(node);
    noteColumn(list, node, undefined);
    return list;
  }
  if (node instanceof Map) {
    const values = node.get("values") as Float64Array;
    const widths = node.get("widths") as Int32Array;
    if (columns) {
      const held = heldRows(values, widths);
      if (held !== undefined) return held;
    }
    const out = new Array<unknown>(widths.length);
    let at = 0;
    // Rows of one width make a typed column a reader may take (noteColumn).
    let rowsOf: number | undefined = widths.length > 0 && widths[0] > 0 ? widths[0] : undefined;
    for (let i = 0; i < widths.length; i++) {
      const width = widths[i];
      if (width !== rowsOf) rowsOf = undefined;
      if (width < 0) {
        const v = values[at++];
        out[i] = v === v ? v : null;
      } else if (width === 1) {
        // A column's row (weights, y_solo): one literal, an array of one double from the start.
        const v = values[at++];
        out[i] = v === v ? [v] : [null];
      } else {
        out[i] = numberList(values.subarray(at, at + width));
        at += width;
      }
    }
    if (rowsOf !== undefined) noteColumn(out, values, rowsOf);
    return out;
  }
  if (Array.isArray(node)) return node.map((item) => readNode(item, columns));
  if (node !== null && typeof node === "object") {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(node)) out[key] = readNode(node[key], columns);
    return out;
  }
  return node;
}

/** Rows of one width (at least one value each) as a held column, when a reader may keep them. */
function heldRows(values: Float64Array, widths: Int32Array): HeldColumn | undefined {
  const width = widths.length > 0 ? widths[0] : 0;
  if (width <= 0 || values.length !== width * widths.length) return undefined;
  for (let i = 1; i < widths.length; i++) if (widths[i] !== width) return undefined;
  return HeldColumn.of(values, width);
}

/**
 * The numbers as an array, NaN as null, pushed one by one: an array of doubles from the first
 * (as JSON.parse makes it), where `new Array(n)` filled by index is reallocated as it turns to
 * doubles, and `Array.from` of the typed array goes through its iterator.
 */
function numberList(values: Float64Array): Array<number | null> {
  const out: Array<number | null> = [];
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    // Two pushes: `push(v === v ? v : null)` boxed every double (a HeapNumber each, garbage at once).
    if (v === v) out.push(v);
    else out.push(null);
  }
  return out;
}

interface Writer {
  round: Rounder;
  out: string[];
  digits: NumberText | undefined;
  /** Whether to build the decoded value (cleared when a member cannot be carried: "__proto__"). */
  decode: boolean;
  /** Whether to write the text (false: the decoded value only, `decodeResult`). */
  text: boolean;
}

/** Nesting beyond this goes to the replacer form (which also reports a cycle as JSON.stringify does). */
const MAX_DEPTH = 64;

/** What `writePlain` answers for a value that is not plain data. */
const NOT_PLAIN = Symbol("not plain");

/** A rounded number as JSON reads it back: null for NaN and the infinities, 0 for -0. */
function parsedNumber(r: number | null): number | null {
  return r === null ? null : r + 0;
}

/**
 * Appends the JSON of `value` (a value JSON writes: not undefined, a function or a symbol) to
 * `w.out`, and answers its decoded form (meaningful while `w.decode`); NOT_PLAIN (with `out`
 * partly written) when it is not plain data.
 */
function writePlain(value: unknown, w: Writer, depth: number): Decoded | typeof NOT_PLAIN {
  if (value === null) {
    if (w.text) w.out.push("null");
    return null;
  }
  if (typeof value === "number") {
    const r = w.round(value);
    if (w.text) w.out.push(JSON.stringify(r));
    return parsedNumber(r);
  }
  if (typeof value === "string" || typeof value === "boolean") {
    if (w.text) w.out.push(JSON.stringify(value));
    return value;
  }
  if (typeof value !== "object" || depth > MAX_DEPTH) return NOT_PLAIN;
  if (Array.isArray(value)) return writeArray(value, w, depth);
  const proto = Object.getPrototypeOf(value) as unknown;
  if ((proto !== Object.prototype && proto !== null) || typeof (value as { toJSON?: unknown }).toJSON === "function") return NOT_PLAIN;
  if (w.text) w.out.push("{");
  const node: { [key: string]: Decoded } = {};
  let first = true;
  for (const key of Object.keys(value)) {
    const v = (value as Record<string, unknown>)[key];
    if (v === undefined || typeof v === "function" || typeof v === "symbol") continue;
    if (w.text) w.out.push(first ? `${JSON.stringify(key)}:` : `,${JSON.stringify(key)}:`);
    first = false;
    const child = writePlain(v, w, depth + 1);
    if (child === NOT_PLAIN) return NOT_PLAIN;
    if (key === "__proto__") w.decode = false;
    else if (w.decode) node[key] = child;
  }
  if (w.text) w.out.push("}");
  return node;
}

function writeArray(value: unknown[], w: Writer, depth: number): Decoded | typeof NOT_PLAIN {
  if (!plainArray(value)) return NOT_PLAIN;
  const n = value.length;
  const written = w.digits?.text(value, w.decode, w.text);
  if (written !== undefined) {
    if (w.text) w.out.push(written.text);
    return written.node ?? null;
  }
  let numbers = true;
  for (let i = 0; i < n && numbers; i++) numbers = typeof value[i] === "number";
  if (numbers) {
    const rounded = new Array<number | null>(n);
    for (let i = 0; i < n; i++) rounded[i] = parsedNumber(w.round(value[i] as number));
    if (w.text) w.out.push(JSON.stringify(rounded));
    return rounded;
  }
  if (w.text) w.out.push("[");
  const node: Decoded[] = [];
  for (let i = 0; i < n; i++) {
    if (i > 0 && w.text) w.out.push(",");
    const v = value[i];
    // A hole, undefined, a function or a symbol is null in an array.
    if (v === undefined || typeof v === "function" || typeof v === "symbol") {
      if (w.text) w.out.push("null");
      node.push(null);
      continue;
    }
    const child = writePlain(v, w, depth + 1);
    if (child === NOT_PLAIN) return NOT_PLAIN;
    node.push(child);
  }
  if (w.text) w.out.push("]");
  return node;
}

/** An array JSON.stringify writes element by element (no toJSON it would call, not a subclass). */
function plainArray(value: unknown): value is unknown[] {
  return Array.isArray(value) && typeof (value as { toJSON?: unknown }).toJSON !== "function" && Object.getPrototypeOf(value) === Array.prototype;
}

/** ASCII codes. */
const ZERO = 48;
const MINUS = 45;
const POINT = 46;
const COMMA = 44;
const OPEN = 91;
const CLOSE = 93;
/** Arrays from this length are decoded by `NumberText`'s one-pass loops. */
const LONG_ARRAY = 32;
/** The most bytes one number takes: "-1.7976931348623157e+308" (24), a sign, 15 digits, a point and 6 decimals (23). */
const NUMBER_BYTES = 25;

/**
 * Numbers rounded to `decimals` (0 to 6) places written as JSON writes the rounded number, from
 * the rounded integer k = round(|v| 10^decimals): the integer part, a point and the fraction
 * without trailing zeros. That is the text of `Number#toString` of k / 10^decimals when k < 10^15:
 * the division is correctly rounded, so the double is the one nearest to the decimal k / 10^d,
 * which has at most 15 significant digits, and no other decimal of 15 digits or fewer reads as
 * that double (so none is shorter); 10^-6 and more are written without an exponent. Integers
 * below 10^15 are written as their digits; anything else (NaN, infinities, larger magnitudes) as
 * JSON writes the rounded value.
 */
class NumberText {
  static readonly #cache = new Map<number, NumberText>();
  readonly #decimals: number;
  readonly #factor: number;
  readonly #round: Rounder;
  #bytes = Buffer.allocUnsafe(1 << 16);
  /** The number `#number` wrote last, as JSON reads it back (NaN for null, 0 for -0). */
  #value = 0;

  private constructor(decimals: number) {
    this.#decimals = decimals;
    this.#factor = 10 ** decimals;
    this.#round = rounder(decimals);
  }

  static for(decimals: number | null): NumberText | undefined {
    if (decimals === null || !Number.isInteger(decimals) || decimals < 0 || decimals > 6) return undefined;
    let t = NumberText.#cache.get(decimals);
    if (t === undefined) NumberText.#cache.set(decimals, (t = new NumberText(decimals)));
    return t;
  }

  /**
   * The JSON of `value` when it is an array of numbers, or of plain arrays of numbers (a rows x 1
   * column); undefined otherwise. With `write` false, the decoded form only (`text` is "").
   */
  text(value: unknown[], decode: boolean, write = true): { text: string; node?: Float64Array | Map<string, Float64Array | Int32Array> } | undefined {
    // A long column (the per-observation ones) in one pass, each element read once, in loops that see
    // such columns only: a read from an array of a kind the loop has not seen alone boxes a double.
    if (!write && decode && value.length >= LONG_ARRAY) {
      const alike = plainArray(value[0]) ? this.#decodeRows(value) : this.#decodeNumbers(value);
      if (alike !== undefined) return { text: "", node: alike };
    }
    // What it holds, and the most bytes its text takes.
    let bytes = 2;
    let count = 0;
    let nested = false;
    for (let i = 0; i < value.length; i++) {
      const v = value[i];
      if (typeof v === "number") {
        bytes += NUMBER_BYTES + 1;
        count++;
      } else if (!plainArray(v)) return undefined;
      else {
        for (let j = 0; j < v.length; j++) if (typeof v[j] !== "number") return undefined;
        bytes += v.length * (NUMBER_BYTES + 1) + 3;
        count += v.length;
        nested = true;
      }
    }
    if (!write) return decode ? { text: "", node: this.#decodeOnly(value, count, nested) } : { text: "" };
    if (this.#bytes.length < bytes) this.#bytes = Buffer.allocUnsafe(Math.max(bytes, 2 * this.#bytes.length));
    // The numbers as JSON reads them back (NaN for null), and each row's width (-1: a number), when asked.
    const values = decode ? new Float64Array(count) : undefined;
    const widths = decode && nested ? new Int32Array(value.length) : undefined;
    let k = 0;
    const out = this.#bytes;
    let at = 0;
    out[at++] = OPEN;
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out[at++] = COMMA;
      const v = value[i];
      if (typeof v === "number") {
        at = this.#number(out, at, v);
        if (values !== undefined) values[k++] = this.#value;
        if (widths !== undefined) widths[i] = -1;
      } else {
        const row = v as number[];
        out[at++] = OPEN;
        for (let j = 0; j < row.length; j++) {
          if (j > 0) out[at++] = COMMA;
          at = this.#number(out, at, row[j]);
          if (values !== undefined) values[k++] = this.#value;
        }
        out[at++] = CLOSE;
        if (widths !== undefined) widths[i] = row.length;
      }
    }
    out[at++] = CLOSE;
    const text = out.toString("latin1", 0, at);
    if (values === undefined) return { text };
    return {
      text,
      node:
        widths === undefined
          ? values
          : new Map<string, Float64Array | Int32Array>([
              ["values", values],
              ["widths", widths],
            ]),
    };
  }

  /**
   * The decoded form `text` builds, without the text: each number as JSON reads back its rounded
   * text, which is the rounder's double (`#number` writes the shortest text of k / 10^decimals,
   * the rounder's value), NaN for null, 0 for -0.
   */
  #decodeOnly(value: unknown[], count: number, nested: boolean): Float64Array | Map<string, Float64Array | Int32Array> {
    const values = new Float64Array(count);
    const widths = nested ? new Int32Array(value.length) : undefined;
    let k = 0;
    for (let i = 0; i < value.length; i++) {
      const v = value[i];
      if (typeof v === "number") {
        values[k++] = this.#rounded(v);
        if (widths !== undefined) widths[i] = -1;
      } else {
        const row = v as number[];
        for (let j = 0; j < row.length; j++) values[k++] = this.#rounded(row[j]);
        if (widths !== undefined) widths[i] = row.length;
      }
    }
    return widths === undefined
      ? values
      : new Map<string, Float64Array | Int32Array>([
          ["values", values],
          ["widths", widths],
        ]);
  }

  /** `#decodeOnly` of an array of numbers, or undefined when it holds anything else. */
  #decodeNumbers(value: unknown[]): Float64Array | undefined {
    const values = new Float64Array(value.length);
    for (let i = 0; i < value.length; i++) {
      const v = value[i];
      if (typeof v !== "number") return undefined;
      values[i] = this.#rounded(v);
    }
    return values;
  }

  /** `#decodeOnly` of an array of plain arrays of numbers (a column of rows), or undefined when it holds anything else. */
  #decodeRows(value: unknown[]): Map<string, Float64Array | Int32Array> | undefined {
    const widths = new Int32Array(value.length);
    let count = 0;
    for (let i = 0; i < value.length; i++) {
      const row = value[i];
      if (!plainArray(row)) return undefined;
      widths[i] = row.length;
      count += row.length;
    }
    const values = new Float64Array(count);
    let k = 0;
    for (let i = 0; i < value.length; i++) {
      const row = value[i] as unknown[];
      for (let j = 0; j < row.length; j++) {
        const v = row[j];
        if (typeof v !== "number") return undefined;
        values[k++] = this.#rounded(v);
      }
    }
    return new Map<string, Float64Array | Int32Array>([
      ["values", values],
      ["widths", widths],
    ]);
  }

  /**
   * `rounder(decimals)(v)` as JSON reads it back (NaN for null, 0 for -0), inline: the same
   * steps (a call of the rounder per number was three quarters of `decodeResult`'s time).
   */
  #rounded(v: number): number {
    if (v - v !== 0) return NaN;
    const a = v < 0 ? -v : v;
    const scaled = a * this.#factor;
    if (Number.isInteger(a) || scaled >= 2 ** 52) return v + 0;
    const r = Math.round(scaled) / this.#factor;
    // -r, but 0 when r is 0 (the rounder's `v < 0 && r !== 0 ? -r : r`, read back).
    return v < 0 ? 0 - r : r;
  }

  /**
   * The text `text` writes for the numbers its decoded form holds (`values`, NaN for null; with
   * `widths`, its rows): each value is the rounded double of a number `#number` wrote from the
   * rounded integer k (an integer below 10^15, or k / 10^decimals with k below 10^15, which rounds
   * back to the same k), else one JSON wrote as the rounded double itself.
   */
  ofDecoded(values: Float64Array, widths: Int32Array | undefined): string {
    const bytes = 2 + values.length * (NUMBER_BYTES + 1) + (widths !== undefined ? widths.length * 3 : 0);
    if (this.#bytes.length < bytes) this.#bytes = Buffer.allocUnsafe(Math.max(bytes, 2 * this.#bytes.length));
    const out = this.#bytes;
    let at = 0;
    out[at++] = OPEN;
    if (widths === undefined) {
      for (let i = 0; i < values.length; i++) {
        if (i > 0) out[at++] = COMMA;
        at = this.#decoded(out, at, values[i]);
      }
    } else {
      let k = 0;
      for (let i = 0; i < widths.length; i++) {
        if (i > 0) out[at++] = COMMA;
        const width = widths[i];
        if (width < 0) {
          at = this.#decoded(out, at, values[k++]);
          continue;
        }
        out[at++] = OPEN;
        for (let j = 0; j < width; j++) {
          if (j > 0) out[at++] = COMMA;
          at = this.#decoded(out, at, values[k++]);
        }
        out[at++] = CLOSE;
      }
    }
    out[at++] = CLOSE;
    return out.toString("latin1", 0, at);
  }

  /** Writes a decoded number (a rounded double, NaN for null) as `#number` wrote it; answers where the next byte goes. */
  #decoded(out: Buffer, at: number, r: number): number {
    if (r !== r) return at + out.write("null", at, "latin1");
    const a = r < 0 ? -r : r;
    if (Number.isInteger(a)) {
      if (a < 1e15) return this.#number(out, at, r);
    } else {
      const k = Math.round(a * this.#factor);
      if (k < 1e15 && k / this.#factor === a) return this.#number(out, at, r);
    }
    return at + out.write(JSON.stringify(r), at, "latin1");
  }

  /** Writes `v` rounded at `at` (and keeps it in `#value`); answers where the next byte goes. */
  #number(out: Buffer, at: number, v: number): number {
    if (v - v === 0) {
      const a = v < 0 ? -v : v;
      if (Number.isInteger(a)) {
        if (a < 1e15) {
          this.#value = v + 0;
          if (v < 0) out[at++] = MINUS;
          return writeDigits(out, at, a, 1);
        }
      } else {
        const factor = this.#factor;
        const k = Math.round(a * factor);
        if (k === 0) {
          this.#value = 0;
          out[at++] = ZERO;
          return at;
        }
        if (k < 1e15) {
          // The rounder's double: k / 10^decimals, with v's sign.
          this.#value = v < 0 ? -(k / factor) : k / factor;
          const whole = Math.floor(k / factor);
          // Below 10^6: integer arithmetic.
          let fraction = (k - whole * factor) | 0;
          if (v < 0) out[at++] = MINUS;
          at = writeDigits(out, at, whole, 1);
          if (fraction === 0) return at;
          let width = this.#decimals;
          while (fraction % 10 === 0) {
            fraction = (fraction / 10) | 0;
            width--;
          }
          out[at++] = POINT;
          return writeDigits(out, at, fraction, width);
        }
      }
    }
    const r = this.#round(v);
    this.#value = r === null ? NaN : r + 0;
    return at + out.write(JSON.stringify(r), at, "latin1");
  }
}

/** Writes the digits of a non-negative integer below 10^15, at least `width` of them (leading zeros); answers where the next byte goes. */
function writeDigits(out: Buffer, at: number, n: number, width: number): number {
  if (n < 2147483648) {
    let m = n | 0;
    let count = 1;
    for (let p = 10; p <= m && count < 10; p *= 10) count++;
    if (count < width) count = width;
    const end = at + count;
    let i = end;
    while (i > at) {
      const q = (m / 10) | 0;
      out[--i] = ZERO + m - q * 10;
      m = q;
    }
    return end;
  }
  let count = 1;
  for (let p = 10; p <= n && count < 16; p *= 10) count++;
  if (count < width) count = width;
  const end = at + count;
  let i = end;
  while (i > at) {
    const q = Math.floor(n / 10);
    out[--i] = ZERO + n - q * 10;
    n = q;
  }
  return end;
}

/** Rounds a list of numbers the same way (compact yhat and fit of an experiment row). */
export function roundList(values: ArrayLike<number> | undefined, decimals: number | null): Array<number | null> {
  const round = rounder(decimals);
  return values === undefined ? [] : Array.from(values, round);
}
