/**
 * npm test's format check covers the project's own files only (issue 26): a stray file beside them
 * (a scratch file, a test's output) that git does not track is not checked, so it cannot fail the run.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const stray = mkdtempSync(join(ROOT, "stray-format-test-"));
afterAll(() => rmSync(stray, { recursive: true, force: true }));

describe("the format check", () => {
  it("is the project script, not prettier over the whole tree", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };
    expect(pkg.scripts["format:check"]).toBe("node scripts/prettier-project.mjs --check");
    expect(pkg.scripts.lint).toContain("npm run format:check");
  });

  it("lists tracked files and leaves out an untracked, unformatted one", () => {
    writeFileSync(join(stray, "scratch.ts"), "const   x =  {a:1}\n");
    const listed = execFileSync(process.execPath, [join(ROOT, "scripts/prettier-project.mjs"), "--list"], { cwd: ROOT, encoding: "utf8" }).split("\n");
    expect(listed).toContain("package.json");
    expect(listed).toContain("src/engine/choices.ts");
    expect(listed.some((f) => f.includes(basename(stray)))).toBe(false);
  });
});
