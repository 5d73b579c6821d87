/**
 * Single fields of a stored result read from its JSON text without parsing the whole of it
 * (issue 11, item 7: the first field read of a 237 MB result parsed it on the HTTP thread for 2.1 s).
 * A scanner walks the text: it lists an object's keys and skips values by their brackets (strings
 * aware), and gives the event loop back every SLICE_CHARS characters, so a read of a huge result
 * never holds other requests for more than a moment. Only the field's own text is taken; nothing
 * is parsed, not even the field (its shape is read by the scanner too).
 *
 * The text is the service's own encoding of a result (encode.ts: JSON.stringify, no whitespace),
 * so the field's slice is exactly the JSON of its value. Paths resolve as in fields.ts (aliases,
 * case-sensitive keys, integer indexes), with the same 404.
 */
import { arrayChildNames, arrayIndex, chooseKey, fieldNotFound, type PathPart } from "./fields.js";

/** Characters scanned between two returns to the event loop. */
export const SLICE_CHARS = 256 * 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACK = 0x5b;
const RBRACK = 0x5d;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** What is at a position of the text. */
export type Described = { kind: "array"; length: number; shape: number[] } | { kind: "object"; keys: string[] } | { kind: "scalar" };

export class JsonScanner {
  private scanned = 0;

  constructor(readonly text: string) {}

  /** Counts `n` scanned characters; every SLICE_CHARS of them, waits for the next turn of the event loop. */
  private async account(n: number): Promise<void> {
    this.scanned += n;
    if (this.scanned >= SLICE_CHARS) {
      this.scanned = 0;
      await nextTurn();
    }
  }

  /** The first non-blank position from `pos`. */
  ws(pos: number): number {
    const t = this.text;
    while (pos < t.length && t.charCodeAt(pos) <= 0x20) pos++;
    return pos;
  }

  /** The position after the string starting at `pos` (its opening quote). */
  stringEnd(pos: number): number {
    const t = this.text;
    let i = pos + 1;
    for (;;) {
      const j = t.indexOf('"', i);
      if (j < 0) throw new SyntaxError("unterminated string in a stored result");
      let backslashes = 0;
      for (let k = j - 1; k > pos && t.charCodeAt(k) === BACKSLASH; k--) backslashes++;
      if (backslashes % 2 === 0) return j + 1;
      i = j + 1;
    }
  }

  /** The position after the value starting at `pos`. */
  async skipValue(pos: number): Promise<number> {
    const t = this.text;
    const c = t.charCodeAt(pos);
    if (c === QUOTE) {
      const end = this.stringEnd(pos);
      await this.account(end - pos);
      return end;
    }
    if (c !== LBRACE && c !== LBRACK) {
      let i = pos;
      while (i < t.length) {
        const d = t.charCodeAt(i);
        if (d === COMMA || d === RBRACE || d === RBRACK || d <= 0x20) break;
        i++;
      }
      await this.account(i - pos);
      return i;
    }
    let depth = 0;
    let i = pos;
    let from = pos;
    while (i < t.length) {
      const d = t.charCodeAt(i);
      if (d === QUOTE) {
        i = this.stringEnd(i);
        continue;
      }
      if (d === LBRACE || d === LBRACK) depth++;
      else if (d === RBRACE || d === RBRACK) {
        depth--;
        if (depth === 0) {
          await this.account(i + 1 - from);
          return i + 1;
        }
      }
      i++;
      if (i - from >= 65536) {
        await this.account(i - from);
        from = i;
      }
    }
    throw new SyntaxError("unterminated value in a stored result");
  }

  /** The members of the object at `pos`: each key with its value's span. */
  async members(pos: number): Promise<Array<{ key: string; start: number; end: number }>> {
    const t = this.text;
    const out: Array<{ key: string; start: number; end: number }> = [];
    let i = this.ws(pos + 1);
    if (t.charCodeAt(i) === RBRACE) return out;
    for (;;) {
      const keyEnd = this.stringEnd(i);
      const key = JSON.parse(t.slice(i, keyEnd)) as string;
      i = this.ws(keyEnd);
      if (t.charCodeAt(i) !== COLON) throw new SyntaxError("expected ':' in a stored result");
      const start = this.ws(i + 1);
      const end = await this.skipValue(start);
      out.push({ key, start, end });
      i = this.ws(end);
      const d = t.charCodeAt(i);
      if (d === RBRACE) return out;
      if (d !== COMMA) throw new SyntaxError("expected ',' or '}' in a stored result");
      i = this.ws(i + 1);
    }
  }

  /** The span of element `index` of the array at `pos`; else the array's length. */
  async element(pos: number, index: number): Promise<{ start: number; end: number } | { length: number }> {
    const t = this.text;
    let i = this.ws(pos + 1);
    if (t.charCodeAt(i) === RBRACK) return { length: 0 };
    for (let n = 0; ; n++) {
      const start = i;
      const end = await this.skipValue(start);
      if (n === index) return { start, end };
      i = this.ws(end);
      const d = t.charCodeAt(i);
      if (d === RBRACK) return { length: n + 1 };
      if (d !== COMMA) throw new SyntaxError("expected ',' or ']' in a stored result");
      i = this.ws(i + 1);
    }
  }

  /** The length of the array at `pos`. */
  async arrayLength(pos: number): Promise<number> {
    const r = await this.element(pos, Number.POSITIVE_INFINITY);
    return "length" in r ? r.length : 0;
  }

  /** What the value at `pos` is: an array (its length and shape), an object (its keys) or a scalar. */
  async describe(pos: number): Promise<Described> {
    const c = this.text.charCodeAt(pos);
    if (c === LBRACE) return { kind: "object", keys: (await this.members(pos)).map((m) => m.key) };
    if (c !== LBRACK) return { kind: "scalar" };
    const length = await this.arrayLength(pos);
    let shape = [length];
    if (length > 0) {
      const first = this.ws(pos + 1);
      if (this.text.charCodeAt(first) === LBRACK) {
        const inner = await this.describe(first);
        if (inner.kind === "array") shape = [length, ...inner.shape];
      }
    }
    return { kind: "array", length, shape };
  }
}

/** A member of an object in the text: its key and its value's span. */
export interface Member {
  key: string;
  start: number;
  end: number;
}

/**
 * The members of the text's root object (empty when the root is no object): kept by the caller
 * for a result read again, so that a later field of it is found without scanning the whole text.
 */
export async function rootMembers(scanner: JsonScanner): Promise<Member[]> {
  const start = scanner.ws(0);
  return scanner.text.charCodeAt(start) === LBRACE ? scanner.members(start) : [];
}

export interface LocatedField {
  /** The keys followed (canonical spelling), numbers for array indexes. */
  path: PathPart[];
  start: number;
  end: number;
}

/**
 * Finds the field `segments` in a result's JSON text; throws fields.ts's 404 when there is none.
 *
 * @example
 * const { path, start, end } = await locateField(json, ["insights", "impact_on_fit"]);
 * json.slice(start, end); // the field's JSON
 */
export async function locateField(scanner: JsonScanner, segments: string[], root?: Member[]): Promise<LocatedField> {
  const t = scanner.text;
  const path: PathPart[] = [];
  let start = scanner.ws(0);
  for (const [depth, segment] of segments.entries()) {
    const c = t.charCodeAt(start);
    if (c === LBRACE) {
      // The top level's members come from the result's index when there is one.
      const members = depth === 0 && root !== undefined ? root : await scanner.members(start);
      const keys = members.map((m) => m.key);
      const key = chooseKey(keys, segment);
      if (key === undefined) throw fieldNotFound(segments, path, segment, keys);
      path.push(key);
      start = members.find((m) => m.key === key)!.start;
    } else if (c === LBRACK) {
      const numeric = /^\d+$/.test(segment);
      const found = numeric ? await scanner.element(start, Number(segment)) : { length: await scanner.arrayLength(start) };
      if ("length" in found || arrayIndex(segment, Number.MAX_SAFE_INTEGER) === undefined) {
        const length = "length" in found ? found.length : await scanner.arrayLength(start);
        throw fieldNotFound(segments, path, segment, arrayChildNames(length));
      }
      path.push(Number(segment));
      start = found.start;
    } else {
      throw fieldNotFound(segments, path, segment, []);
    }
  }
  return { path, start, end: await scanner.skipValue(start) };
}

/** UTF-8 bytes of `text.slice(start, end)`, counted a slice at a time. */
export async function byteLength(scanner: JsonScanner, start: number, end: number): Promise<number> {
  let bytes = 0;
  for (let from = start; from < end; from += SLICE_CHARS) {
    bytes += Buffer.byteLength(scanner.text.slice(from, Math.min(end, from + SLICE_CHARS)));
    if (from + SLICE_CHARS < end) await nextTurn();
  }
  return bytes;
}
