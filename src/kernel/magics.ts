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
 * This file holds the entry points and the dispatch of line magics; the parsers are in magics/.
 *
 * The grammar, with every magic's usage and example, is in catalog.ts and in the README of
 * src/kernel.
 */
import { findMagic } from "./catalog.js";
import { LineScanner } from "./scan.js";
import { cellMagic } from "./magics/cell.js";
import { rbpMagic } from "./magics/rbp-line.js";
import {
  Fail,
  LineBuilder,
  RUNTIME_NAME,
  helpCall,
  magicHead,
  tokenize,
  unknownMagic,
  type Out,
  type TranslateResult,
  type Translation,
} from "./magics/syntax.js";
import { timeMagic, timeitMagic } from "./magics/time.js";

export { RUNTIME_NAME, type MagicError, type Segment, type TranslateResult, type Translation } from "./magics/syntax.js";

// The parts, by what they parse: magics/syntax.ts (tokens, values, a magic's head), magics/time.ts
// (%time, %timeit), magics/rbp-line.ts (%rbp and its connect arguments), magics/cell.ts (a cell
// magic's header), magics/options-body.ts (a cell magic's options body).

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
        throw new Fail({
          message: `${label} takes no arguments, got ${JSON.stringify(extra[0].text)}`,
          word: extra[0].text,
          line,
          column: extra[0].column + 1,
        });
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
