/**
 * Results as served: the engine's result object as JSON, numbers rounded to `decimals` places
 * (the hosted service publishes 6; null keeps full precision), NaN and infinities as null.
 * Runs in the worker threads, so the main thread only moves strings.
 */
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
  const round = rounder(decimals);
  const writer: Writer = { round, out: [], digits: NumberText.for(decimals) };
  if (writePlain(value, writer, 0)) return writer.out.join("");
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === "number" ? round(v) : v));
}

interface Writer {
  round: Rounder;
  out: string[];
  digits: NumberText | undefined;
}

/** Nesting beyond this goes to the replacer form (which also reports a cycle as JSON.stringify does). */
const MAX_DEPTH = 64;

/**
 * Appends the JSON of `value` (a value JSON writes: not undefined, a function or a symbol) to
 * `w.out`; false (with `out` partly written) when it is not plain data.
 */
function writePlain(value: unknown, w: Writer, depth: number): boolean {
  if (value === null) w.out.push("null");
  else if (typeof value === "number") w.out.push(JSON.stringify(w.round(value)));
  else if (typeof value === "string" || typeof value === "boolean") w.out.push(JSON.stringify(value));
  else if (typeof value !== "object" || depth > MAX_DEPTH) return false;
  else if (Array.isArray(value)) return writeArray(value, w, depth);
  else {
    const proto = Object.getPrototypeOf(value) as unknown;
    if ((proto !== Object.prototype && proto !== null) || "toJSON" in value) return false;
    w.out.push("{");
    let first = true;
    for (const key of Object.keys(value)) {
      const v = (value as Record<string, unknown>)[key];
      if (v === undefined || typeof v === "function" || typeof v === "symbol") continue;
      w.out.push(first ? `${JSON.stringify(key)}:` : `,${JSON.stringify(key)}:`);
      first = false;
      if (!writePlain(v, w, depth + 1)) return false;
    }
    w.out.push("}");
  }
  return true;
}

function writeArray(value: unknown[], w: Writer, depth: number): boolean {
  if (!plainArray(value)) return false;
  const n = value.length;
  const text = w.digits?.text(value);
  if (text !== undefined) {
    w.out.push(text);
    return true;
  }
  let numbers = true;
  for (let i = 0; i < n && numbers; i++) numbers = typeof value[i] === "number";
  if (numbers) {
    const rounded = new Array<number | null>(n);
    for (let i = 0; i < n; i++) rounded[i] = w.round(value[i] as number);
    w.out.push(JSON.stringify(rounded));
    return true;
  }
  w.out.push("[");
  for (let i = 0; i < n; i++) {
    if (i > 0) w.out.push(",");
    const v = value[i];
    // A hole, undefined, a function or a symbol is null in an array.
    if (v === undefined || typeof v === "function" || typeof v === "symbol") w.out.push("null");
    else if (!writePlain(v, w, depth + 1)) return false;
  }
  w.out.push("]");
  return true;
}

function plainArray(value: unknown): value is unknown[] {
  return Array.isArray(value) && Object.getPrototypeOf(value) === Array.prototype && !("toJSON" in value);
}

/** ASCII codes. */
const ZERO = 48;
const MINUS = 45;
const POINT = 46;
const COMMA = 44;
const OPEN = 91;
const CLOSE = 93;
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
   * column); undefined otherwise.
   */
  text(value: unknown[]): string | undefined {
    // What it holds, and the most bytes its text takes.
    let bytes = 2;
    for (let i = 0; i < value.length; i++) {
      const v = value[i];
      if (typeof v === "number") bytes += NUMBER_BYTES + 1;
      else if (!plainArray(v)) return undefined;
      else {
        for (let j = 0; j < v.length; j++) if (typeof v[j] !== "number") return undefined;
        bytes += v.length * (NUMBER_BYTES + 1) + 3;
      }
    }
    if (this.#bytes.length < bytes) this.#bytes = Buffer.allocUnsafe(Math.max(bytes, 2 * this.#bytes.length));
    const out = this.#bytes;
    let at = 0;
    out[at++] = OPEN;
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out[at++] = COMMA;
      const v = value[i];
      if (typeof v === "number") at = this.#number(out, at, v);
      else {
        const row = v as number[];
        out[at++] = OPEN;
        for (let j = 0; j < row.length; j++) {
          if (j > 0) out[at++] = COMMA;
          at = this.#number(out, at, row[j]);
        }
        out[at++] = CLOSE;
      }
    }
    out[at++] = CLOSE;
    return out.toString("latin1", 0, at);
  }

  /** Writes `v` rounded at `at`; answers where the next byte goes. */
  #number(out: Buffer, at: number, v: number): number {
    if (v - v === 0) {
      const a = v < 0 ? -v : v;
      if (Number.isInteger(a)) {
        if (a < 1e15) {
          if (v < 0) out[at++] = MINUS;
          return writeDigits(out, at, a, 1);
        }
      } else {
        const factor = this.#factor;
        const k = Math.round(a * factor);
        if (k === 0) {
          out[at++] = ZERO;
          return at;
        }
        if (k < 1e15) {
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
    return at + out.write(JSON.stringify(this.#round(v)), at, "latin1");
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
