/**
 * `rbp predict grid-singularity`: the Grid through its single best cell runs from the command line,
 * as the engine's gridSingularity computes it (the analysis lives in the engine, not in the service).
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parseRequest, toJson } from "../../src/api/index.js";
import { gridSingularity } from "../../src/engine/index.js";

const rbp = fileURLToPath(new URL("../../dist/cli/rbp.js", import.meta.url));
const example = fileURLToPath(new URL("../../examples/quickstart-7x5.json", import.meta.url));

describe("rbp predict grid-singularity", () => {
  it("prints the engine's singularity Grid of the quickstart example", () => {
    const r = spawnSync(process.execPath, [rbp, "predict", "grid-singularity", "--input", example], { encoding: "utf8" });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const printed = JSON.parse(r.stdout);
    expect(printed.grid_singularity.cells).toBeGreaterThan(0);
    const request = parseRequest("grid", JSON.parse(readFileSync(example, "utf8")), "v3", { requireAccessId: false });
    const engine = JSON.parse(toJson(gridSingularity(request.data, request.thetas[0], request.options as never)));
    expect(printed).toEqual(engine);
  });

  it("names the analyses it knows when given another", () => {
    const r = spawnSync(process.execPath, [rbp, "predict", "grid-singular", "--input", example], { encoding: "utf8" });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("grid-singularity");
  });
});
