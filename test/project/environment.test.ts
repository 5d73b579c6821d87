/**
 * The environment is read in the places docs/architecture.md lists ("Settings and the environment"),
 * each with its reason: every file of src/ that reads `process.env`, or a variable from an `env`
 * it was given, is listed, every file listed still reads the environment, and the variables named
 * in its row appear in it.
 */
import { describe, expect, it } from "vitest";
import { readArchitecture, section, sourceFiles, tableRows, ticked } from "../../scripts/map/doc.js";

/** The lines of code of a file, without its comments' lines. */
const codeLines = (text: string) => text.split("\n").filter((l) => !/^\s*(\*|\/\/|\/\*)/.test(l));

/** Whether a file reads the environment: `process.env`, or `env.NAME` / `env?.NAME` / `env["NAME"]`. */
function readsEnvironment(text: string): boolean {
  return codeLines(text).some((l) => /\bprocess\.env\b|\benv\??\.[A-Z][A-Z0-9_]+\b|\benv\[["'][A-Z]/.test(l));
}

describe("settings and the environment", () => {
  const rows = tableRows(section(readArchitecture(), "environment")).map((r) => ({ file: ticked(r[0])[0], variables: ticked(r[1]), why: r[2] ?? "" }));
  const files = sourceFiles();

  it("tells a read of the environment from a comment about one", () => {
    expect(readsEnvironment("const a = process.env.HOME;")).toBe(true);
    expect(readsEnvironment("function f(env = {}) { return env?.RBP_X; }")).toBe(true);
    expect(readsEnvironment(" * readSettings({ env: process.env });\n// process.env.X")).toBe(false);
  });

  it("every file of src/ that reads the environment is listed, with its variables and a reason", () => {
    const listed = new Set(rows.map((r) => r.file));
    const unlisted = files.filter((f) => readsEnvironment(f.text) && !listed.has(f.path)).map((f) => f.path);
    expect(unlisted, "read settings through src/client/settings.ts, or list the file in docs/architecture.md with its reason").toEqual([]);
    for (const r of rows) {
      expect(r.variables.length, `${r.file}: its variables`).toBeGreaterThan(0);
      expect(r.why.length, `${r.file}: its reason`).toBeGreaterThan(20);
    }
  });

  it("every file listed still reads the environment, and names the variables of its row", () => {
    for (const r of rows) {
      const file = files.find((f) => f.path === r.file);
      expect(file, `${r.file} is listed but gone: delete its row`).toBeDefined();
      expect(readsEnvironment(file!.text), `${r.file} no longer reads the environment: delete its row`).toBe(true);
      for (const v of r.variables) expect(file!.text, `${r.file} does not mention ${v}`).toContain(v);
    }
  });
});
