/**
 * The package's bin after `npm run build`: executable, so that `npx rbp ...` (what the README
 * writes) runs in a fresh clone, where npm links no bin for the project itself and tsc writes
 * files 0644 (scripts/bin-mode.mjs).
 */
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO, ensureBuilt } from "../notebook/package.js";

describe("the rbp bin", () => {
  it("is executable by everyone after the build", () => {
    ensureBuilt();
    const bin = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")).bin as Record<string, string>;
    for (const file of Object.values(bin)) expect(statSync(join(REPO, file)).mode & 0o111, file).toBe(0o111);
  });
});
