/**
 * `%time` and `%timeit`: the statement to time (its text, column and trailing comment) and the
 * runtime call that times it. Pure.
 */
import { findMagic } from "../catalog.js";
import { splitLineComment } from "../scan.js";
import { didYouMean } from "../../internal/suggest.js";
import { Fail, LineBuilder, STATEMENT_START } from "./syntax.js";

/** The statement of `%time` / `%timeit`: its text, column, and a trailing comment to keep. */
export function statementOf(args: string, from: number, label: string, line: number, magicColumn: number): { stmt: string; column: number; comment: string } {
  const { code, comment } = splitLineComment(args);
  const lead = code.length - code.trimStart().length;
  const stmt = code.trim().replace(/;+$/, "").trimEnd();
  if (stmt === "") {
    throw new Fail({
      message: `${label} needs a statement to time, e.g. ${findMagic(label.slice(1), "line")!.example.split("\n")[0]}`,
      word: label,
      line,
      column: magicColumn,
    });
  }
  return { stmt, column: from + lead, comment: comment === "" ? "" : ` ${comment}` };
}

export function timeMagic(args: string, from: number, line: number, label: string, rt: string, b: LineBuilder): void {
  const { stmt, column, comment } = statementOf(args, from, label, line, from - label.length + 1);
  if (STATEMENT_START.test(stmt) || hasTopLevelSemicolon(stmt)) {
    b.add(`${rt}.timeStart(${line}); `).user(stmt, column).add(`; ${rt}.timeEnd(${line});${comment}`);
  } else {
    // An expression: its value stays the statement's value (and the cell's, on the last line).
    b.add(`${rt}.timed(${rt}.timeStart(${line}), (`).user(stmt, column).add(`));${comment}`);
  }
}

export function hasTopLevelSemicolon(stmt: string): boolean {
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

export function timeitMagic(args: string, from: number, line: number, rt: string, b: LineBuilder): void {
  const opts: { n?: number; r?: number } = {};
  let i = 0;
  for (;;) {
    const m = /^(\s*)(-[A-Za-z]+)(?:\s*(\S+))?/.exec(args.slice(i));
    if (m === null || /^-\d/.test(m[2])) break;
    const flag = m[2];
    const col = from + i + m[1].length + 1;
    const known = flag.startsWith("-n") ? "n" : flag.startsWith("-r") ? "r" : undefined;
    if (known === undefined) {
      throw new Fail({
        message: `%timeit has no option ${flag}${didYouMean(flag, ["-n", "-r"], (s) => s)} (-n <loops>, -r <repeats>)`,
        word: flag,
        line,
        column: col,
      });
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
  // a statement that awaits is timed by timeitAsync, which awaits each loop (timeit would time the promises'
  // creation only)
  b.add(isAsync ? `await ${rt}.timeitAsync(async () => { ` : `${rt}.timeit(() => { `)
    .user(stmt, column)
    .add(`; }, ${JSON.stringify(opts)});${comment}`);
}
