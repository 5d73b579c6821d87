/**
 * The singularity Grid's best cell breaks ties as MaxFit does (docs/ties.md): the first maximum in
 * the Grid's order, equality read up to rounding by the engine's `firstMaximum`.
 */
import { describe, expect, it } from "vitest";
import { firstMaximum } from "../../src/engine/choices.js";
import { datasetFromRows, grid, maxfit } from "../../src/engine/index.js";
import { gridSingularity } from "../../src/engine/singularity.js";

// Found by search: at threshold 0 both censors keep every row, and the similarity cell's adjusted
// fit comes out 1 ulp above the relevance cell's (their sums are added in different orders). Searched
// again when the Grid's bucket sums came to be added from both censors' joint buckets
// (docs/methodology.md): the data found before gave equal cells then.
const y = [14.5, 22.6, 21.6, 29, 75.5, 91];
const X = [[56.8], [0.8], [8.2], [32], [45], [95.3]];
const theta = Float64Array.from([46.3]);
const data = datasetFromRows(y, X);
const threshold = [0, 0.5];

describe("grid-singularity ties", () => {
  it("the data do hold a rounding tie: the similarity cell at 0 is the float maximum, a few ulps above relevance's", () => {
    const cells = grid(data, theta, { threshold, retain: ["adjusted_fit_cells"] }).grid_cells!;
    const rel = cells.relevance!.adjusted_fit_cells![0];
    const sim = cells.similarity!.adjusted_fit_cells![0];
    expect(sim[0]).toBeGreaterThan(rel[0]);
    expect(sim[0] - rel[0]).toBeLessThan(1e-14);
    expect(Math.max(rel[0], rel[1], sim[0], sim[1])).toBe(sim[0]);
  });

  it("picks the first of the tied cells (relevance at 0), as MaxFit picks the same candidate", () => {
    const result = gridSingularity(data, theta, { threshold });
    expect(result.grid_singularity).toMatchObject({ censor_type: "relevance", threshold: 0, attributes: [0] });
    // K = 1: the Grid's one combination is MaxFit's model, so both choose among the same four candidates.
    const m = maxfit(data, theta, { threshold, objective: "adjusted_fit" });
    expect(m.censor_type).toEqual(["relevance"]);
    expect(m.thresholds).toEqual([0]);
    expect(m.maxfit_index!.selected).toBe(0);
  });

  it("firstMaximum: the first of values equal up to rounding, non-finite values skipped, -1 for none", () => {
    expect(firstMaximum([0.5, NaN, 0.5 + 1e-16, 0.4])).toBe(0);
    expect(firstMaximum([NaN, 0.2, 0.3])).toBe(2);
    expect(firstMaximum([0.3, 0.3 + 1e-9])).toBe(1);
    expect(firstMaximum([NaN, Infinity])).toBe(-1);
    expect(firstMaximum([])).toBe(-1);
  });
});
