/** Field paths inside a result, and the router's path handling, without a server. */
import { describe, expect, it } from "vitest";
import { httpError } from "../../src/service/http.js";
import { ServiceRefusal } from "../../src/service/refusals.js";
import { shapeOf } from "../../src/api/json.js";
import { jsonPath, resolveField, smallerPaths } from "../../src/service/fields.js";
import { redact } from "../../src/service/router.js";

const results = {
  yhat: [1.5],
  n_observations: 3,
  insights: { relevance: [1, 2, 3], "Impact on Fit": [0.1, 0.2] },
  grid_insights: { impact_on_fit: [0.1, 0.2] },
  prediction_weights: {
    weights: [
      [1, 2],
      [3, 4],
      [5, 6],
    ],
  },
  "odd 'key'": true,
};

describe("resolveField", () => {
  it("follows keys case-sensitively, with snake_case aliases both ways and array indexes", () => {
    expect(resolveField(results, ["insights", "relevance"])).toEqual({ path: ["insights", "relevance"], value: [1, 2, 3] });
    expect(resolveField(results, ["insights", "impact_on_fit"]).path).toEqual(["insights", "Impact on Fit"]);
    expect(resolveField(results, ["grid_insights", "Impact on Fit"]).path).toEqual(["grid_insights", "impact_on_fit"]);
    expect(resolveField(results, ["prediction_weights", "weights", "2", "1"]).value).toBe(6);
    expect(() => resolveField(results, ["YHAT"])).toThrow(ServiceRefusal);
    expect(() => resolveField(results, ["yhat", "1"])).toThrow(ServiceRefusal);
    expect(() => resolveField(results, ["n_observations", "x"])).toThrow(/has no parts/);
  });

  it("a 404 names the deepest valid prefix and what is there", () => {
    try {
      resolveField(results, ["insights", "nope"]);
      expect.unreachable();
    } catch (error) {
      const e = httpError(error)!;
      expect(e.status).toBe(404);
      expect(e.init.extra).toEqual({ valid_prefix: "insights", available: ["relevance", "Impact on Fit"] });
    }
  });
});

describe("json_path, shape, smaller paths", () => {
  it("brackets what is not an identifier", () => {
    expect(jsonPath(["insights", "Impact on Fit"])).toBe("$.results.insights['Impact on Fit']");
    expect(jsonPath(["prediction_weights", "weights", 0])).toBe("$.results.prediction_weights.weights[0]");
    expect(jsonPath(["odd 'key'"])).toBe("$.results['odd \\'key\\'']");
  });

  it("shapes", () => {
    expect(shapeOf(3)).toEqual([]);
    expect(shapeOf(null)).toEqual([]);
    expect(shapeOf([1, 2])).toEqual([2]);
    expect(
      shapeOf([
        [1, 2],
        [3, 4],
        [5, 6],
      ]),
    ).toEqual([3, 2]);
    expect(shapeOf([[[1], [2]]])).toEqual([1, 2, 1]);
    expect(shapeOf({ a: 1 })).toBeNull();
  });

  it("smaller paths of objects and arrays", () => {
    expect(smallerPaths("insights", results.insights)).toEqual(["insights/relevance", "insights/Impact on Fit"]);
    expect(smallerPaths("w", Array(10).fill(0))).toEqual(["w/0", "w/1", "w/2", "... w/9"]);
  });
});

describe("router", () => {
  it("keeps job codes out of logged paths", () => {
    expect(redact("/v3/results/12/0123456789abcdef")).toBe("/v3/results/12/…");
    expect(redact("/v3/jobs/12/0123456789abcdef/insights/relevance")).toBe("/v3/jobs/12/…/insights/relevance");
    expect(redact("/v3/quota")).toBe("/v3/quota");
  });
});
