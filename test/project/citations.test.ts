/**
 * The project stands on its own: no file cites a folder outside the repository (../shared) or the
 * old specification files by name (api-compat.md, service-api.md, a bare methodology.md or
 * "methodology section N"); they cite the project's own pages under docs/ instead. Inside docs/ the
 * pages link each other by relative names (methodology.md), which is allowed there.
 */
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const REPO = new URL("../../", import.meta.url).pathname;
const SELF = "test/project/citations.test.ts";
const SKIP = new Set(["node_modules", "dist", "test-output", ".jupyter", "reports"]);

function filesUnder(path: string): string[] {
  const st = statSync(path, { throwIfNoEntry: false });
  if (st === undefined) return [];
  if (!st.isDirectory()) return [path];
  return readdirSync(path).flatMap((name) => (SKIP.has(name) ? [] : filesUnder(join(path, name))));
}

const FILES = ["src", "test", "scripts", "bench", "docs", "README.md"]
  .flatMap((p) => filesUnder(join(REPO, p)))
  .map((f) => relative(REPO, f))
  .filter((f) => f !== SELF && /\.(ts|mts|mjs|js|json|md|sh)$/.test(f));

interface Rule {
  what: string;
  pattern: RegExp;
  /** Whether the rule applies to this file. */
  applies?: (file: string) => boolean;
}

const outsideDocs = (file: string) => !file.startsWith("docs/");

const RULES: Rule[] = [
  { what: "a path outside the repository", pattern: /\.\.\/shared\b|shared\/spec\// },
  { what: "the old API specification files", pattern: /\b(?:api-compat|service-api)(?:\.md)?\b/ },
  { what: "methodology.md outside docs/", pattern: /(?<!docs\/)\bmethodology\.md/, applies: outsideDocs },
  { what: "a bare methodology section", pattern: /(?<!docs\/)\bmethodology,? (?:sections? )?\d/i, applies: outsideDocs },
];

/** file:line: text of every line breaking a rule. */
function offences(file: string, text: string): string[] {
  const found: string[] = [];
  text.split("\n").forEach((line, i) => {
    for (const rule of RULES) {
      if (rule.applies !== undefined && !rule.applies(file)) continue;
      if (rule.pattern.test(line)) found.push(`${file}:${i + 1}: ${rule.what}: ${line.trim().slice(0, 120)}`);
    }
  });
  return found;
}

describe("citations", () => {
  it("the scan covers the sources, tests, scripts, benchmarks, docs and README", () => {
    expect(FILES).toContain("README.md");
    expect(FILES).toContain("src/engine/choices.ts");
    expect(FILES).toContain("docs/methodology.md");
    expect(FILES.length).toBeGreaterThan(150);
  });

  it("the rules catch what they are for, and allow docs/ citations", () => {
    expect(offences("src/x.ts", "see ../shared/spec/api-compat.md section 2.2")).toHaveLength(2);
    expect(offences("src/x.ts", "(methodology section 7.5)")).toHaveLength(1);
    expect(offences("src/x.ts", "(spec/methodology.md, tags [G])")).toHaveLength(1);
    expect(offences("src/x.ts", "(docs/methodology.md section 7.5, docs/api.md section 3)")).toEqual([]);
    expect(offences("docs/api.md", "[methodology.md](methodology.md) section 3")).toEqual([]);
    expect(offences("src/x.ts", "The methodology choices the public record leaves open")).toEqual([]);
  });

  it("no file cites ../shared or the old specification files", () => {
    const found = FILES.flatMap((f) => offences(f, readFileSync(join(REPO, f), "utf8")));
    expect(found).toEqual([]);
  });
});
