/**
 * Magics to TypeScript: `translate(cell)` turns a cell's `%` and `%%` lines into ordinary calls of
 * the kernel runtime (`src/kernel/runtime.ts`, which calls the notebook helper), before tslab
 * compiles the cell. Pure: no I/O, no state.
 *
 * - A line magic is a line that starts (after indentation) with `%name`, in code at statement level:
 *   not inside a string, template literal or comment, nor inside parentheses or brackets.
 * - A cell magic is a cell whose first non-blank line starts with `%%name`; the rest of the cell is
 *   its body (options).
 * - The generated code has exactly the cell's lines: line i of the code comes from line i of the
 *   cell, and the user's own words (a dataframe's name, a timed statement) are copied verbatim, with
 *   their positions recorded in `segments`, so a TypeScript diagnostic about them can be moved back
 *   to the cell (`sourcePosition`). A cell magic's body becomes blank lines.
 * - A malformed magic is `{ error: { message, word, line, column } }` (1-based line and column of
 *   the word at fault): the kernel reports it instead of compiling anything.
 *
 * The grammar, with every magic's usage and example, is in catalog.ts and in the README of
 * src/kernel.
 */
import { ANALYSES, OPTION_KEYS, normalizeOptions, type Analysis } from "../api/options.js";
import { InvalidInputError } from "../engine/errors.js";
import { CELL_MAGICS, LINE_MAGICS, findMagic, magicLabel, type MagicKind } from "./catalog.js";
import { parseJson } from "./json.js";
import { LineScanner, splitLineComment } from "./scan.js";
import { didYouMean } from "./suggest.js";

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

class Fail extends Error {
  constructor(readonly detail: MagicError) {
    super(detail.message);
  }
}

const RESERVED = new Set(
  (
    "break case catch class const continue debugger default delete do else enum export extends false finally for function if " +
    "import in instanceof new null return super switch this throw true try typeof var void while with yield let static " +
    "implements interface package private protected public await"
  ).split(" "),
);
const IDENT = /^[A-Za-z_$][\w$]*$/;
const IDENT_PATH = /^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$/;

/** Whether a magic's statement is a declaration or a control statement (not an expression). */
const STATEMENT_START =
  /^(const|let|var|function|async\s+function|class|if|for|while|do|switch|try|throw|return|import|export|type|interface|enum|declare|namespace|abstract|using|break|continue)\b|^\{/;

// ---------------------------------------------------------------------------------------------
// Tokens of a magic line.

interface Token {
  text: string;
  /** 0-based column in its line. */
  column: number;
}

/** Splits magic arguments at blanks, keeping quoted strings and bracketed JSON whole; `->` is its own token. */
function tokenize(text: string, from: number, line: number): Token[] {
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
      throw new Fail({ message: `unclosed bracket in ${text.slice(start)}: expected ${closers.reverse().join("")}`, word: text.slice(start), line, column: start + 1 });
    }
    tokens.push({ text: text.slice(start, i), column: start });
  }
  return tokens;
}

/** A bare, "double-quoted" (JSON) or 'single-quoted' word. */
function unquote(tok: string, line: number, column: number): string {
  if (tok.startsWith('"')) {
    const r = parseJson(tok);
    if (!r.ok || typeof r.value !== "string") throw new Fail({ message: `bad quoted name ${tok}: ${r.ok ? "not a string" : r.message}`, word: tok, line, column });
    return r.value;
  }
  if (tok.startsWith("'")) return tok.slice(1, -1).replace(/\\(.)/g, "$1");
  return tok;
}

/** Splits at commas outside quotes. */
function splitCommas(text: string): Array<{ text: string; offset: number }> {
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
function readValue(raw: string, at: { label: string; key: string; line: number; keyColumn: number; column: number }): unknown {
  const { label, key, line, column } = at;
  // Without a trailing "# comment" or "// comment", and a trailing comma (lines pasted from JSON).
  const clean = (t: string) => t.replace(/\s(#|\/\/).*$/, "").trim().replace(/,$/, "").trimEnd();
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

interface Out {
  lines: string[];
  segments: Segment[];
  magics: string[];
  magicLines: Array<{ line: number; column: number }>;
  usesRuntime: boolean;
}

/** Builds a generated line piece by piece, recording where the user's words land. */
class LineBuilder {
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

export function translate(source: string): TranslateResult {
  const rt = RUNTIME_NAME;
  const lines = source.split(/\r?\n/);
  const out: Out = { lines: [], segments: [], magics: [], magicLines: [], usesRuntime: false };
  try {
    const where = locateMagics(lines);
    if (where.cell >= 0) {
      for (let i = 0; i < where.cell; i++) out.lines.push(lines[i]);
      cellMagic(lines, where.cell, rt, out);
    } else {
      const magic = new Set(where.lines);
      lines.forEach((text, i) => (magic.has(i) ? lineMagic(text, i + 1, rt, out) : out.lines.push(text)));
    }
  } catch (e) {
    if (e instanceof Fail) return { error: e.detail };
    throw e;
  }
  return { code: out.lines.join("\n"), magics: out.magics, segments: out.segments, magicLines: out.magicLines, usesRuntime: out.usesRuntime };
}

/**
 * A line magic: `%` then a letter, `_`, `?` or a second `%`. A `%` followed by a blank, a digit or a
 * bracket continues an expression (`total\n  % 3`) and stays TypeScript.
 */
const LINE_MAGIC_START = /^\s*%[%A-Za-z_?]/;

/**
 * Where the magics of a cell are: `cell`, the 0-based line of a cell magic (-1 for none: then the
 * cell is all TypeScript and line magics), and `lines`, the 0-based lines of line magics.
 */
export function locateMagics(lines: readonly string[]): { cell: number; lines: number[] } {
  const first = lines.findIndex((l) => l.trim() !== "");
  if (first >= 0 && /^\s*%%/.test(lines[first])) return { cell: first, lines: [] };
  const found: number[] = [];
  const scanner = new LineScanner();
  lines.forEach((text, i) => {
    if (scanner.atStatementLevel && LINE_MAGIC_START.test(text)) {
      found.push(i);
      scanner.skip();
    } else scanner.feed(text);
  });
  return { cell: -1, lines: found };
}

/**
 * The cell with its magics replaced by spaces (the same length, so positions hold): what tslab's
 * completion, inspection and is-complete checks see.
 */
export function blankMagics(source: string): string {
  const lines = source.split(/(?<=\n)/);
  const where = locateMagics(lines.map((l) => l.replace(/\r?\n$/, "")));
  const blank = (l: string) => l.replace(/[^\r\n]/g, " ");
  if (where.cell >= 0) return lines.map(blank).join("");
  const magic = new Set(where.lines);
  return lines.map((l, i) => (magic.has(i) ? blank(l) : l)).join("");
}

/**
 * Where a position in the generated code (1-based line and column, as tslab prints diagnostics)
 * comes from in the cell: the user's word it falls in, else the magic's `%`, else the same place.
 */
export function sourcePosition(t: Pick<Translation, "segments" | "magicLines">, line: number, column: number): { line: number; column: number } {
  const magic = t.magicLines.find((m) => m.line === line);
  if (magic === undefined) return { line, column };
  const c = column - 1;
  const seg = t.segments.find((s) => s.line === line && c >= s.column && c <= s.column + s.length);
  if (seg !== undefined) return { line, column: seg.sourceColumn + Math.min(c - seg.column, seg.length) + 1 };
  return { line, column: magic.column + 1 };
}

function helpCall(rt: string, name: string | undefined, kind: MagicKind | undefined): string {
  return `${rt}.help(${name === undefined ? "" : `${JSON.stringify(name)}, ${JSON.stringify(kind)}`});`;
}

function unknownMagic(name: string, kind: MagicKind, line: number, column: number): Fail {
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
function magicHead(text: string, at: number, prefix: string, line: number): { name: string; help: boolean; rest: number } {
  const m = /^([A-Za-z_]\w*)?(\?*)/.exec(text.slice(at + prefix.length))!;
  const name = m[1] ?? "";
  const help = m[2].length > 0;
  const rest = at + prefix.length + m[0].length;
  if (name === "") {
    // "%?" or "%%?" alone: help on every magic.
    if (help && text.slice(rest).trim() === "") return { name: "", help: true, rest };
    const word = text.slice(at).split(/\s/)[0];
    throw new Fail({ message: `a magic name must follow ${prefix} directly, as in ${prefix}${prefix === "%%" ? "grid" : "time"} (%lsmagic lists them), got ${JSON.stringify(word)}`, word, line, column: at + 1 });
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

// ---------------------------------------------------------------------------------------------
// Line magics.

function lineMagic(text: string, line: number, rt: string, out: Out): void {
  const at = text.search(/%/);
  const indent = text.slice(0, at);
  const cell = text.startsWith("%%", at);
  const head = magicHead(text, at, cell ? "%%" : "%", line);
  if (cell && !head.help) {
    const word = text.slice(at).split(/\s/)[0];
    throw new Fail({ message: `the cell magic ${word} must be the first line of its cell`, word, line, column: at + 1 });
  }
  const label = `${cell ? "%%" : "%"}${head.name}`;
  const b = new LineBuilder(line).add(indent);
  const done = () => {
    out.lines.push(b.text);
    out.segments.push(...b.segments);
    out.magicLines.push({ line, column: at });
    out.magics.push(head.name === "" ? `${label}?` : label);
    out.usesRuntime = true;
  };
  const args = text.slice(head.rest);
  if (head.help) {
    const kind = cell ? "cell" : "line";
    if (head.name !== "" && findMagic(head.name) === undefined) throw unknownMagic(head.name, kind, line, at + 1);
    const info = findMagic(head.name, kind) ?? findMagic(head.name);
    b.add(helpCall(rt, info?.name, info?.kind));
    return done();
  }
  const magic = findMagic(head.name, "line");
  if (magic === undefined) throw unknownMagic(head.name, "line", line, at + 1);
  switch (magic.name) {
    case "time":
      timeMagic(args, head.rest, line, label, rt, b);
      break;
    case "timeit":
      timeitMagic(args, head.rest, line, rt, b);
      break;
    case "lsmagic":
    case "magic": {
      const extra = tokenize(text, head.rest, line);
      if (extra.length > 0) {
        throw new Fail({ message: `${label} takes no arguments, got ${JSON.stringify(extra[0].text)}`, word: extra[0].text, line, column: extra[0].column + 1 });
      }
      b.add(magic.name === "lsmagic" ? `${rt}.lsmagic();` : helpCall(rt, undefined, undefined));
      break;
    }
    case "rbp":
      rbpMagic(text, head.rest, line, rt, b);
      break;
  }
  done();
}

/** The statement of `%time` / `%timeit`: its text, column, and a trailing comment to keep. */
function statementOf(args: string, from: number, label: string, line: number, magicColumn: number): { stmt: string; column: number; comment: string } {
  const { code, comment } = splitLineComment(args);
  const lead = code.length - code.trimStart().length;
  const stmt = code.trim().replace(/;+$/, "").trimEnd();
  if (stmt === "") {
    throw new Fail({ message: `${label} needs a statement to time, e.g. ${findMagic(label.slice(1), "line")!.example.split("\n")[0]}`, word: label, line, column: magicColumn });
  }
  return { stmt, column: from + lead, comment: comment === "" ? "" : ` ${comment}` };
}

function timeMagic(args: string, from: number, line: number, label: string, rt: string, b: LineBuilder): void {
  const { stmt, column, comment } = statementOf(args, from, label, line, from - label.length + 1);
  if (STATEMENT_START.test(stmt) || hasTopLevelSemicolon(stmt)) {
    b.add(`${rt}.timeStart(${line}); `).user(stmt, column).add(`; ${rt}.timeEnd(${line});${comment}`);
  } else {
    // An expression: its value stays the statement's value (and the cell's, on the last line).
    b.add(`${rt}.timed(${rt}.timeStart(${line}), (`).user(stmt, column).add(`));${comment}`);
  }
}

function hasTopLevelSemicolon(stmt: string): boolean {
  let quote: string | undefined;
  let depth = 0;
  for (let i = 0; i < stmt.length; i++) {
    const c = stmt[i];
    if (quote !== undefined) {
      if (c === "\\") i++;
      else if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'" || c === "`") quote = c;
    else if ("([{".includes(c)) depth++;
    else if (")]}".includes(c)) depth--;
    else if (c === ";" && depth === 0) return true;
  }
  return false;
}

function timeitMagic(args: string, from: number, line: number, rt: string, b: LineBuilder): void {
  const opts: { n?: number; r?: number } = {};
  let i = 0;
  for (;;) {
    const m = /^(\s*)(-[A-Za-z]+)(?:\s*(\S+))?/.exec(args.slice(i));
    if (m === null || /^-\d/.test(m[2])) break;
    const flag = m[2];
    const col = from + i + m[1].length + 1;
    const known = flag.startsWith("-n") ? "n" : flag.startsWith("-r") ? "r" : undefined;
    if (known === undefined) {
      throw new Fail({ message: `%timeit has no option ${flag}${didYouMean(flag, ["-n", "-r"], (s) => s)} (-n <loops>, -r <repeats>)`, word: flag, line, column: col });
    }
    // -n100 as well as -n 100.
    const glued = flag.length > 2 ? flag.slice(2) : undefined;
    if (glued !== undefined && !/^\d+$/.test(glued)) {
      throw new Fail({ message: `%timeit has no option ${flag} (-n <loops>, -r <repeats>)`, word: flag, line, column: col });
    }
    const raw = glued ?? m[3];
    if (raw === undefined || !/^\d+$/.test(raw) || Number(raw) < 1 || !Number.isSafeInteger(Number(raw))) {
      const valueColumn = glued !== undefined ? col + 2 : col + m[0].length - m[1].length - (m[3]?.length ?? 0);
      throw new Fail({
        message: `%timeit ${flag.slice(0, 2)} needs a whole number of ${known === "n" ? "loops" : "repeats"} of at least 1${raw !== undefined ? `, got ${JSON.stringify(raw)}` : ""}`,
        word: raw ?? flag,
        line,
        column: raw !== undefined ? valueColumn : col,
      });
    }
    if (opts[known] !== undefined) throw new Fail({ message: `%timeit ${flag.slice(0, 2)} is given twice`, word: flag, line, column: col });
    opts[known] = Number(raw);
    i += m[0].length;
  }
  const { stmt, column, comment } = statementOf(args.slice(i), from + i, "%timeit", line, from - "%timeit".length + 1);
  const isAsync = /\bawait\b/.test(stmt);
  b.add(`${isAsync ? "await " : ""}${rt}.timeit(${isAsync ? "async " : ""}() => { `)
    .user(stmt, column)
    .add(`; }, ${JSON.stringify(opts)});${comment}`);
}

const RBP_SUBCOMMANDS = ["connect", "quota", "status", "options", "help"];
const CONNECT_KEYS = ["url", "access_id", "timeout", "workers", "quota", "version"];
const SECRET_KEYS = ["api_key", "apikey", "key", "csa_api_key", "token", "secret"];

function rbpMagic(text: string, from: number, line: number, rt: string, b: LineBuilder): void {
  const tokens = tokenize(text, from, line);
  if (tokens.length === 0) {
    b.add(helpCall(rt, "rbp", "line"));
    return;
  }
  const [sub, ...rest] = tokens;
  const col = (t: Token) => t.column + 1;
  const noMore = (after: Token, what: string) => {
    if (rest.length > 0) {
      const extra = rest[0];
      throw new Fail({ message: `%rbp ${after.text} ${what}, got ${JSON.stringify(extra.text)}`, word: extra.text, line, column: col(extra) });
    }
  };
  switch (sub.text) {
    case "help":
      noMore(sub, "takes no arguments");
      b.add(helpCall(rt, "rbp", "line"));
      return;
    case "quota":
      noMore(sub, "takes no arguments");
      b.add(`await ${rt}.quota();`);
      return;
    case "options": {
      const a = rest[0];
      if (a === undefined) {
        throw new Fail({ message: `%rbp options needs an analysis: %rbp options ${ANALYSES.join(" | ")}`, word: "options", line, column: col(sub) });
      }
      const analysis = a.text.toLowerCase();
      if (!(ANALYSES as readonly string[]).includes(analysis)) {
        throw new Fail({ message: `unknown analysis ${JSON.stringify(a.text)}${didYouMean(a.text, ANALYSES)}; expected one of ${ANALYSES.join(", ")}`, word: a.text, line, column: col(a) });
      }
      if (rest.length > 1) {
        throw new Fail({ message: `%rbp options takes one analysis, got ${JSON.stringify(rest[1].text)} too`, word: rest[1].text, line, column: col(rest[1]) });
      }
      b.add(`await ${rt}.options(${JSON.stringify(analysis)});`);
      return;
    }
    case "status":
      statusMagic(sub, rest, line, rt, b);
      return;
    case "connect":
      b.add(`await ${rt}.connect(${JSON.stringify(connectOptions(rest, line))});`);
      return;
    default:
      throw new Fail({
        message: `unknown %rbp command ${JSON.stringify(sub.text)}${didYouMean(sub.text, RBP_SUBCOMMANDS)}; expected one of ${RBP_SUBCOMMANDS.join(", ")}`,
        word: sub.text,
        line,
        column: sub.column + 1,
      });
  }
}

function statusMagic(sub: Token, rest: Token[], line: number, rt: string, b: LineBuilder): void {
  const usage = "%rbp status <prediction or receipt variable> | <job_id> <job_code> | <job_id>/<job_code>";
  if (rest.length === 0) throw new Fail({ message: `%rbp status needs a job: ${usage}`, word: "status", line, column: sub.column + 1 });
  const [a, c, ...more] = rest;
  if (more.length > 0) throw new Fail({ message: `%rbp status takes one job, got ${JSON.stringify(more[0].text)} too (${usage})`, word: more[0].text, line, column: more[0].column + 1 });
  const receipt = (id: string, code: string, at: Token) => {
    if (!/^\d+$/.test(id)) throw new Fail({ message: `a job id is a whole number, got ${JSON.stringify(id)} (${usage})`, word: id, line, column: at.column + 1 });
    if (code === "") throw new Fail({ message: `the job code is missing (${usage})`, word: at.text, line, column: at.column + 1 });
    return `{ job_id: ${Number(id)}, job_code: ${JSON.stringify(code)} }`;
  };
  if (c !== undefined) {
    b.add(`await ${rt}.status(${receipt(unquote(a.text, line, a.column + 1), unquote(c.text, line, c.column + 1), a)});`);
    return;
  }
  if (a.text.startsWith("{")) {
    const r = parseJson(a.text);
    if (!r.ok) throw new Fail({ message: `the receipt is not valid JSON: ${r.message}`, word: a.text, line, column: a.column + r.index + 1 });
    const v = r.value as Record<string, unknown>;
    if (typeof v !== "object" || v === null || v.job_id === undefined || v.job_code === undefined) {
      throw new Fail({ message: `a receipt has job_id and job_code: {"job_id": ..., "job_code": ...}`, word: a.text, line, column: a.column + 1 });
    }
    b.add(`await ${rt}.status(${receipt(String(v.job_id), String(v.job_code), a)});`);
    return;
  }
  const slash = /^([^/\s]+)\/([^/\s]+)$/.exec(a.text);
  if (slash !== null && !IDENT_PATH.test(a.text)) {
    b.add(`await ${rt}.status(${receipt(slash[1], slash[2], a)});`);
    return;
  }
  if (!IDENT_PATH.test(a.text) || RESERVED.has(a.text)) {
    throw new Fail({ message: `${JSON.stringify(a.text)} is not a variable name nor a receipt (${usage})`, word: a.text, line, column: a.column + 1 });
  }
  b.add(`await ${rt}.status(`).user(a.text, a.column).add(`);`);
}

interface ConnectSpec {
  hosted?: boolean;
  baseUrl?: string;
  accessId?: string;
  apiVersion?: "v3" | "v2";
  timeoutMs?: number;
  local?: { workers?: number; quota?: number };
  /** `fresh`: a new connection (a new embedded service) rather than the running one. */
  fresh?: boolean;
}

function readVersion(v: string, line: number, column: number): "v3" | "v2" {
  const s = v.toLowerCase();
  if (s === "v3" || s === "3") return "v3";
  if (s === "v2" || s === "2") return "v2";
  throw new Fail({ message: `unknown API version ${JSON.stringify(v)}; expected v3 or v2`, word: v, line, column });
}

function connectOptions(tokens: Token[], line: number): ConnectSpec {
  const spec: ConnectSpec = {};
  let target: "local" | "hosted" | "url" | undefined;
  const seen = new Set<string>();
  for (const [index, tok] of tokens.entries()) {
    const column = tok.column + 1;
    const eq = tok.text.indexOf("=");
    if (eq < 0) {
      if (/^v?[23]$/i.test(tok.text)) {
        if (spec.apiVersion !== undefined) throw new Fail({ message: `the API version is given twice`, word: tok.text, line, column });
        spec.apiVersion = readVersion(tok.text, line, column);
        seen.add("version");
        continue;
      }
      if (index === 0 && /^https?:\/\//i.test(tok.text)) {
        try {
          new URL(tok.text);
        } catch {
          throw new Fail({ message: `${JSON.stringify(tok.text)} is not a valid URL`, word: tok.text, line, column });
        }
        target = "url";
        spec.hosted = true;
        spec.baseUrl = tok.text;
        continue;
      }
      if (tok.text === "fresh") {
        if (spec.fresh === true) throw new Fail({ message: `%rbp connect: fresh is given twice`, word: tok.text, line, column });
        spec.fresh = true;
        continue;
      }
      if (index === 0 && (tok.text === "local" || tok.text === "hosted")) {
        target = tok.text;
        spec.hosted = tok.text === "hosted";
        continue;
      }
      const hint = index === 0 ? didYouMean(tok.text, ["local", "hosted"]) : didYouMean(tok.text, ["v3", "v2", "fresh", ...CONNECT_KEYS.map((k) => `${k}=`)]);
      throw new Fail({
        message: `%rbp connect: unexpected ${JSON.stringify(tok.text)}${hint} (%rbp connect [local | hosted | <url>] [v3 | v2] [fresh] [key=value ...])`,
        word: tok.text,
        line,
        column,
      });
    }
    const key = tok.text.slice(0, eq);
    const value = unquote(tok.text.slice(eq + 1), line, column + eq + 1);
    if (SECRET_KEYS.includes(key.toLowerCase())) {
      throw new Fail({
        message: `%rbp connect does not take the API key in the notebook (where it would be saved and shared): set CSA_API_KEY in the environment or in a .env file beside the notebook`,
        word: key,
        line,
        column,
      });
    }
    if (!CONNECT_KEYS.includes(key)) {
      throw new Fail({ message: `%rbp connect has no setting ${JSON.stringify(key)}${didYouMean(key, CONNECT_KEYS)}; it takes ${CONNECT_KEYS.join(", ")}`, word: key, line, column });
    }
    if (seen.has(key)) throw new Fail({ message: `%rbp connect: ${key} is given twice`, word: key, line, column });
    seen.add(key);
    if (value === "") throw new Fail({ message: `%rbp connect: ${key} needs a value (${key}=<value>)`, word: key, line, column });
    const hostedOnly = key === "url" || key === "access_id";
    const localOnly = key === "workers" || key === "quota";
    if ((hostedOnly && target === "local") || (localOnly && (target === "hosted" || target === "url"))) {
      throw new Fail({ message: `%rbp connect: ${key} is a setting of ${hostedOnly ? "a hosted" : "the local"} service, not of ${target === "local" ? "the local one" : "a hosted one"}`, word: key, line, column });
    }
    const wholeNumber = (min: number): number => {
      if (!/^\d+$/.test(value) || Number(value) < min) {
        throw new Fail({ message: `%rbp connect: ${key} must be a whole number of at least ${min}, got ${JSON.stringify(value)}`, word: value, line, column: column + eq + 1 });
      }
      return Number(value);
    };
    switch (key) {
      case "url":
        try {
          if (!/^https?:$/.test(new URL(value).protocol)) throw new Error();
        } catch {
          throw new Fail({ message: `%rbp connect: url must be an http(s) address, got ${JSON.stringify(value)}`, word: value, line, column: column + eq + 1 });
        }
        if (spec.baseUrl !== undefined) throw new Fail({ message: `%rbp connect: the address is given twice`, word: key, line, column });
        spec.baseUrl = value;
        spec.hosted = true;
        break;
      case "access_id":
        spec.accessId = value;
        break;
      case "timeout": {
        const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(value);
        if (m === null || Number(m[1]) <= 0) {
          throw new Fail({ message: `%rbp connect: timeout must be a positive duration (30, 30s, 500ms, 2m), got ${JSON.stringify(value)}`, word: value, line, column: column + eq + 1 });
        }
        const unit = m[2] ?? "s";
        spec.timeoutMs = Math.round(Number(m[1]) * (unit === "ms" ? 1 : unit === "s" ? 1000 : 60_000));
        break;
      }
      case "workers":
        spec.local = { ...spec.local, workers: wholeNumber(1) };
        spec.hosted = false;
        break;
      case "quota":
        spec.local = { ...spec.local, quota: wholeNumber(0) };
        spec.hosted = false;
        break;
      case "version":
        spec.apiVersion = readVersion(value, line, column + eq + 1);
        break;
    }
  }
  return spec;
}

// ---------------------------------------------------------------------------------------------
// Cell magics.

const COLUMN_KEYS: Record<string, "y" | "X" | "theta"> = { y: "y", Y: "y", X: "X", x: "X", theta: "theta", Theta: "theta", THETA: "theta" };

interface Located {
  value: unknown;
  key: string;
  line: number;
  column: number;
}

function cellMagic(lines: string[], index: number, rt: string, out: Out): void {
  const line = index + 1;
  const text = lines[index];
  const at = text.indexOf("%%");
  const head = magicHead(text, at, "%%", line);
  const label = `%%${head.name}`;
  const blankBody = () => {
    for (let i = index + 1; i < lines.length; i++) out.lines.push("");
  };
  const finish = (code: LineBuilder) => {
    out.lines.push(code.text);
    out.segments.push(...code.segments);
    out.magicLines.push({ line, column: at });
    out.magics.push(head.name === "" ? "%%?" : label);
    out.usesRuntime = true;
    blankBody();
  };
  const b = new LineBuilder(line).add(text.slice(0, at));
  if (head.help) {
    if (head.name !== "" && findMagic(head.name) === undefined) throw unknownMagic(head.name, "cell", line, at + 1);
    const info = findMagic(head.name, "cell") ?? findMagic(head.name);
    return finish(b.add(helpCall(rt, info?.name, info?.kind)));
  }
  const magic = findMagic(head.name, "cell");
  if (magic === undefined) throw unknownMagic(head.name, "cell", line, at + 1);
  const analysis = magic.name as Analysis;

  const tokens = tokenize(text, head.rest, line);
  if (tokens.some((t) => t.text === "--help" || t.text === "-h")) return finish(b.add(helpCall(rt, magic.name, "cell")));

  const usage = magic.usage;
  const dataTok = tokens.shift();
  if (dataTok === undefined) {
    throw new Fail({ message: `${label} needs the data: the name of a dataframe (or rows, or columns) in scope, as in ${usage}`, word: label, line, column: at + 1 });
  }
  if (dataTok.text === "->" || dataTok.text.includes("=")) {
    throw new Fail({
      message: `${label} needs the data first, before ${JSON.stringify(dataTok.text)}: ${usage}`,
      word: dataTok.text,
      line,
      column: dataTok.column + 1,
    });
  }
  if (!IDENT_PATH.test(dataTok.text) || RESERVED.has(dataTok.text.split(".")[0])) {
    throw new Fail({
      message: `${label}: ${JSON.stringify(dataTok.text)} is not the name of a variable; name the dataframe (or rows, or columns) in scope, as in ${usage}`,
      word: dataTok.text,
      line,
      column: dataTok.column + 1,
    });
  }

  const known = OPTION_KEYS[analysis];
  const spec: Partial<Record<"y" | "X" | "theta", { code?: string; user?: Token; value?: unknown }>> = {};
  const options = new Map<string, Located>();
  let bind: string | undefined;
  for (let i = 0; i < tokens.length; i++) {
    const tok = tokens[i];
    const column = tok.column + 1;
    if (tok.text === "->") {
      const name = tokens[i + 1];
      if (name === undefined) throw new Fail({ message: `-> needs a variable name to bind the prediction to: ${label} ... -> fit1`, word: "->", line, column });
      if (bind !== undefined) throw new Fail({ message: `${label} binds one name (-> ${bind}), got -> twice`, word: "->", line, column });
      if (!IDENT.test(name.text) || RESERVED.has(name.text)) {
        throw new Fail({
          message: `-> ${name.text}: ${RESERVED.has(name.text) ? `${name.text} is a reserved word` : "not a valid variable name"}; use letters, digits, _ and $, not starting with a digit`,
          word: name.text,
          line,
          column: name.column + 1,
        });
      }
      if (name.text === dataTok.text.split(".")[0]) {
        throw new Fail({ message: `-> ${name.text} would replace the data the cell reads; choose another name`, word: name.text, line, column: name.column + 1 });
      }
      bind = name.text;
      const after = tokens[i + 2];
      if (after !== undefined) {
        throw new Fail({ message: `-> ${bind} must end the line, got ${JSON.stringify(after.text)} after it`, word: after.text, line, column: after.column + 1 });
      }
      break;
    }
    const eq = tok.text.indexOf("=");
    if (eq < 0) {
      const hint = tok.text.toLowerCase() === "last" || /^-?\d+$/.test(tok.text) ? ` (theta=${tok.text}?)` : "";
      throw new Fail({
        message: `${label}: unexpected ${JSON.stringify(tok.text)}${hint}; after the data come key=value settings (y=<column>, X=<columns>, theta=<rows>) and -> <name>`,
        word: tok.text,
        line,
        column,
      });
    }
    const key = tok.text.slice(0, eq);
    const raw = tok.text.slice(eq + 1);
    const valueColumn = tok.column + eq + 1;
    if (key === "") throw new Fail({ message: `${label}: ${JSON.stringify(tok.text)} has no name before =`, word: tok.text, line, column });
    const col = COLUMN_KEYS[key];
    if (col !== undefined) {
      if (spec[col] !== undefined) throw new Fail({ message: `${label}: ${col} is given twice`, word: key, line, column });
      if (raw === "") throw new Fail({ message: `${label}: ${key}= needs a value${col === "theta" ? " (last, a row position, positions like 0,-1, or a variable)" : ""}`, word: key, line, column });
      spec[col] = columnValue(col, raw, line, valueColumn, label);
      continue;
    }
    if (known.includes(key)) {
      if (options.has(key)) throw new Fail({ message: `${label}: option ${key} is given twice`, word: key, line, column });
      options.set(key, { value: readValue(raw, { label, key, line, keyColumn: column, column: valueColumn + 1 }), key, line, column });
      continue;
    }
    throw unknownOption(key, analysis, label, line, column, true);
  }

  readBody(lines, index + 1, analysis, label, options);
  checkOptions(analysis, label, options);

  // The call, all on the magic's line.
  const name = bind ?? "_";
  // Several row positions are an experiment: typed as one (a variable's rows are only known at run time).
  const theta = spec.theta?.value;
  const call = Array.isArray(theta) && theta.length > 1 ? "runExperiment" : "run";
  b.add(`const ${name} = await ${rt}.${call}(${JSON.stringify(analysis)}, `).user(dataTok.text, dataTok.column).add(", {");
  const parts = (["y", "X", "theta"] as const).filter((k) => spec[k] !== undefined);
  parts.forEach((k, i) => {
    const v = spec[k]!;
    b.add(`${i > 0 ? ", " : " "}${k}: `);
    if (v.user !== undefined) b.user(v.user.text, v.user.column);
    else b.add(JSON.stringify(v.value));
  });
  const opts: Record<string, unknown> = {};
  for (const [k, v] of options) opts[k] = v.value;
  b.add(`${parts.length > 0 ? " " : ""}}, ${JSON.stringify(opts)}); `);
  if (name !== "_") b.add(`const _ = ${name}; `);
  b.add(name);
  finish(b);
}

function columnValue(col: "y" | "X" | "theta", raw: string, line: number, column: number, label: string): { value?: unknown; user?: Token } {
  const at = column + 1;
  if (col === "y") {
    if (raw.startsWith("[") || splitCommas(raw).length > 1) {
      throw new Fail({ message: `${label}: y names one column (the outcome), got ${raw}`, word: raw, line, column: at });
    }
    return { value: unquote(raw, line, at) };
  }
  if (col === "X") {
    if (raw.startsWith("[")) {
      const r = parseJson(raw);
      if (!r.ok) throw new Fail({ message: `${label}: X=${raw} is not a valid JSON list: ${r.message}`, word: raw, line, column: at + r.index });
      if (!Array.isArray(r.value) || r.value.length === 0 || !r.value.every((v) => typeof v === "string" && v !== "")) {
        throw new Fail({ message: `${label}: X lists column names, e.g. X=["Horsepower", "Weight_in_lbs"], got ${raw}`, word: raw, line, column: at });
      }
      return { value: r.value };
    }
    const names = splitCommas(raw).map((p) => {
      if (p.text.trim() === "") throw new Fail({ message: `${label}: an empty column name in X=${raw}`, word: raw, line, column: at });
      return unquote(p.text, line, at + p.offset);
    });
    return { value: names };
  }
  // theta
  if (raw.toLowerCase() === "last") return { value: "last" };
  if (/^-?\d+$/.test(raw)) return { value: Number(raw) };
  const rows = (list: unknown[]): number[] =>
    list.map((v) => {
      if (typeof v !== "number" || !Number.isInteger(v)) {
        throw new Fail({ message: `${label}: theta positions are whole row numbers (negative from the end), got ${raw}`, word: raw, line, column: at });
      }
      return v;
    });
  if (raw.startsWith("[")) {
    const r = parseJson(raw);
    if (!r.ok || !Array.isArray(r.value)) throw new Fail({ message: `${label}: theta=${raw} is not a list of row positions${r.ok ? "" : `: ${r.message}`}`, word: raw, line, column: at + (r.ok ? 0 : r.index) });
    return { value: rows(r.value) };
  }
  if (raw.includes(",")) {
    const parts = splitCommas(raw);
    return { value: rows(parts.map((p) => (/^\s*-?\d+\s*$/.test(p.text) ? Number(p.text) : p.text))) };
  }
  if (IDENT_PATH.test(raw) && !RESERVED.has(raw.split(".")[0])) return { user: { text: raw, column: column } };
  throw new Fail({
    message: `${label}: theta takes last, a row position (0-based, negative from the end), positions like 0,-1, or the name of a variable holding new circumstances; got ${raw}`,
    word: raw,
    line,
    column: at,
  });
}

function unknownOption(key: string, analysis: Analysis, label: string, line: number, column: number, header: boolean): Fail {
  const elsewhere = ANALYSES.filter((a) => a !== analysis && OPTION_KEYS[a].includes(key));
  if (elsewhere.length > 0) {
    return new Fail({ message: `${label}: ${key} is an option of ${elsewhere.join(" and ")}, not of ${analysis} (%rbp options ${analysis} lists ${analysis}'s)`, word: key, line, column });
  }
  const candidates = header ? ["y", "X", "theta", ...OPTION_KEYS[analysis]] : [...OPTION_KEYS[analysis]];
  return new Fail({
    message: `${label}: unknown option ${JSON.stringify(key)}${didYouMean(key, candidates)} (%rbp options ${analysis} lists the options)`,
    word: key,
    line,
    column,
  });
}

/** The options of a cell magic's body: a JSON object, or `key: value` lines. */
function readBody(lines: string[], from: number, analysis: Analysis, label: string, options: Map<string, Located>): void {
  const known = OPTION_KEYS[analysis];
  const isComment = (l: string) => /^\s*(#|\/\/)/.test(l);
  const firstBody = lines.findIndex((l, i) => i >= from && l.trim() !== "" && !isComment(l));
  if (firstBody < 0) return;
  const add = (key: string, value: unknown, line: number, column: number) => {
    if (COLUMN_KEYS[key] !== undefined) {
      throw new Fail({ message: `${label}: ${key} belongs on the first line (${label} <data> ${key}=...), not among the options`, word: key, line, column });
    }
    if (!known.includes(key)) throw unknownOption(key, analysis, label, line, column, false);
    if (options.has(key)) throw new Fail({ message: `${label}: option ${key} is given twice`, word: key, line, column });
    options.set(key, { value, key, line, column });
  };

  if (lines[firstBody].trimStart().startsWith("{")) {
    // JSON: comment lines become blank so that positions still count.
    const body = lines.slice(firstBody).map((l) => (isComment(l) ? "" : l));
    const text = body.join("\n");
    const r = parseJson(text);
    if (!r.ok) {
      const before = text.slice(0, r.index).split("\n");
      const line = firstBody + before.length;
      const column = before[before.length - 1].length + 1;
      const word = (lines[line - 1] ?? "").slice(column - 1).split(/\s/)[0] || "{";
      throw new Fail({ message: `${label}: the options are not valid JSON: ${r.message}`, word, line, column });
    }
    if (typeof r.value !== "object" || r.value === null || Array.isArray(r.value)) {
      throw new Fail({ message: `${label}: the options must be a JSON object ({"threshold": [0, 0.5]}), got a ${Array.isArray(r.value) ? "list" : typeof r.value}`, word: "{", line: firstBody + 1, column: 1 });
    }
    for (const [key, value] of Object.entries(r.value)) {
      // Where the key is written, for messages.
      let line = firstBody + 1;
      let column = 1;
      for (let i = firstBody; i < lines.length; i++) {
        const c = lines[i].indexOf(JSON.stringify(key));
        if (c >= 0) {
          line = i + 1;
          column = c + 2;
          break;
        }
      }
      add(key, value, line, column);
    }
    return;
  }

  for (let i = firstBody; i < lines.length; i++) {
    const text = lines[i];
    const line = i + 1;
    if (text.trim() === "" || isComment(text)) continue;
    const m = /^(\s*)("[^"]*"|'[^']*'|[^:\s]+)\s*:(.*)$/.exec(text);
    if (m === null) {
      const word = text.trim().split(/\s/)[0];
      const column = text.length - text.trimStart().length + 1;
      const eq = /^\s*([\w$]+)\s*=/.exec(text);
      throw new Fail({
        message: `${label}: expected an option as key: value${eq !== null ? ` (write ${eq[1]}: ... with a colon)` : ""}, got ${JSON.stringify(text.trim())}`,
        word,
        line,
        column,
      });
    }
    const key = m[2].replace(/^["']|["']$/g, "");
    const column = m[1].length + 1;
    const valueColumn = text.length - m[3].length + (m[3].length - m[3].trimStart().length) + 1;
    add(key, readValue(m[3], { label, key, line, keyColumn: column, column: valueColumn }), line, column);
  }
}

/** Checks the values with the service's own option reader (aliases, types, conflicts). */
function checkOptions(analysis: Analysis, label: string, options: Map<string, Located>): void {
  const raw: Record<string, unknown> = {};
  for (const [k, v] of options) raw[k] = v.value;
  try {
    normalizeOptions(analysis, raw, "v3");
  } catch (e) {
    if (!(e instanceof InvalidInputError)) throw e;
    const key = e.field.replace(/^options\./, "").split(/[/.[]/)[0];
    const at = options.get(key);
    throw new Fail({
      message: `${label}: bad value for option ${e.message.replace(/options\./g, "")}`,
      word: key,
      line: at?.line ?? 1,
      column: at?.column ?? 1,
    });
  }
}
