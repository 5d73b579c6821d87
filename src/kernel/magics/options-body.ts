/**
 * The body of a cell magic: a JSON object, or `key: value` lines, read into the options and
 * checked against the analysis. Pure.
 */
import { OPTION_KEYS, normalizeOptions, type Analysis } from "../../api/options.js";
import { InvalidInputError } from "../../engine/errors.js";
import { parseJson } from "../json.js";
import { Fail, readValue } from "./syntax.js";
import { didYouMean } from "../../internal/suggest.js";
import { ANALYSES } from "../../api/options.js";

export const COLUMN_KEYS: Record<string, "y" | "X" | "theta"> = { y: "y", Y: "y", X: "X", x: "X", theta: "theta", Theta: "theta", THETA: "theta" };

export interface Located {
  value: unknown;
  key: string;
  line: number;
  column: number;
}

export function unknownOption(key: string, analysis: Analysis, label: string, line: number, column: number, header: boolean): Fail {
  const elsewhere = ANALYSES.filter((a) => a !== analysis && OPTION_KEYS[a].includes(key));
  if (elsewhere.length > 0) {
    return new Fail({
      message: `${label}: ${key} is an option of ${elsewhere.join(" and ")}, not of ${analysis} (%rbp options ${analysis} lists ${analysis}'s)`,
      word: key,
      line,
      column,
    });
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
export function readBody(lines: string[], from: number, analysis: Analysis, label: string, options: Map<string, Located>): void {
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
      throw new Fail({
        message: `${label}: the options must be a JSON object ({"threshold": [0, 0.5]}), got a ${Array.isArray(r.value) ? "list" : typeof r.value}`,
        word: "{",
        line: firstBody + 1,
        column: 1,
      });
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
export function checkOptions(analysis: Analysis, label: string, options: Map<string, Located>): void {
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
