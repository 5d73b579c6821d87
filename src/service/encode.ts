/**
 * Results as served: the engine's result object as JSON, numbers rounded to `decimals` places
 * (the hosted service publishes 6; null keeps full precision), NaN and infinities as null.
 * Runs in the worker threads, so the main thread only moves strings.
 *
 * The text is exactly `JSON.stringify(value, (k, v) => typeof v === "number" ? round(v) : v)`.
 * Writing the numbers is most of that call's time (a PSR result of 1,000 rows holds about 6,600),
 * so for 0 to 6 decimals `encodeJson` writes the text itself, byte for byte the same: a rounded
 * number is `m / 10^d` with m an integer, and below 2^26 (where a double's spacing is under
 * 10^-7) the shortest text that reads back as that double, which is what JSON writes, is m's
 * digits with the point put back and its trailing zeros dropped. Larger numbers, and other
 * decimals, are written by JavaScript. The structure follows JSON.stringify's rules (toJSON,
 * members that are undefined, functions or symbols left out of objects and null in arrays,
 * wrapper objects unwrapped, a cycle refused); test/service/encode.test.ts compares the two.
 */
import { Buffer } from "node:buffer";

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
 * JSON text of `value` with every number passed through `rounder(decimals)`.
 *
 * @example
 * encodeJson({ yhat: [0.12345678, NaN], n: 3 }, 6); // '{"yhat":[0.123457,null],"n":3}'
 */
export function encodeJson(value: unknown, decimals: number | null): string {
  // Without rounding JSON.stringify writes the same numbers (NaN and infinities as null).
  if (decimals === null) return JSON.stringify(value);
  if (!(Number.isInteger(decimals) && decimals >= 0 && decimals <= 6)) {
    const round = rounder(decimals);
    return JSON.stringify(value, (_key, v: unknown) => (typeof v === "number" ? round(v) : v));
  }
  // One writer per thread, reused; a toJSON that encodes again while it writes gets its own.
  const writer = idle ?? new JsonWriter();
  idle = undefined;
  try {
    return writer.encode(value, decimals);
  } finally {
    idle = writer;
  }
}

/** Rounds a list of numbers the same way (compact yhat and fit of an experiment row). */
export function roundList(values: ArrayLike<number> | undefined, decimals: number | null): Array<number | null> {
  const round = rounder(decimals);
  return values === undefined ? [] : Array.from(values, round);
}

/** Below this a rounded number's text is its digits (the module comment says why). */
const DIGITS_BELOW = 2 ** 26;
const COMMA = 44;
const COLON = 58;
const MINUS = 45;
const ZERO = 48;
const POINT = 46;

let idle: JsonWriter | undefined;

/** Writes the decimal digits of an integer 0 <= n < 2^31 at `p` (room is made); returns the end. */
function writeDigits(b: Buffer, p: number, n: number): number {
  if (n < 10) {
    b[p] = ZERO + n;
    return p + 1;
  }
  const width = n < 100 ? 2 : n < 1000 ? 3 : n < 10000 ? 4 : n < 100000 ? 5 : n < 1000000 ? 6 : n < 10000000 ? 7 : n < 100000000 ? 8 : n < 1000000000 ? 9 : 10;
  for (let e = p + width - 1, t = n; e >= p; e--) {
    const q = (t / 10) | 0;
    b[e] = ZERO + t - q * 10;
    t = q;
  }
  return p + width;
}

/** A Number object's text: JSON writes its value as it is (a replacer sees an object, not a number). */
class Unrounded {
  constructor(readonly text: string) {}
}

/** JSON text written as bytes into one growing buffer. */
class JsonWriter {
  #buf = Buffer.allocUnsafe(1 << 16);
  #pos = 0;
  /** A string with a character beyond ASCII was written (the bytes are then UTF-8). */
  #wide = false;
  #factor = 1;
  #decimals = 0;
  /** The objects being written, outermost first (a cycle is refused as JSON.stringify refuses it). */
  readonly #open: object[] = [];

  encode(value: unknown, decimals: number): string {
    this.#pos = 0;
    this.#wide = false;
    this.#open.length = 0;
    this.#decimals = decimals;
    this.#factor = 10 ** decimals;
    const v = this.#prepare(value, "");
    if (v === undefined || typeof v === "function" || typeof v === "symbol") return undefined as unknown as string; // as JSON.stringify
    this.#value(v);
    const text = this.#buf.toString(this.#wide ? "utf8" : "latin1", 0, this.#pos);
    // Keep a buffer of ordinary size for the next result; a very large one is let go.
    if (this.#buf.length > 1 << 24) this.#buf = Buffer.allocUnsafe(1 << 16);
    return text;
  }

  /** The value JSON.stringify serializes for `key`: after toJSON, a wrapper object unwrapped. */
  #prepare(value: unknown, key: string | number): unknown {
    if ((typeof value !== "object" && typeof value !== "bigint" && typeof value !== "function") || value === null) return value;
    let v: unknown = value;
    const toJSON = (v as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === "function") v = toJSON.call(v, String(key)) as unknown;
    if (typeof v === "object" && v !== null && !Array.isArray(v)) {
      if (v instanceof Number) return new Unrounded(JSON.stringify(Number(v)));
      if (v instanceof String) return String(v);
      if (v instanceof Boolean) return v.valueOf();
    }
    return v;
  }

  /** Writes a prepared value that is not undefined, a function or a symbol. */
  #value(v: unknown): void {
    switch (typeof v) {
      case "number":
        return this.#number(v);
      case "string":
        return this.#string(v);
      case "boolean":
        return this.#text(v ? "true" : "false");
      case "bigint":
        throw new TypeError("Do not know how to serialize a BigInt");
      default:
        if (v === null) return this.#text("null");
        if (v instanceof Unrounded) return this.#text(v.text);
        return this.#object(v as object);
    }
  }

  #object(v: object): void {
    if (this.#open.includes(v)) throw new TypeError("Converting circular structure to JSON");
    this.#open.push(v);
    if (Array.isArray(v)) {
      this.#byte(91);
      for (let i = 0; i < v.length; i++) {
        if (i > 0) this.#byte(COMMA);
        const e: unknown = v[i];
        if (typeof e === "number") this.#number(e);
        // A list of numbers inside a list (a PSR result's weights: one per row, a number per threshold).
        else if (Array.isArray(e) && (e as { toJSON?: unknown }).toJSON === undefined && this.#numbers(e)) continue;
        else {
          const x = this.#prepare(e, i);
          if (x === undefined || typeof x === "function" || typeof x === "symbol") this.#text("null");
          else this.#value(x);
        }
      }
      this.#byte(93);
    } else {
      this.#byte(123);
      let first = true;
      for (const key of Object.keys(v)) {
        const x = this.#prepare((v as Record<string, unknown>)[key], key);
        if (x === undefined || typeof x === "function" || typeof x === "symbol") continue;
        if (!first) this.#byte(COMMA);
        first = false;
        this.#string(key);
        this.#byte(COLON);
        this.#value(x);
      }
      this.#byte(125);
    }
    this.#open.pop();
  }

  /** Writes a list whose members are all numbers and answers true; else writes nothing and answers false. */
  #numbers(list: unknown[]): boolean {
    const start = this.#pos;
    this.#byte(91);
    for (let i = 0; i < list.length; i++) {
      const e = list[i];
      if (typeof e !== "number") {
        this.#pos = start;
        return false;
      }
      if (i > 0) this.#byte(COMMA);
      this.#number(e);
    }
    this.#byte(93);
    return true;
  }

  #string(s: string): void {
    this.#text(JSON.stringify(s));
  }

  /** The number as `rounder(decimals)` rounds it and JSON writes it. */
  #number(v: number): void {
    const a = v < 0 ? -v : v;
    // NaN, infinities and large numbers: as JSON writes the rounded number.
    if (!(a < DIGITS_BELOW)) return this.#text(Number.isFinite(v) ? String(rounder(this.#decimals)(v)) : "null");
    this.#room(24);
    const b = this.#buf;
    let p = this.#pos;
    const factor = this.#factor;
    // Exact: a * factor < 2^46 (an integer a is its own m); whole < 2^26 and fraction < 10^6 are int32.
    const m = Math.round(a * factor);
    if (m === 0) {
      b[p] = ZERO;
      this.#pos = p + 1;
      return;
    }
    if (v < 0) b[p++] = MINUS;
    const whole = Math.floor(m / factor) | 0;
    let fraction = (m - whole * factor) | 0;
    p = writeDigits(b, p, whole);
    if (fraction !== 0) {
      let width = this.#decimals;
      while (fraction % 10 === 0) {
        fraction /= 10;
        width--;
      }
      b[p] = POINT;
      for (let e = p + width; e > p; e--) {
        const q = (fraction / 10) | 0;
        b[e] = ZERO + fraction - q * 10;
        fraction = q;
      }
      p += width + 1;
    }
    this.#pos = p;
  }

  #byte(c: number): void {
    this.#room(1);
    this.#buf[this.#pos++] = c;
  }

  #text(s: string): void {
    this.#room(3 * s.length);
    const n = this.#buf.write(s, this.#pos, "utf8");
    if (n !== s.length) this.#wide = true;
    this.#pos += n;
  }

  #room(n: number): void {
    if (this.#pos + n <= this.#buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(2 * this.#buf.length, this.#pos + n));
    this.#buf.copy(grown, 0, 0, this.#pos);
    this.#buf = grown;
  }
}
