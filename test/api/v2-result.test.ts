import { describe, expect, it } from "vitest";
import { toJson } from "../../src/api/json.js";
import { toV2Result } from "../../src/api/v2-result.js";
import { datasetFromRows, grid, maxfit, psr } from "../../src/engine/index.js";
import { gold, goldCase } from "../gold.js";

const data = datasetFromRows(gold.inputs.y, gold.inputs.X);
const theta = Float64Array.from(gold.inputs.theta);
const N = 7;
const K = 5;

/** What a client sees: the body through the JSON encoder and back. */
const wire = (body: unknown): Record<string, unknown> => JSON.parse(toJson(body));
const shape = (v: unknown): [number, number] => {
  expect(Array.isArray(v), `nested array expected, got ${JSON.stringify(v)}`).toBe(true);
  const rows = v as unknown[];
  rows.forEach((r) => expect(Array.isArray(r)).toBe(true));
  const width = (rows[0] as unknown[]).length;
  rows.forEach((r) => expect((r as unknown[]).length).toBe(width));
  return [rows.length, width];
};
const GRID_KEYS = [
  "marginal_contribution_to_conviction",
  "contribution_to_conviction",
  "variable_importance",
  "marginal_contribution_to_prediction",
  "contribution_to_prediction",
  "variable_importance_on_yhat",
  "component_contribution_to_prediction",
  "ysolo_sigma",
  "ysolo_skewness",
  "ysolo_kurtosis",
  "ysolo_pearson_modality_index",
  "ysolo_bimodality_coefficient",
];

function expectCompletedEnvelope(body: Record<string, unknown>) {
  expect(body.status_code).toBe(11);
  expect(body.error_code).toBe(0);
  expect(body).not.toHaveProperty("error");
  expect(body).not.toHaveProperty("status");
  expect(body.yhat).not.toBeNull();
  // Every value is nested 2-D except the plain integer codes and ids.
  for (const [key, value] of Object.entries(body)) {
    if (["status_code", "error_code", "experiment_id", "job_id", "job_code"].includes(key)) continue;
    shape(value);
  }
}

describe("toV2Result: PSR with several thresholds", () => {
  const thresholds = [0, 0.2, 0.5, 0.8];
  const result = psr(data, theta, { threshold: thresholds, censor_type: "relevance" });
  const body = wire(toV2Result(result));

  it("is a completed body with every array nested", () => {
    expectCompletedEnvelope(body);
    expect(body).not.toHaveProperty("experiment_id");
    expect(body).not.toHaveProperty("job_id");
  });

  it("writes per-threshold fields as 1 x T, per-observation fields as N x 1, matrices N x T", () => {
    for (const key of [
      "yhat",
      "fit",
      "adjusted_fit",
      "kfit",
      "agreement",
      "asymmetry",
      "outlier_influence",
      "K",
      "n",
      "phi",
      "lambda_sq",
      "rho",
      "r_star",
      "r_star_percent",
    ]) {
      expect(shape(body[key]), key).toEqual([1, 4]);
    }
    for (const key of ["relevance", "similarity", "info_x"]) expect(shape(body[key]), key).toEqual([N, 1]);
    expect(shape(body.weights)).toEqual([N, 4]);
    expect(shape(body.include)).toEqual([N, 4]);
    for (const key of ["info_theta", "eval_type", "most_eval", "yhat_linear"]) expect(shape(body[key]), key).toEqual([1, 1]);
    for (const key of GRID_KEYS) expect(body, key).not.toHaveProperty(key);
  });

  it("carries the engine's values under the v2 names", () => {
    expect(body.yhat).toEqual([result.yhat]);
    expect(body.kfit).toEqual([result.k_fit]);
    expect(body.K).toEqual([[K, K, K, K]]);
    expect(body.n).toEqual([result.auxiliary!.n]);
    expect(body.r_star).toEqual([result.auxiliary!.r_star]);
    expect(body.r_star_percent).toEqual([thresholds]);
    expect(body.weights).toEqual(result.prediction_weights.weights);
    expect(body.include).toEqual(result.prediction_weights.include);
    expect(body.relevance).toEqual(result.insights.relevance.map((v) => [v]));
    expect(body.info_theta).toEqual([[result.insights.info_theta[0]]]);
    expect(body.yhat_linear).toEqual([[result.yhat_linear![0]]]);
    expect(body.eval_type).toEqual([["relevance"]]);
    expect(body.most_eval).toEqual([[true]]);
  });

  it("reproduces the published PSR at relevance 0.8 in v2 shape", () => {
    const c = goldCase("psr relevance t=0.8");
    const one = wire(toV2Result(psr(data, theta, c.options)));
    expect((one.include as number[][]).map((r) => r[0])).toEqual(c.expect.include);
    (one.weights as number[][]).forEach((r, i) => expect(Math.abs(r[0] - c.expect.weights[i])).toBeLessThanOrEqual(1e-6));
    expect(Math.abs((one.yhat as number[][])[0][0] - c.expect.yhat)).toBeLessThanOrEqual(1e-6);
    expect(Math.abs((one.asymmetry as number[][])[0][0] - c.expect.asymmetry)).toBeLessThanOrEqual(1e-6);
    expect(shape(one.yhat)).toEqual([1, 1]);
    expect(one.n).toEqual([[2]]);
  });

  it("maps the censor operator to most_eval and echoes experiment_id and the receipt", () => {
    expect(toV2Result(result, { censor_operator: "gt" }).most_eval).toEqual([[true]]);
    expect(toV2Result(result, { censor_operator: "lte" }).most_eval).toEqual([[false]]);
    expect(toV2Result(result, { censor_operator: "lt" }).most_eval).toEqual([[false]]);
    const withIds = wire(toV2Result(result, { experiment_id: 48412, job_id: 7, job_code: "a073bf7cce273e33" }));
    expect(withIds.experiment_id).toBe(48412);
    expect(withIds.job_id).toBe(7);
    expect(withIds.job_code).toBe("a073bf7cce273e33");
    expectCompletedEnvelope(withIds);
    expect(() => toV2Result(result, { experiment_id: 1.5 })).toThrow(RangeError);
    expect(() => toV2Result(result, { censor_operator: "eq" as never })).toThrow(RangeError);
  });
});

describe("toV2Result: MaxFit", () => {
  const result = maxfit(data, theta, { threshold: [0, 0.2, 0.5, 0.8], censor_type: "both", objective: "adjusted_fit" });
  const body = wire(toV2Result(result));

  it("collapses to 1 x 1 and names the winning censor", () => {
    expectCompletedEnvelope(body);
    for (const key of ["yhat", "fit", "adjusted_fit", "kfit", "K", "n", "r_star", "r_star_percent", "eval_type", "most_eval"]) {
      expect(shape(body[key]), key).toEqual([1, 1]);
    }
    expect(shape(body.weights)).toEqual([N, 1]);
    expect(shape(body.include)).toEqual([N, 1]);
    expect(body.eval_type).toEqual([[result.censor_type[0]]]);
    expect(body.r_star_percent).toEqual([[0.8]]);
    expect(Math.abs((body.yhat as number[][])[0][0] - -19.069491)).toBeLessThanOrEqual(1e-6);
    for (const key of GRID_KEYS) expect(body, key).not.toHaveProperty(key);
  });
});

describe("toV2Result: Grid", () => {
  const result = grid(data, theta, {});
  const body = wire(toV2Result(result));

  it("writes the composite as 1 x 1, K as the attribute count, no include or auxiliaries", () => {
    expectCompletedEnvelope(body);
    for (const key of [
      "yhat",
      "fit",
      "adjusted_fit",
      "kfit",
      "agreement",
      "asymmetry",
      "outlier_influence",
      "K",
      "info_theta",
      "yhat_linear",
      "eval_type",
      "most_eval",
    ]) {
      expect(shape(body[key]), key).toEqual([1, 1]);
    }
    expect(body.K).toEqual([[K]]);
    expect(shape(body.weights)).toEqual([N, 1]);
    for (const key of ["relevance", "similarity", "info_x"]) expect(shape(body[key]), key).toEqual([N, 1]);
    for (const key of ["include", "n", "phi", "lambda_sq", "rho", "r_star", "r_star_percent"]) expect(body, key).not.toHaveProperty(key);
    expect(Math.abs((body.yhat as number[][])[0][0] - 3.285239)).toBeLessThanOrEqual(1e-6);
  });

  it("reports eval_type both for both censors, or the one censor evaluated", () => {
    expect(body.eval_type).toEqual([["both"]]);
    expect(toV2Result(grid(data, theta, { censor_type: "similarity" })).eval_type).toEqual([["similarity"]]);
  });

  it("writes the contributions 1 x K with the deprecated aliases equal to the new names", () => {
    const gi = result.grid_insights!;
    for (const key of GRID_KEYS.slice(0, 7)) expect(shape(body[key]), key).toEqual([1, K]);
    expect(body.marginal_contribution_to_conviction).toEqual([gi.marginal_contribution_to_conviction]);
    expect(body.contribution_to_conviction).toEqual(body.marginal_contribution_to_conviction);
    expect(body.variable_importance).toEqual(body.marginal_contribution_to_conviction);
    expect(body.marginal_contribution_to_prediction).toEqual([gi.marginal_contribution_to_prediction]);
    expect(body.contribution_to_prediction).toEqual(body.marginal_contribution_to_prediction);
    expect(body.variable_importance_on_yhat).toEqual(body.marginal_contribution_to_prediction);
    expect(body.component_contribution_to_prediction).toEqual([gi.component_contribution_to_prediction]);
    // Impact on Fit / Prediction are the same measures under the service's names.
    expect(body.marginal_contribution_to_conviction).toEqual([result.insights["Impact on Fit"]]);
    expect(body.marginal_contribution_to_prediction).toEqual([result.insights["Impact on Prediction"]]);
  });

  it("writes the y_solo statistics 1 x 1, bimodal_index as ysolo_bimodality_coefficient", () => {
    const s = result.solo_distribution.statistics;
    expect(body.ysolo_sigma).toEqual([[s.sigma[0]]]);
    expect(body.ysolo_skewness).toEqual([[s.skewness[0]]]);
    expect(body.ysolo_kurtosis).toEqual([[s.kurtosis[0]]]);
    expect(body.ysolo_pearson_modality_index).toEqual([[s.pearson_modality_index[0]]]);
    expect(body.ysolo_bimodality_coefficient).toEqual([[s.bimodal_index[0]]]);
  });
});

describe("toV2Result: undefined numbers", () => {
  const X: Array<Array<number | null>> = gold.inputs.X.map((r) => [...r]);
  X[2][1] = null;
  const missing = datasetFromRows(gold.inputs.y, X);

  it("leaves NaN in the object and null on the wire; a NaN yhat is [[null]] and still completed", () => {
    const result = psr(data, theta, { threshold: [0.99] });
    expect(Number.isNaN(result.yhat[0])).toBe(true);
    const object = toV2Result(result);
    expect(Number.isNaN((object.yhat as number[][])[0][0])).toBe(true);
    const text = toJson(object);
    expect(text).not.toMatch(/NaN|Infinity/);
    const body = JSON.parse(text);
    expect(body.yhat).toEqual([[null]]);
    expect(body.fit).toEqual([[null]]);
    expectCompletedEnvelope(body);
  });

  it("writes null inside 1 x T and N x 1 where a threshold or a row is undefined", () => {
    const body = wire(toV2Result(psr(missing, theta, { threshold: [0, 0.5, 0.99] })));
    expect((body.yhat as unknown[][])[0][2]).toBeNull();
    expect((body.yhat as unknown[][])[0][0]).toEqual(expect.any(Number));
    expect(body.relevance).toContainEqual([null]);
    expect((body.relevance as unknown[][])[2]).toEqual([null]);
    expect((body.weights as unknown[][])[0][2]).toBeNull();
    expect((body.include as unknown[][])[2]).toEqual([0, 0, 0]);
    expectCompletedEnvelope(body);
  });
});
