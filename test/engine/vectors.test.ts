import { describe, expect, it } from "vitest";
import { datasetFromRows } from "../../src/engine/data.js";
import { grid, maxfit, psr } from "../../src/engine/index.js";
import { gold, goldCase } from "../gold.js";

/** Gold vectors printed by the hosted engine (the project's copy, test/fixtures/quickstart-7x5.json). */
const data = datasetFromRows(gold.inputs.y, gold.inputs.X);
const theta = Float64Array.from(gold.inputs.theta);
const TOL = 1e-6;

function close(actual: ArrayLike<number> | number, expected: ArrayLike<number> | number, tol = TOL) {
  const a = typeof actual === "number" ? [actual] : Array.from(actual);
  const e = typeof expected === "number" ? [expected] : Array.from(expected);
  expect(a).toHaveLength(e.length);
  a.forEach((v, i) => expect(Math.abs(v - e[i]), `index ${i}: ${v} vs ${e[i]}`).toBeLessThanOrEqual(tol));
}
const column = (m: number[][], t = 0) => m.map((row) => row[t]);

describe("quickstart 7x5 gold vectors", () => {
  it("reproduces the published scores", () => {
    const { expect: want } = goldCase("scores");
    const result = psr(data, theta, { threshold: [0] });
    close(result.insights.relevance, want.relevance);
    close(result.insights.similarity, want.similarity);
    close(result.insights.info_x, want.info_x);
    close(result.insights.info_theta, want.info_theta);
  });

  it("reproduces the PSR at relevance 0.8 (the MaxFit winner)", () => {
    const c = goldCase("psr relevance t=0.8");
    const result = psr(data, theta, c.options);
    close(column(result.prediction_weights.include!), c.expect.include, 0);
    close(column(result.prediction_weights.weights), c.expect.weights);
    close(result.asymmetry, c.expect.asymmetry);
    close(result.fit, c.expect.fit);
    close(result.yhat, c.expect.yhat);
    close(result.adjusted_fit, c.expect.adjusted_fit);
    close(result.auxiliary!.r_star, c.expect.r_star);
    close(result.auxiliary!.lambda_sq, c.expect.lambda_sq);
    close(result.auxiliary!.n, c.expect.n, 0);
  });

  it("picks the published MaxFit winner", () => {
    const c = goldCase("maxfit default");
    const result = maxfit(data, theta, c.options);
    expect(result.censor_type).toEqual([c.expect.censor_type]);
    close(result.thresholds, c.expect.threshold, 0);
    close(result.yhat, c.expect.yhat);
    close(result.fit, c.expect.fit);
    close(result.adjusted_fit, c.expect.adjusted_fit);
  });

  it("reproduces the PSR threshold sweep", () => {
    const c = goldCase("psr thresholds sweep");
    const result = psr(data, theta, c.options);
    close(result.yhat, c.expect.yhat);
    close(result.fit, c.expect.fit);
    close(result.asymmetry, c.expect.asymmetry);
    close(result.adjusted_fit, c.expect.adjusted_fit);
  });

  it("reproduces the published default Grid composite", () => {
    const c = goldCase("grid default");
    const result = grid(data, theta, c.options);
    close(result.yhat, c.expect.yhat);
    close(result.fit, c.expect.fit);
    close(result.adjusted_fit, c.expect.adjusted_fit);
    close(result.yhat_linear!, c.expect.yhat_linear);
    close(column(result.prediction_weights.weights), c.expect.weights);
    expect(result.grid_search).toMatchObject({ combinations: 31, cells: 31 * 4 * 2, invalid_cells: 0 });
  });
});
