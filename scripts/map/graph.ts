/**
 * The map of src/ from dependency-cruiser's graph: which folder imports which, the diagram of it,
 * the import rules of .dependency-cruiser.cjs and their exceptions. `npm run gen:map` writes them
 * into docs/architecture.md; test/project/architecture.test.ts fails when the page is out of date
 * or the code has an exception not listed (or a listed one is gone).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repoPath } from "./doc.js";

interface Rule {
  name: string;
  comment: string;
}
export interface ImportException {
  rule: string;
  from: string;
  to: string[];
  why: string;
}
interface Dependency {
  resolved: string;
  dependencyTypes: string[];
}
interface Module {
  source: string;
  dependencies: Dependency[];
}
export interface Violation {
  rule: string;
  from: string;
  to: string;
}

/** .dependency-cruiser.cjs, with its rules before the exceptions are applied and the exceptions. */
export function cruiserConfig(): { strict: { forbidden: Rule[] }; exceptions: ImportException[] } {
  return createRequire(import.meta.url)(repoPath(".dependency-cruiser.cjs"));
}

/**
 * dependency-cruiser over src/ under the rules without their exceptions: every module with its
 * imports, and what breaks a rule (which is what the exceptions must be).
 *
 * @example
 * const { modules, violations } = cruise(); // about 8 s
 */
export function cruise(): { modules: Module[]; violations: Violation[] } {
  const dir = mkdtempSync(join(tmpdir(), "rbp-map-"));
  try {
    const config = join(dir, "strict.cjs");
    writeFileSync(config, `module.exports = require(${JSON.stringify(repoPath(".dependency-cruiser.cjs"))}).strict;\n`);
    const bin = repoPath("node_modules/dependency-cruiser/bin/dependency-cruise.mjs");
    const run = spawnSync(process.execPath, [bin, "src", "--config", config, "--output-type", "json"], {
      cwd: repoPath(""),
      encoding: "utf8",
      maxBuffer: 256 * 1024 * 1024,
    });
    if (run.stdout === "" || run.stdout === null) throw new Error(`dependency-cruiser failed (${run.status}): ${run.stderr}`);
    const out = JSON.parse(run.stdout) as { modules: Module[]; summary: { violations: { rule: { name: string }; from: string; to: string }[] } };
    return { modules: out.modules, violations: out.summary.violations.map((v) => ({ rule: v.rule.name, from: v.from, to: v.to })) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The folder of a file of src/ (`src/engine/x.ts` -> `engine`); the package root is `index.ts`. */
function folderOf(path: string): string | undefined {
  const m = /^src\/(?:([^/]+)\/|(index\.ts)$)/.exec(path);
  return m === null ? undefined : (m[1] ?? m[2]);
}

/** Which folder imports which: for each, the folders it imports and whether only types. */
export function folderImports(modules: Module[]): Map<string, Map<string, { typesOnly: boolean }>> {
  const graph = new Map<string, Map<string, { typesOnly: boolean }>>();
  for (const m of modules) {
    const from = folderOf(m.source);
    if (from === undefined) continue;
    const edges = graph.get(from) ?? new Map<string, { typesOnly: boolean }>();
    graph.set(from, edges);
    for (const d of m.dependencies) {
      const to = folderOf(d.resolved);
      if (to === undefined || to === from) continue;
      const typesOnly = d.dependencyTypes.includes("type-only");
      edges.set(to, { typesOnly: (edges.get(to)?.typesOnly ?? true) && typesOnly });
    }
  }
  return new Map([...graph].sort(([a], [b]) => a.localeCompare(b)));
}

const label = (folder: string) => (folder === "index.ts" ? "src/index.ts" : `src/${folder}`);

/**
 * The table of what each folder imports.
 *
 * @example
 * renderImports(folderImports(cruise().modules)).startsWith("| folder | imports |"); // true
 */
export function renderImports(graph: ReturnType<typeof folderImports>): string {
  const rows = [...graph].map(([from, edges]) => {
    const to = [...edges].sort(([a], [b]) => a.localeCompare(b)).map(([t, e]) => `\`${t === "index.ts" ? label(t) : t}\`${e.typesOnly ? " (types only)" : ""}`);
    return `| \`${label(from)}\` | ${to.length === 0 ? "nothing" : to.join(", ")} |`;
  });
  return ["| folder | imports |", "| --- | --- |", ...rows].join("\n");
}

/** The diagram of the same graph, as mermaid (GitHub draws it); dotted: types only. */
export function renderDiagram(graph: ReturnType<typeof folderImports>): string {
  const id = (folder: string) => (folder === "index.ts" ? "root" : folder);
  const nodes = [...graph.keys()].map((f) => `  ${id(f)}["${label(f)}"]`);
  const edges = [...graph].flatMap(([from, to]) =>
    [...to].sort(([a], [b]) => a.localeCompare(b)).map(([t, e]) => `  ${id(from)} ${e.typesOnly ? "-.->" : "-->"} ${id(t)}`),
  );
  return ["```mermaid", "flowchart TD", ...nodes, ...edges, "```"].join("\n");
}

/** The rules of .dependency-cruiser.cjs: name and what it says. */
export function renderRules(rules: Rule[]): string {
  return ["| rule | says |", "| --- | --- |", ...rules.map((r) => `| \`${r.name}\` | ${r.comment.replace(/\|/g, "\\|")} |`)].join("\n");
}

/** The exceptions of .dependency-cruiser.cjs. */
export function renderExceptions(exceptions: ImportException[]): string {
  const rows = exceptions.map((e) => `| \`${e.rule}\` | \`${e.from}\` | ${e.to.map((t) => `\`${t}\``).join(", ")} | ${e.why} |`);
  return ["| rule | file | imports | why |", "| --- | --- | --- | --- |", ...rows].join("\n");
}

/** The generated sections of docs/architecture.md, by marker name. */
export function mapSections(cruised: { modules: Module[] } = cruise()): Record<string, string> {
  const { strict, exceptions } = cruiserConfig();
  const graph = folderImports(cruised.modules);
  const wrap = (text: string) => `\n${text}\n`;
  return {
    imports: wrap(renderImports(graph)),
    diagram: wrap(renderDiagram(graph)),
    rules: wrap(renderRules(strict.forbidden)),
    "import-exceptions": wrap(renderExceptions(exceptions)),
  };
}
