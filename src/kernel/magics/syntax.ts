/**
 * What every magic parser shares: the error and segment types, the tokenizer of magic arguments
 * (blanks split, quoted strings and bracketed JSON stay whole), value reading, the generated-line
 * builder, and the head of a magic (`%name?`). Pure: no I/O, no state.
 */
import { CELL_MAGICS, LINE_MAGICS, findMagic, magicLabel, type MagicKind } from "../catalog.js";
import { parseJson } from "../json.js";
import { RbpBaseError, brand } from "../../errors/index.js";
import { didYouMean } from "../../internal/suggest.js";

export interface MagicError {
  message: string;
  /** The word at fault, as written. */
  word: string;
  /** 1-based. */
  line: number;
  /** 1-based. */
  column: number;
}

/** A stretch of the user's own text copied into a generated line. Columns are 0-based. */
export interface Segment {
  /** 1-based; the same line in the cell and in the code. */
  line: number;
  column: number;
  sourceColumn: number;
  length: number;
}

export interface Translation {
  code: string;
  /** The magics used, in order (`%time`, `%%grid`, ...). */
  magics: string[];
  segments: Segment[];
  /** The lines that held a magic, with the 0-based column of its `%`. */
  magicLines: Array<{ line: number; column: number }>;
  /** Whether the code calls the runtime (so the kernel must load it first). */
  usesRuntime: boolean;
}

export type TranslateResult = Translation | { error: MagicError };

/**
 * Not `__rbp`: tslab 1.0.22 exports a cell's names by their TypeScript-escaped spelling, which for
 * a name starting with two underscores is a third underscore longer, and the export then fails.
 */
export const RUNTIME_NAME = "$rbp";

/** A malformed magic: thrown while translating, caught by `translateMagics` and turned into its `error`. */
export class Fail extends RbpBaseError {
  static {
    brand(this, "MagicFail");
  }

  constructor(readonly detail: MagicError) {
    super(detail.message, "magic_syntax");
  }
}

export const RESERVED = new Set(
  (
    "break case catch class const continue debugger default delete do else enum export extends false finally for function if " +
    "import in instanceof new null return super switch this throw true try typeof var void while with yield let static " +
    "implements interface package private protected public await"
  ).split(" "),
);
export const IDENT = /^[A-Za-z_$][\w$]*$/;
export const IDENT_PATH = /^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$/;

/** Whether a magic's statement is a declaration or a control statement (not an expression). */
export const STATEMENT_START =
  /^(const|let|var|function|async\s+function|class|if|for|while|do|switch|try|throw|return|import|export|type|interface|enum|declare|namespace|abstract|using|break|continue)\b|^\{/;

// ---------------------------------------------------------------------------------------------
// Tokens of a magic line.

export interface Token {
  text: string;
  /** 0-based column in its line. */
  column: number;
}

/** Splits magic arguments at blanks, keeping quoted strings and bracketed JSON whole; `->` is its own token. */
export function tokenize(text: string, from: number, line: number): Token[] {
  const tokens: Token[] = [];
  let i = from;
  while (i < text.length) {
    while (i < text.length && /\s/.test(text[i])) i++;
    if (i >= text.length) break;
    const start = i;
    if (text.startsWith("->", i)) {
      tokens.push({ text: "->", column: i });
      i += 2;
      continue;
    }
    const closers: string[] = [];
    while (i < text.length) {
      const c = text[i];
      if (closers.length === 0 && (/\s/.test(c) || text.startsWith("->", i))) break;
      if (c === '"' || c === "'") {
        const q = c;
        const open = i;
        i++;
        while (i < text.length && text[i] !== q) i += text[i] === "\\" ? 2 : 1;
        if (i >= text.length) {
          throw new Fail({ message: `unterminated string: ${text.slice(open)} has no closing ${q}`, word: text.slice(open), line, column: open + 1 });
        }
        i++;
        continue;
      }
      if (c === "[" || c === "{") closers.push(c === "[" ? "]" : "}");
      else if ((c === "]" || c === "}") && closers.length > 0) {
        if (closers[closers.length - 1] !== c) {
          throw new Fail({ message: `mismatched ${c} in ${text.slice(start, i + 1)}`, word: text.slice(start, i + 1), line, column: i + 1 });
        }
        closers.pop();
      }
      i++;
    }
    if (closers.length > 0) {
      throw new Fail({
        message: `unclosed bracket in ${text.slice(start)}: expected ${closers.reverse().join("")}`,
        word: text.slice(start),
        line,
        column: start + 1,
      });
    }
    tokens.push({ text: text.slice(start, i), column: start });
  }
  return tokens;
}

/** A bare, "double-quoted" (JSON) or 'single-quoted' word. */
export function unquote(tok: string, line: number, column: number): string {
  if (tok.startsWith('"')) {
    const r = parseJson(tok);
    if (!r.ok || typeof r.value !== "string")
      throw new Fail({ message: `bad quoted name ${tok}: ${r.ok ? "not a string" : r.message}`, word: tok, line, column });
    return r.value;
  }
  if (tok.startsWith("'")) return tok.slice(1, -1).replace(/\\(.)/g, "$1");
  return tok;
}

/** Splits at commas outside quotes. */
export function splitCommas(text: string): Array<{ text: string; offset: number }> {
  const out: Array<{ text: string; offset: number }> = [];
  let start = 0;
  let quote: string | undefined;
  for (let i = 0; i <= text.length; i++) {
    const c = text[i];
    if (quote !== undefined) {
      if (c === "\\") i++;
      else if (c === quote) quote = undefined;
      continue;
    }
    if (c === '"' || c === "'") quote = c;
    else if (c === "," || i === text.length) {
      out.push({ text: text.slice(start, i), offset: start });
      start = i + 1;
    }
  }
  return out;
}

/**
 * An option value: JSON when it reads as JSON, else text. A value that starts like JSON (a
 * bracket, a brace, a double quote) must be valid JSON.
 */
export function readValue(raw: string, at: { label: string; key: string; line: number; keyColumn: number; column: number }): unknown {
  const { label, key, line, column } = at;
  // Without a trailing "# comment" or "// comment", and a trailing comma (lines pasted from JSON).
  const clean = (t: string) =>
    t
      .replace(/\s(#|\/\/).*$/, "")
      .trim()
      .replace(/,$/, "")
      .trimEnd();
  const text = raw.trim();
  if (clean(text) === "") throw new Fail({ message: `${label}: option ${key} needs a value (${key}: <value>)`, word: key, line, column: at.keyColumn });
  for (const candidate of [text, clean(text)]) {
    const r = parseJson(candidate);
    if (r.ok) return r.value;
  }
  const r = parseJson(clean(text));
  if (/^["[{]/.test(text)) {
    if (!r.ok) throw new Fail({ message: `${label}: the value of option ${key} is not valid JSON: ${r.message}`, word: clean(text), line, column });
  }
  const value = clean(text);
  return value.length >= 2 && value.startsWith("'") && value.endsWith("'") ? value.slice(1, -1) : value;
}

// ---------------------------------------------------------------------------------------------
// The translation.

export interface Out {
  lines: string[];
  segments: Segment[];
  magics: string[];
  magicLines: Array<{ line: number; column: number }>;
  usesRuntime: boolean;
}

/** Builds a generated line piece by piece, recording where the user's words land. */
export class LineBuilder {
  text = "";
  readonly segments: Segment[] = [];
  constructor(readonly line: number) {}
  add(s: string): this {
    this.text += s;
    return this;
  }
  user(s: string, sourceColumn: number): this {
    this.segments.push({ line: this.line, column: this.text.length, sourceColumn, length: s.length });
    this.text += s;
    return this;
  }
}

export function helpCall(rt: string, name: string | undefined, kind: MagicKind | undefined): string {
  return `${rt}.help(${name === undefined ? "" : `${JSON.stringify(name)}, ${JSON.stringify(kind)}`});`;
}

export function unknownMagic(name: string, kind: MagicKind, line: number, column: number): Fail {
  const label = kind === "cell" ? `%%${name}` : `%${name}`;
  const other = findMagic(name, kind === "cell" ? "line" : "cell");
  if (other !== undefined) {
    const msg =
      kind === "cell"
        ? `${label} is not a cell magic; ${magicLabel(other)} is a line magic: ${other.usage}`
        : `${label} is a cell magic: start the cell with ${magicLabel(other)} (${other.usage})`;
    return new Fail({ message: msg, word: label, line, column });
  }
  const labels = [...LINE_MAGICS.map((n) => `%${n}`), ...CELL_MAGICS.map((n) => `%%${n}`)];
  return new Fail({
    message: `unknown ${kind} magic ${label}${didYouMean(label, labels, (s) => s)} (%lsmagic lists the magics)`,
    word: label,
    line,
    column,
  });
}

/** `%name...`: the name, whether it ends with `?`, and where the arguments start. */
export function magicHead(text: string, at: number, prefix: string, line: number): { name: string; help: boolean; rest: number } {
  const m = /^([A-Za-z_]\w*)?(\?*)/.exec(text.slice(at + prefix.length))!;
  const name = m[1] ?? "";
  const help = m[2].length > 0;
  const rest = at + prefix.length + m[0].length;
  if (name === "") {
    // "%?" or "%%?" alone: help on every magic.
    if (help && text.slice(rest).trim() === "") return { name: "", help: true, rest };
    const word = text.slice(at).split(/\s/)[0];
    throw new Fail({
      message: `a magic name must follow ${prefix} directly, as in ${prefix}${prefix === "%%" ? "grid" : "time"} (%lsmagic lists them), got ${JSON.stringify(word)}`,
      word,
      line,
      column: at + 1,
    });
  }
  if (rest < text.length && !/\s/.test(text[rest])) {
    const word = text.slice(at).split(/\s/)[0];
    throw new Fail({
      message: `unexpected ${JSON.stringify(text[rest])} after ${prefix}${name}: separate a magic from its arguments with a space`,
      word,
      line,
      column: at + 1,
    });
  }
  return { name, help, rest };
}
