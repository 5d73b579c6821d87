/**
 * The parts of docs/architecture.md that tests keep true: each sits between `<!-- map:NAME -->` and
 * `<!-- /map:NAME -->`. Some are written by `npm run gen:map` (scripts/gen-map.ts), the others are
 * prose that test/project/architecture.test.ts, environment.test.ts and error-root.test.ts check
 * against the code.
 */
import { readdirSync, readFileSync } from "node:fs";
import { sep } from "node:path";
import { fileURLToPath } from "node:url";

/** A path of the repository, from its root. */
export const repoPath = (path: string): string => fileURLToPath(new URL(`../../${path}`, import.meta.url));

export const ARCHITECTURE = "docs/architecture.md";

const begin = (name: string) => `<!-- map:${name} -->`;
const end = (name: string) => `<!-- /map:${name} -->`;

/**
 * The text between a section's markers.
 *
 * @example
 * section("a <!-- map:x -->\nb\n<!-- /map:x --> c", "x"); // "\nb\n"
 */
export function section(text: string, name: string): string {
  const from = text.indexOf(begin(name));
  const to = text.indexOf(end(name));
  if (from < 0 || to < from) throw new Error(`${ARCHITECTURE}: the markers of section "${name}" are missing (${begin(name)} ... ${end(name)})`);
  return text.slice(from + begin(name).length, to);
}

/**
 * `text` with a section's content replaced by `content`.
 *
 * @example
 * replaceSection("<!-- map:x -->old<!-- /map:x -->", "x", "\nnew\n"); // "<!-- map:x -->\nnew\n<!-- /map:x -->"
 */
export function replaceSection(text: string, name: string, content: string): string {
  section(text, name);
  return text.slice(0, text.indexOf(begin(name)) + begin(name).length) + content + text.slice(text.indexOf(end(name)));
}

/**
 * The rows of the markdown tables in `text`, each as its cells (header and `---` rows left out).
 *
 * @example
 * tableRows("| a | b |\n| --- | --- |\n| `x` | y |"); // [["`x`", "y"]]
 */
export function tableRows(text: string): string[][] {
  const rows = text
    .split("\n")
    .filter((l) => l.trim().startsWith("|"))
    .map((l) =>
      l
        .trim()
        .replace(/^\||\|$/g, "")
        .split(/(?<!\\)\|/)
        .map((c) => c.trim()),
    );
  return rows.filter((r, i) => !r.every((c) => /^-+$/.test(c)) && !(rows[i + 1]?.every((c) => /^-+$/.test(c)) ?? false));
}

/** The backticked words of a table cell. */
export const ticked = (cell: string): string[] => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]);

/** docs/architecture.md as it is now. */
export const readArchitecture = (): string => readFileSync(repoPath(ARCHITECTURE), "utf8");

/**
 * Every TypeScript file of src/, as repository paths, with its text.
 *
 * @example
 * sourceFiles().some((f) => f.path === "src/client/settings.ts"); // true
 */
export function sourceFiles(): { path: string; text: string }[] {
  return (readdirSync(repoPath("src"), { recursive: true }) as string[])
    .filter((p) => p.endsWith(".ts"))
    .sort()
    .map((p) => ({ path: `src/${p.split(sep).join("/")}`, text: readFileSync(repoPath(`src/${p}`), "utf8") }));
}
