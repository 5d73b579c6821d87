import { describe, expect, it } from "vitest";
import { toJson } from "../../src/api/json.js";
import { ResultError, fromV2Result, fromV3Results, type Result } from "../../src/api/result.js";
import { toV2Result } from "../../src/api/v2-result.js";
import { v2Failed, v2Running, v2UnknownJob } from "../../src/api/v2-status.js";
import { datasetFromRows, grid, maxfit, psr, type EngineResult } from "../../src/engine/index.js";
import { gold } from "../gold.js";

const data = datasetFromRows(gold.inputs.y, gold.inputs.X);
const theta = Float64Array.from(gold.inputs.theta);
const withMissing = (() => {
  const X: Array<Array<number | null>> = gold.inputs.X.map((r) => [...r]);
  X[2][1] = null;
  return datasetFromRows(gold.inputs.y, X);
})();

const wire = (value: unknown): unknown => JSON.parse(toJson(value));
const both = (result: EngineResult): { v3: Result; v2: Result } => ({
  v3: fromV3Results(wire(result)),
  v2: fromV2Result(wire(toV2Result(result))),
});

/** Compares every field both normalised results carry (recursively for grid_insights etc.). */
function expectSameOnCommonFields(a: Record<string, unknown>, b: Record<string, unknown>, path = ""): string[] {
  const common = Object.keys(a).filter((k) => k in b);
  for (const key of common) {
    const x = a[key];
    const y = b[key];
    if (x !== null && y !== null && typeof x === "object" && typeof y === "object" && !Array.isArray(x)) {
      expectSameOnCommonFields(x as Record<string, unknown>, y as Record<string, unknown>, `${path}${key}.`);
    } else {
      expect(y, `${path}${key}`).toEqual(x);
    }
  }
  return common;
}

/** Fields the two versions must both carry (so the comparison above is not vacuous). */
const CORE = [
  "yhat",
  "fit",
  "adjusted_fit",
  "agreement",
  "asymmetry",
  "outlier_influence",
  "k_fit",
  "weights",
  "relevance",
  "similarity",
  "info_x",
  "info_theta",
  "yhat_linear",
  "k",
  "censor_type",
];
const CALIBRATION = ["include", "n", "r_star", "r_star_percent", "phi", "lambda_sq", "rho"];

describe("round trip: the same job read as v3 and as v2 normalises to the same values", () => {
  it("PSR with several thresholds", () => {
    const result = psr(data, theta, { threshold: [0, 0.2, 0.5, 0.8], censor_type: "relevance" });
    const { v3, v2 } = both(result);
    const common = expectSameOnCommonFields(v3 as never, v2 as never);
    expect(common).toEqual(expect.arrayContaining([...CORE, ...CALIBRATION]));
    expect(v3.yhat).toHaveLength(4);
    expect(v3.weights.map((r) => r.length)).toEqual(new Array(7).fill(4));
    expect(v3.yhat).toEqual(result.yhat);
    expect(v2.k_fit).toEqual(result.k_fit);
    expect(v2.censor_type).toEqual(["relevance"]);
    expect(v2.most_eval).toBe(true);
    expect(v3.thresholds).toEqual([0, 0.2, 0.5, 0.8]);
    expect(v3.analysis).toBe("psr");
    // Only one side carries these.
    expect(v2.thresholds).toBeUndefined();
    expect(v3.most_eval).toBeUndefined();
    expect(v2.grid_insights).toBeUndefined();
    expect(v3.grid_insights).toBeUndefined();
  });

  it("PSR on similarity", () => {
    const { v3, v2 } = both(psr(data, theta, { threshold: [0, 0.5], censor_type: "similarity" }));
    expectSameOnCommonFields(v3 as never, v2 as never);
    expect(v2.censor_type).toEqual(["similarity"]);
  });

  it("MaxFit", () => {
    const result = maxfit(data, theta, { threshold: [0, 0.2, 0.5, 0.8], censor_type: "both", objective: "adjusted_fit" });
    const { v3, v2 } = both(result);
    const common = expectSameOnCommonFields(v3 as never, v2 as never);
    expect(common).toEqual(expect.arrayContaining([...CORE, ...CALIBRATION]));
    expect(v2.yhat).toHaveLength(1);
    expect(Math.abs(v2.yhat[0]! - -19.069491)).toBeLessThanOrEqual(1e-6);
    expect(v2.censor_type).toEqual(["relevance"]);
    expect(v3.censor_type).toEqual(["relevance"]);
  });

  it("Grid", () => {
    const result = grid(data, theta, {});
    const { v3, v2 } = both(result);
    const common = expectSameOnCommonFields(v3 as never, v2 as never);
    expect(common).toEqual(expect.arrayContaining([...CORE, "solo_statistics", "grid_insights"]));
    expect(v3.k).toEqual([5]);
    expect(v2.k).toEqual([5]);
    expect(v2.censor_type).toEqual(["relevance", "similarity"]);
    expect(v2.include).toBeUndefined();
    expect(v3.include).toBeUndefined();
    expect(v2.n).toBeUndefined();
    const gi = result.grid_insights!;
    expect(v2.grid_insights).toEqual({
      impact_on_fit: gi.marginal_contribution_to_conviction,
      impact_on_prediction: gi.marginal_contribution_to_prediction,
      component_contribution_to_prediction: gi.component_contribution_to_prediction,
    });
    expect(v3.grid_insights!.variable_weights).toEqual(gi.variable_weights);
    expect(v3.grid_insights!.component_contribution_to_prediction).toEqual(gi.component_contribution_to_prediction);
    expect(v2.solo_statistics!.bimodal_index).toEqual(result.solo_distribution.statistics.bimodal_index);
    expect(Math.abs(v3.yhat[0]! - 3.285239)).toBeLessThanOrEqual(1e-6);
  });

  it("Grid on one censor", () => {
    const { v3, v2 } = both(grid(data, theta, { censor_type: "relevance", threshold: [0, 0.5] }));
    expectSameOnCommonFields(v3 as never, v2 as never);
    expect(v2.censor_type).toEqual(["relevance"]);
  });

  it("keeps nulls as null on both sides (missing value, threshold retaining one row)", () => {
    const result = psr(withMissing, theta, { threshold: [0, 0.5, 0.99] });
    const { v3, v2 } = both(result);
    const common = expectSameOnCommonFields(v3 as never, v2 as never);
    expect(common).toEqual(expect.arrayContaining([...CORE, ...CALIBRATION]));
    for (const r of [v3, v2]) {
      expect(r.yhat[2]).toBeNull();
      expect(r.fit[2]).toBeNull();
      expect(r.yhat[0]).toEqual(expect.any(Number));
      expect(r.relevance![2]).toBeNull();
      expect(r.weights[0][2]).toBeNull();
      expect(r.lambda_sq![2]).toBeNull();
      expect(r.include![2]).toEqual([0, 0, 0]);
    }
  });

  it("reads NaN in an object that never went through JSON as null", () => {
    const result = psr(withMissing, theta, { threshold: [0, 0.99] });
    expect(fromV2Result(toV2Result(result))).toEqual(fromV2Result(wire(toV2Result(result))));
    expect(fromV3Results(result)).toEqual(fromV3Results(wire(result)));
    expect(fromV3Results(result).yhat[1]).toBeNull();
  });

  it("a NaN yhat ([[null]]) is a completed result", () => {
    const r = fromV2Result(wire(toV2Result(psr(data, theta, { threshold: [0.99] }))));
    expect(r.yhat).toEqual([null]);
    expect(r.n).toEqual([1]);
  });

  it("keeps experiment_id from v2", () => {
    const result = psr(data, theta, {});
    expect(fromV2Result(wire(toV2Result(result, { experiment_id: 12 }))).experiment_id).toBe(12);
    expect(fromV2Result(wire(toV2Result(result, { censor_operator: "lte" }))).most_eval).toBe(false);
  });
});

describe("fromV2Result reads every nesting G12 leaves open", () => {
  const base = wire(toV2Result(grid(data, theta, {}))) as Record<string, unknown>;
  const expected = fromV2Result(base);
  const flatten = (v: unknown) => (v as unknown[][]).flat();

  it("flat lists, bare scalars and the published N x 1 info_theta", () => {
    const loose: Record<string, unknown> = { ...base };
    for (const key of ["yhat", "fit", "adjusted_fit", "kfit", "agreement", "asymmetry", "outlier_influence", "K", "yhat_linear", "ysolo_sigma"]) {
      loose[key] = flatten(base[key])[0];
    }
    for (const key of [
      "relevance",
      "similarity",
      "info_x",
      "weights",
      "variable_importance",
      "contribution_to_prediction",
      "component_contribution_to_prediction",
    ]) {
      loose[key] = flatten(base[key]);
    }
    loose.info_theta = new Array(7).fill([(base.info_theta as number[][])[0][0]]);
    loose.eval_type = "Both";
    loose.most_eval = [true];
    delete loose.marginal_contribution_to_conviction;
    delete loose.contribution_to_conviction;
    delete loose.marginal_contribution_to_prediction;
    delete loose.variable_importance_on_yhat;
    expect(fromV2Result(loose)).toEqual(expected);
  });

  it("a column vector for a per-threshold field, and a top-level null as a missing field", () => {
    const psrBody = wire(toV2Result(psr(data, theta, { threshold: [0, 0.5] }))) as Record<string, unknown>;
    const r = fromV2Result({ ...psrBody, fit: [[(psrBody.fit as number[][])[0][0]], [(psrBody.fit as number[][])[0][1]]], rho: null });
    expect(r.fit).toEqual(fromV2Result(psrBody).fit);
    expect(r.rho).toBeUndefined();
  });
});

describe("malformed, running and failed bodies", () => {
  const v2 = wire(toV2Result(psr(data, theta, { threshold: [0, 0.5] }))) as Record<string, unknown>;
  const v3 = wire(psr(data, theta, { threshold: [0, 0.5] })) as Record<string, unknown>;

  function fails(fn: () => unknown, field: string, reason = "malformed", text?: RegExp): ResultError {
    try {
      fn();
    } catch (error) {
      expect(error).toBeInstanceOf(ResultError);
      const e = error as ResultError;
      expect(e.field).toBe(field);
      expect(e.reason).toBe(reason);
      if (reason === "malformed") expect(e.message).toContain(`${field}: `);
      if (text) expect(e.message).toMatch(text);
      return e;
    }
    throw new Error("expected a ResultError");
  }

  it("names the field of a malformed v2 body", () => {
    fails(() => fromV2Result({ ...v2, fit: "abc" }), "fit", "malformed", /got the string "abc"/);
    fails(
      () =>
        fromV2Result({
          ...v2,
          kfit: [
            [1, 2],
            [3, 4],
          ],
        }),
      "kfit",
      "malformed",
      /got a 2 x 2 array/,
    );
    fails(
      () =>
        fromV2Result({
          ...v2,
          K: [
            [5, 5],
            [5, 5],
          ],
        }),
      "K",
      "malformed",
      /got a 2 x 2 array/,
    );
    fails(() => fromV2Result({ ...v2, weights: [[1, 2], [3]] }), "weights[1]", "malformed", /2 values/);
    fails(() => fromV2Result({ ...v2, relevance: [[1], ["x"], [3]] }), "relevance[1]", "malformed", /a number or null/);
    fails(() => fromV2Result({ ...v2, eval_type: [["sideways"]] }), "eval_type");
    fails(() => fromV2Result({ ...v2, n: [[null]] }), "n[0]");
    fails(() => fromV2Result({ ...v2, include: [[0, 2]] }), "include[0][1]", "malformed", /0 or 1/);
    const noAdjusted = { ...v2 };
    delete noAdjusted.adjusted_fit;
    fails(() => fromV2Result(noAdjusted), "adjusted_fit", "malformed", /missing/);
    fails(() => fromV2Result([v2]), "body");
    fails(() => fromV2Result({ ...v2, ysolo_sigma: [[1]] }), "ysolo_skewness", "malformed", /missing/);
    fails(() => fromV2Result({ ...v2, variable_importance: [[1, 2]] }), "marginal_contribution_to_prediction", "malformed", /missing/);
  });

  it("tells a running v2 body from a result", () => {
    fails(() => fromV2Result(v2Running({ job_id: 1, job_code: "a" })), "yhat", "not_finished");
    fails(() => fromV2Result({ ...v2, yhat: null }), "yhat", "not_finished");
  });

  it("reports a failed v2 body with the client's text", () => {
    const e = fails(() => fromV2Result(v2Failed({ job_id: 1, job_code: "a" }, 10, 3, "singular covariance")), "error_code", "failed");
    expect(e.message).toContain("#103 GURU MEDITATION ERROR: Prediction task failed.");
    expect(e.message).toContain("singular covariance");
    expect(e.status_code).toBe(10);
    expect(e.error_code).toBe(3);
    const unknown = fails(() => fromV2Result(v2UnknownJob()), "error_code", "failed");
    expect(unknown.message).toContain("unknown job");
    fails(() => fromV2Result({ ...v2, error_code: "0" }), "error_code");
  });

  it("names the field of a malformed v3 results object", () => {
    const { yhat: _yhat, ...noYhat } = v3;
    fails(() => fromV3Results(noYhat), "yhat", "malformed", /missing/);
    const insights = v3.insights as Record<string, unknown>;
    fails(() => fromV3Results({ ...v3, insights: { ...insights, relevance: [1, 2, "x"] } }), "insights.relevance[2]");
    fails(() => fromV3Results({ ...v3, fit: [[1]] }), "fit[0]");
    fails(() => fromV3Results({ ...v3, prediction_weights: { weights: [[1, 2], [3]] } }), "prediction_weights.weights[1]");
    fails(() => fromV3Results({ ...v3, censor_type: ["both"] }), "censor_type[0]");
    fails(() => fromV3Results({ ...v3, auxiliary: { ...(v3.auxiliary as object), k: [5, null] } }), "auxiliary.k[1]");
    fails(() => fromV3Results("results"), "body");
    fails(() => fromV3Results(null), "body");
  });
});
