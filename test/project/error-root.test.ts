/**
 * One error root: every class in src/ that extends one of JavaScript's own error classes directly
 * is `RbpBaseError` (src/errors) or is listed, with its reason, in docs/architecture.md ("Errors").
 * A new direct subclass fails here until it extends the root or is listed; a listed class that no
 * longer extends a built-in error (converted, renamed or removed) fails until its row is deleted.
 */
import { describe, expect, it } from "vitest";
import { readArchitecture, section, sourceFiles, tableRows, ticked } from "../../scripts/map/doc.js";

const BUILT_IN = "Error|TypeError|RangeError|SyntaxError|EvalError|URIError|ReferenceError|AggregateError";

/** The classes of `text` that extend a built-in error class directly, as "Name (file)". */
function directErrorClasses(files: { path: string; text: string }[]): Map<string, string> {
  const found = new Map<string, string>();
  const pattern = new RegExp(`^\\s*(?:export\\s+)?(?:abstract\\s+)?class\\s+(\\w+)\\s+extends\\s+(?:globalThis\\.)?(?:${BUILT_IN})\\b`, "gm");
  for (const f of files) for (const m of f.text.matchAll(pattern)) if (m[1] !== "RbpBaseError") found.set(m[1], f.path);
  return found;
}

describe("one error root", () => {
  const listed = tableRows(section(readArchitecture(), "error-exceptions")).map((r) => ({ cls: ticked(r[0])[0], why: r[2] ?? "" }));
  const actual = directErrorClasses(sourceFiles());

  it("finds the root itself and the classes it should (the scan is not blind)", () => {
    const sample = [
      {
        path: "src/x.ts",
        text: "export class A extends Error {}\nclass B extends TypeError {\n}\nclass C extends RbpBaseError {}\nexport class RbpBaseError extends Error {}",
      },
    ];
    expect([...directErrorClasses(sample).keys()]).toEqual(["A", "B"]);
    expect(sourceFiles().find((f) => f.path === "src/errors/index.ts")?.text).toMatch(/class RbpBaseError extends Error/);
  });

  it("every class extending a built-in error directly is listed in docs/architecture.md, with a reason", () => {
    const names = new Set(listed.map((l) => l.cls));
    const unlisted = [...actual].filter(([cls]) => !names.has(cls)).map(([cls, file]) => `${cls} (${file})`);
    expect(unlisted, "extend RbpBaseError (src/errors) or list them in docs/architecture.md, section Errors").toEqual([]);
    for (const l of listed) expect(l.why.length, `the reason of ${l.cls}`).toBeGreaterThan(10);
  });

  it("every class listed still extends a built-in error directly", () => {
    const gone = listed.filter((l) => !actual.has(l.cls)).map((l) => l.cls);
    expect(gone, "delete these rows from docs/architecture.md, section Errors").toEqual([]);
  });
});
