/**
 * A request that keeps the caller's rows of X (no copy), and the fingerprint that tells when the
 * caller has changed them since.
 *
 * The notebook's calls (`rbp.grid` and the like) send X and keep it in the Prediction for its
 * report (`rbp verify` recomputes from it). A copy of X was most of what a Prediction kept
 * (13 MiB at N=100,000, K=10), so the notebook's requests keep the caller's own rows when they
 * are plain arrays of numbers, with a fingerprint of every value taken when the request is
 * built. A report checks it before embedding the request: rows changed after the call are an
 * error, never a report of data the result was not computed from.
 */

/** The fingerprints of requests that keep the caller's rows, by the request object. */
const PRINTS = new WeakMap<object, string>();

const BITS = new Float64Array(1);
const WORDS = new Uint32Array(BITS.buffer);

/** @internal `rowsPrint`'s running state, row by row (`printRow`, then `printOf`): the frame takes it as it reads X. */
export interface PrintState {
  a: number;
  b: number;
}

/** @internal A new `PrintState`. */
export function newPrint(): PrintState {
  return { a: 0x811c9dc5, b: 0x9747b28c };
}

/** @internal Adds one row (its length and its values' bits; null apart) to `s`. */
export function printRow(s: PrintState, row: ReadonlyArray<number | null>): void {
  let a = Math.imul(s.a ^ row.length, 0x01000193);
  let b = s.b;
  for (let j = 0; j < row.length; j++) {
    const v = row[j];
    if (v === null) {
      a = Math.imul(a ^ 0x7ff80001, 0x01000193);
      b = Math.imul(b ^ a, 0x5bd1e995);
      continue;
    }
    BITS[0] = v;
    a = Math.imul(a ^ WORDS[0], 0x01000193);
    b = Math.imul(b ^ WORDS[1] ^ (a >>> 15), 0x5bd1e995);
  }
  s.a = a;
  s.b = b;
}

/** @internal The fingerprint of the `rows` rows added to `s`. */
export function printOf(s: PrintState, rows: number): string {
  const a = Math.imul(s.a ^ rows, 0x01000193);
  const b = Math.imul(s.b ^ a, 0x5bd1e995);
  return `${(a >>> 0).toString(16)}${(b >>> 0).toString(16).padStart(8, "0")}`;
}

/**
 * A 64-bit fingerprint of X's shape and values (each number's bits; null apart): two lanes of
 * FNV-1a-style multiply-xor over 32-bit words, row by row, then the number of rows. A change of
 * any value, any row's length or the number of rows changes it but for a chance of 2^-64.
 *
 * @example
 * rowsPrint([[1, 2], [3, null]]) === rowsPrint([[1, 2], [3, null]]); // true
 */
export function rowsPrint(X: ReadonlyArray<ReadonlyArray<number | null>>): string {
  const s = newPrint();
  for (let i = 0; i < X.length; i++) printRow(s, X[i]);
  return printOf(s, X.length);
}

/** Records that `request` keeps the caller's rows, whose fingerprint as they are now (`rowsPrint`) is `print`. */
export function keepPrint(request: object, print: string): void {
  PRINTS.set(request, print);
}

/**
 * @internal `request` (a new object holding the same X) keeps the caller's rows as `from` does:
 * the fingerprint taken when `from` was built goes with it. Answers `request`.
 */
export function keptRequest<T extends object>(from: object, request: T): T {
  const print = PRINTS.get(from);
  if (print !== undefined) PRINTS.set(request, print);
  return request;
}

/**
 * @internal Whether a request that keeps the caller's rows (`keptRequest`) no longer holds the
 * values it was built from: the caller changed X after the call. False for any other request.
 */
export function rowsChanged(request: { X: ReadonlyArray<ReadonlyArray<number | null>> }): boolean {
  const print = PRINTS.get(request);
  return print !== undefined && rowsPrint(request.X) !== print;
}
