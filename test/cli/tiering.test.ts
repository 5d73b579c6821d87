/** The busy-machine tiering of `rbp predict` (src/cli/tiering.ts): when it applies, and that this V8 knows its flag. */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { machineBusy, tuneShortRun } from "../../src/cli/tiering.js";

const tiering = fileURLToPath(new URL("../../dist/cli/tiering.js", import.meta.url));

describe("busy-machine tiering", () => {
  it("calls a machine busy when fewer than two cores are free (its cores less its 1-minute load average)", () => {
    expect(machineBusy([2, 0, 0], 2)).toBe(true);
    expect(machineBusy([12.5, 9, 7], 2)).toBe(true);
    expect(machineBusy([0.3, 5, 5], 2)).toBe(true);
    expect(machineBusy([0, 0, 0], 1)).toBe(true);
    expect(machineBusy([0, 0, 0], 2)).toBe(false);
    expect(machineBusy([1.9, 0, 0], 4)).toBe(false);
    expect(machineBusy([2.1, 0, 0], 4)).toBe(true);
  });

  it("leaves V8 alone on a machine with two cores free", () => {
    expect(tuneShortRun(false)).toBe(false);
  });

  it("sets a flag this V8 knows (an unknown one would be reported on stderr)", () => {
    // In a child process: the flag stays out of the test runner's V8.
    const r = spawnSync(
      process.execPath,
      ["--input-type=module", "-e", `const t = await import(${JSON.stringify(tiering)}); console.log(t.tuneShortRun(true));`],
      {
        encoding: "utf8",
      },
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe(process.versions.v8.startsWith("11.") ? "true\n" : "false\n");
  });
});
