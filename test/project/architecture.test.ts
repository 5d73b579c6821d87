/**
 * The map of docs/architecture.md against the code: its generated parts (what each folder imports,
 * the diagram, the import rules and their exceptions; `npm run gen:map`) are up to date with
 * dependency-cruiser's graph of src/, the exceptions in .dependency-cruiser.cjs are exactly the edges
 * that break a rule, and the table of folders names every folder of src/ and no other.
 */
import { readdirSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { readArchitecture, repoPath, section, tableRows, ticked } from "../../scripts/map/doc.js";
import { cruise, cruiserConfig, folderImports, mapSections, renderImports, type Violation } from "../../scripts/map/graph.js";

let cruised: ReturnType<typeof cruise>;
beforeAll(() => {
  cruised = cruise();
}, 120_000);

const key = (v: Violation) => `${v.rule}: ${v.from} -> ${v.to}`;

describe("docs/architecture.md, the map", () => {
  it("its generated parts are up to date with the graph (npm run gen:map)", () => {
    const doc = readArchitecture();
    for (const [name, content] of Object.entries(mapSections(cruised))) expect(section(doc, name), `section ${name}: run npm run gen:map`).toBe(content);
  });

  it("the graph is read (a folder that imports nothing shows as such; types-only edges are marked)", () => {
    const table = renderImports(folderImports(cruised.modules));
    expect(table).toMatch(/^\| `src\/errors` \| nothing \|$/m);
    expect(cruised.modules.length).toBeGreaterThan(100);
    const sample = folderImports([
      { source: "src/a/x.ts", dependencies: [{ resolved: "src/b/y.ts", dependencyTypes: ["local", "type-only", "import"] }] },
      { source: "src/b/y.ts", dependencies: [{ resolved: "node:fs", dependencyTypes: ["core"] }] },
    ]);
    expect(renderImports(sample)).toBe("| folder | imports |\n| --- | --- |\n| `src/a` | `b` (types only) |\n| `src/b` | nothing |");
  });

  it("every edge that breaks a rule is a listed exception, and every listed exception is in the code", () => {
    const found = cruised.violations.map(key).sort();
    const listed = cruiserConfig()
      .exceptions.flatMap((e) => e.to.map((to) => key({ rule: e.rule, from: e.from, to })))
      .sort();
    expect(
      found.filter((f) => !listed.includes(f)),
      "not listed: fix the import, or add it to EXCEPTIONS in .dependency-cruiser.cjs with its reason",
    ).toEqual([]);
    expect(
      listed.filter((l) => !found.includes(l)),
      "listed but gone: delete it from EXCEPTIONS in .dependency-cruiser.cjs",
    ).toEqual([]);
  });

  it("names the rules the layers rely on", () => {
    const rules = cruiserConfig().strict.forbidden.map((r) => r.name);
    expect(rules).toEqual(expect.arrayContaining(["no-circular", "engine-is-pure", "notebook-uses-service-index", "display-private", "client-private"]));
  });

  it("the table of folders names every folder of src/, and no other", () => {
    const described = tableRows(section(readArchitecture(), "folders")).map((r) => ticked(r[0])[0]);
    const present = readdirSync(repoPath("src"), { withFileTypes: true })
      .filter((d) => d.isDirectory() || d.name === "index.ts")
      .map((d) => `src/${d.name}`);
    expect([...described].sort()).toEqual(present.sort());
  });
});
