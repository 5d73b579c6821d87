/**
 * A small `.env` reader (no dependency): one `KEY=VALUE` per line.
 *
 * - Blank lines and lines starting with `#` are skipped; an `export ` prefix is allowed.
 * - Values may be bare (trimmed; ` #` starts a comment), 'single-quoted' (taken literally) or
 *   "double-quoted" (\n, \r, \t, \" and \\ escapes). Quoted values stay on one line.
 * - Keys are letters, digits and underscores, not starting with a digit; other lines are ignored.
 * - A later line wins over an earlier one.
 */
import { readFileSync } from "node:fs";

const LINE = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/;

export function parseDotEnv(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.replace(/^\uFEFF/, "").split(/\r?\n/)) {
    if (/^\s*(#|$)/.test(raw)) continue;
    const m = LINE.exec(raw);
    if (!m) continue;
    const [, key, rest] = m;
    out[key] = readValue(rest);
  }
  return out;
}

function readValue(rest: string): string {
  const quote = rest[0];
  if (quote === "'" || quote === '"') {
    const end = rest.indexOf(quote, 1);
    // Double quotes: find the closing quote that is not escaped.
    if (quote === '"') {
      let i = 1;
      let value = "";
      while (i < rest.length) {
        const c = rest[i];
        if (c === "\\" && i + 1 < rest.length) {
          const n = rest[i + 1];
          value += n === "n" ? "\n" : n === "r" ? "\r" : n === "t" ? "\t" : n;
          i += 2;
          continue;
        }
        if (c === '"') return value;
        value += c;
        i++;
      }
      return rest; // unterminated: take the line as it is
    }
    return end > 0 ? rest.slice(1, end) : rest;
  }
  const comment = rest.search(/\s#/);
  return (comment >= 0 ? rest.slice(0, comment) : rest).trim();
}

/** The variables of the file at `path`, or undefined when there is no such file. */
export function readDotEnv(path: string): Record<string, string> | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT" || (error as NodeJS.ErrnoException).code === "EISDIR") return undefined;
    throw error;
  }
  return parseDotEnv(text);
}
