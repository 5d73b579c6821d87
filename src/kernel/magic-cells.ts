/**
 * The magics, as the shell uses them (the grammar and the translation are magics.ts and magics/):
 *
 * - `prepareCell(code)`: the cell translated, or the MagicError outcome of a malformed magic (the
 *   message, then the line with a caret under the word: the did-you-mean text stays whole);
 * - `RUNTIME_IMPORT`: the cell the shell runs through the executor before the first cell that
 *   uses a magic, so `$rbp` (runtime.ts `magicRuntime()`) is an ordinary, typed value of the notebook;
 * - `completeMagic`: magic names after `%` and `%%`, option names in a cell magic's body.
 */
import { fileURLToPath } from "node:url";
import { OPTION_KEYS, type Analysis } from "../api/options.js";
import { CELL_MAGICS, LINE_MAGICS } from "./catalog.js";
import type { ExecuteOutcome } from "./contract.js";
import { locateMagics, sourcePosition, translate, RUNTIME_NAME, type MagicError, type Translation } from "./magics.js";

/** The module the generated code calls (the built runtime.js beside this file). */
export const RUNTIME_PATH = fileURLToPath(new URL("./runtime.js", import.meta.url));
/**
 * The cell that brings the session's runtime into the notebook: one `magicRuntime()` (runtime.ts),
 * whose clocks the session's `%time`s share. `$rbp$` names are hidden from completion (complete.ts).
 */
export const RUNTIME_IMPORT = `import { magicRuntime as $rbp$runtime } from ${JSON.stringify(RUNTIME_PATH)};\nconst ${RUNTIME_NAME} = $rbp$runtime();`;

/** The traceback of a malformed magic: the message, then the line with a caret under the word. */
export function magicTraceback(source: string, error: MagicError): string[] {
  const line = source.split(/\r?\n/)[error.line - 1] ?? "";
  const prefix = `line ${error.line}: `;
  const width = Math.max(1, Math.min(error.word.length, line.length - error.column + 1));
  return [`MagicError: ${error.message}`, `${prefix}${line}`, `${" ".repeat(prefix.length + error.column - 1)}${"^".repeat(width)}`];
}

export type PreparedCell =
  | { ok: true; code: string; usesRuntime: boolean; sourcePosition?: (line: number, column: number) => { line: number; column: number } }
  | { ok: false; outcome: Extract<ExecuteOutcome, { status: "error" }> };

/**
 * A cell ready for the executor: its magics translated (a cell without magics is unchanged).
 *
 * @example
 * prepareCell("%time 1 + 1"); // { ok: true, code: "...$rbp.timeStart(...)...", usesRuntime: true, sourcePosition }
 */
export function prepareCell(code: string): PreparedCell {
  const t = translate(code);
  if ("error" in t) {
    return { ok: false, outcome: { status: "error", ename: "MagicError", evalue: t.error.message, traceback: magicTraceback(code, t.error) } };
  }
  if (t.magics.length === 0) return { ok: true, code, usesRuntime: false };
  const translation: Translation = t;
  // sourcePosition is 1-based; the executor's positions are 0-based.
  const map = (line: number, column: number) => {
    const at = sourcePosition(translation, line + 1, column + 1);
    return { line: at.line - 1, column: at.column - 1 };
  };
  return { ok: true, code: t.code, usesRuntime: t.usesRuntime, sourcePosition: map };
}

export interface MagicCompletion {
  start: number;
  end: number;
  candidates: string[];
}

/** Completion on a magic line (positions in UTF-16 units); undefined when the cursor is not on one. */
export function completeMagic(source: string, cursor: number): MagicCompletion | undefined {
  const lines = source.split("\n");
  let offset = 0;
  let index = 0;
  while (index < lines.length - 1 && offset + lines[index].length < cursor) offset += lines[index++].length + 1;
  const where = locateMagics(lines.map((l) => l.replace(/\r$/, "")));
  const inCell = where.cell >= 0 && index >= where.cell;
  if (!inCell && !where.lines.includes(index)) return undefined;
  const before = lines[index].slice(0, cursor - offset);
  const word = /[%\w]*$/.exec(before)![0];
  const start = cursor - word.length;
  if (word.startsWith("%%")) {
    return { start, end: cursor, candidates: CELL_MAGICS.map((n) => `%%${n}`).filter((c) => c.startsWith(word)) };
  }
  if (word.startsWith("%")) {
    return { start, end: cursor, candidates: [...LINE_MAGICS.map((n) => `%${n}`), ...CELL_MAGICS.map((n) => `%%${n}`)].filter((c) => c.startsWith(word)) };
  }
  if (inCell && index > where.cell && before.trim() === word) {
    const analysis = /%%(\w+)/.exec(lines[where.cell])?.[1] as Analysis | undefined;
    const keys = analysis !== undefined && Object.hasOwn(OPTION_KEYS, analysis) ? OPTION_KEYS[analysis] : [];
    return { start, end: cursor, candidates: keys.filter((k) => k.startsWith(word)) };
  }
  return { start: cursor, end: cursor, candidates: [] };
}
