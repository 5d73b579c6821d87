import { describe, expect, it } from "vitest";
import { createRandom } from "../../src/engine/random.js";
import { experimentBatch, EXPERIMENT_BATCH_BYTES, gridExperiment } from "../../src/engine/experiment.js";
import { grid, InvalidInputError, type Dataset } from "../../src/engine/index.js";
import { correlatedData } from "./correlated.js";

/** `correlatedData` with `thetas` theta rows. */
function dataset(N: number, K: number, seed: number, thetas: number, holes = 0): { data: Dataset; thetas: Float64Array[] } {
  const { data, thetas: rows } = correlatedData(N, K, seed, holes, thetas);
  return { data, thetas: rows };
}

/** Each row of the experiment must be exactly (toEqual compares numbers with Object.is) the row run alone. */
function expectRowsAlone(data: Dataset, thetas: Float64Array[], options: Parameters<typeof grid>[2]): void {
  const rows = gridExperiment(data, thetas, options);
  expect(rows).toHaveLength(thetas.length);
  thetas.forEach((theta, r) => expect(rows[r]).toEqual(grid(data, theta, options)));
}

describe("gridExperiment", () => {
  it("gives each theta row exactly its Grid run alone (complete data, every combination, cells retained)", () => {
    const { data, thetas } = dataset(150, 6, 1, 5);
    expectRowsAlone(data, thetas, { retain: ["yhat_cells", "adjusted_fit_cells", "n_cells", "weights_cells", "ysolo_cells"] });
  });

  it("gives each row its Grid alone with sampled combinations, score units and strict operators", () => {
    const { data, thetas } = dataset(120, 9, 2, 4);
    expectRowsAlone(data, thetas, { max_iter: 200, seed: 3, censor_unit: "score", threshold: [-0.5, 0, 0.3], censor_operator: "gt" });
  });

  it("gives each row its Grid alone on tied integer data (the cut's tie rule decides the same rows)", () => {
    const uniform = createRandom(9);
    const N = 60;
    const K = 4;
    const X = Float64Array.from({ length: N * K }, () => Math.floor(uniform() * 5));
    const y = Float64Array.from({ length: N }, (_, i) => X[i * K] + X[i * K + 1] + Math.floor(uniform() * 3));
    const thetas = [Float64Array.of(2, 2, 2, 2), Float64Array.of(0, 4, 1, 3), Float64Array.of(4, 0, 0, 1)];
    expectRowsAlone({ y, X, rows: N, cols: K }, thetas, { threshold: [0, 0.25, 0.5, 0.75] });
  });

  it("gives each row its Grid alone with missing values (no shared walk) and with logistic outcomes", () => {
    const holes = dataset(100, 5, 4, 3, 30);
    expectRowsAlone(holes.data, holes.thetas, {});
    const binary = dataset(120, 5, 5, 3);
    const y = binary.data.y.map((v) => (v > 0 ? 1 : 0));
    expectRowsAlone({ ...binary.data, y }, binary.thetas, { prediction_scale: "logistic" });
  });

  it("gives each row its Grid alone when a column is constant (singular combinations, pseudoinverse rebuilds them)", () => {
    const { data, thetas } = dataset(80, 4, 6, 3);
    for (let i = 0; i < data.rows; i++) data.X[i * 4 + 2] = 1.5;
    expectRowsAlone(data, thetas, {});
    expectRowsAlone(data, thetas, { inv_method: "pseudoinverse" });
  });

  it("walks rows in batches bounded by EXPERIMENT_BATCH_BYTES (at least one row); a batch boundary changes nothing", () => {
    const wide: Dataset = { y: new Float64Array(2000), X: new Float64Array(2000 * 10), rows: 2000, cols: 10 };
    expect(experimentBatch(wide)).toBe(Math.floor(EXPERIMENT_BATCH_BYTES / (2 * 11 * 2000 * 8)));
    expect(experimentBatch({ ...wide, rows: 10_000_000 })).toBe(1);
    const { data, thetas } = dataset(100, 5, 8, 5);
    const whole = gridExperiment(data, thetas, { threshold: [0, 0.5] });
    expect(gridExperiment(data, thetas, { threshold: [0, 0.5] }, 2)).toEqual(whole);
    thetas.forEach((theta, r) => expect(whole[r]).toEqual(grid(data, theta, { threshold: [0, 0.5] })));
  });

  it("refuses a bad theta row by name before computing anything", () => {
    const { data, thetas } = dataset(50, 3, 7, 2);
    expect(() => gridExperiment(data, [thetas[0], Float64Array.of(1, NaN, 2)])).toThrow(InvalidInputError);
    expect(gridExperiment(data, [])).toEqual([]);
  });
});
