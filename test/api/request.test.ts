import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../src/engine/errors.js";
import { fieldFromPath, parseRequest, type Analysis, type Dialect } from "../../src/api/index.js";
import { officialV2Body } from "../official-v2.js";

const X = [
  [0.63, 0.27, 0.04],
  [0.61, null, 0.54],
  [0.12, 0.81, 0.33],
  [0.45, 0.5, 0.91],
  [0.31, 0.49, 0.89],
];
const y = [0.62, 0.38, 0.11, 0.95, 0.4];
const theta = [0.3, 0.4, 0.5];

function v3(extra: Record<string, unknown> = {}) {
  return { access_id: "user-1", y, X, theta, ...extra };
}

function failure(analysis: Analysis, body: unknown, dialect: Dialect = "v3"): InvalidInputError {
  try {
    parseRequest(analysis, body, dialect);
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidInputError);
    return e as InvalidInputError;
  }
  throw new Error("expected an InvalidInputError");
}

describe("v3 bodies", () => {
  it("parses y, X (null -> NaN) and one theta", () => {
    const r = parseRequest("psr", v3({ options: { threshold: 0.2 } }), "v3");
    expect(r.analysis).toBe("psr");
    expect(r.accessId).toBe("user-1");
    expect(r.data.rows).toBe(5);
    expect(r.data.cols).toBe(3);
    expect(Array.from(r.data.y)).toEqual(y);
    expect(r.data.X[4]).toBeNaN();
    expect(r.data.X[5]).toBe(0.54);
    expect(r.thetas.map((t) => Array.from(t))).toEqual([theta]);
    expect(r.thetaGiven).toBe(true);
    expect(r.options).toEqual({ threshold: [0.2] });
    expect(r.resolved.threshold).toEqual([0.2]);
    expect(r.resolved.censor_type).toBe("relevance");
    expect(r.warnings).toEqual([]);
  });

  it("y as an N x 1 column is accepted", () => {
    const r = parseRequest("psr", v3({ y: y.map((v) => [v]) }), "v3");
    expect(Array.from(r.data.y)).toEqual(y);
  });

  it("theta as several rows gives several thetas", () => {
    const r = parseRequest("maxfit", v3({ theta: [theta, [0.1, 0.2, 0.3]] }), "v3");
    expect(r.thetas.map((t) => Array.from(t))).toEqual([theta, [0.1, 0.2, 0.3]]);
    expect(r.thetaGiven).toBe(true);
  });

  it("Grid without theta uses the last row of X", () => {
    const r = parseRequest("grid", { access_id: "a", y, X }, "v3");
    expect(r.thetas.map((t) => Array.from(t))).toEqual([X[4]]);
    expect(r.thetaGiven).toBe(false);
    const nullTheta = parseRequest("grid", { access_id: "a", y, X, theta: null }, "v3");
    expect(Array.from(nullTheta.thetas[0])).toEqual(X[4]);
  });

  it("Grid without theta and a missing value in the last row of X is rejected on theta", () => {
    const e = failure("grid", { access_id: "a", y, X: [...X.slice(0, 4), [0.1, null, 0.2]] });
    expect(e.field).toBe("theta");
    expect(e.message).toMatch(/last row of X/);
  });

  it.each(["psr", "maxfit"] as const)("%s without theta is rejected on theta", (analysis) => {
    const e = failure(analysis, { access_id: "a", y, X });
    expect(e.field).toBe("theta");
    expect(e.expected).toMatch(/required for psr and maxfit/);
  });

  it("options absent or null mean defaults", () => {
    expect(parseRequest("grid", v3(), "v3").resolved.threshold).toEqual([0, 0.2, 0.5, 0.8]);
    expect(parseRequest("grid", v3({ options: null }), "v3").options).toEqual({});
  });

  it("v2 names at the top level of a v3 body are read; other top-level keys are ignored with a warning", () => {
    const r = parseRequest("grid", v3({ most_eval: false, threshold: 0.4, censor_type: "similarity", options: { min_k: 2 } }), "v3");
    expect(r.options).toEqual({ threshold: [0.4], censor_operator: "lte", min_k: 2 });
    expect(r.warnings).toEqual(['ignored field "censor_type" (settings go under "options")']);
  });

  it("one key under options and at the top level with different values is a conflict", () => {
    expect(failure("grid", v3({ threshold: 0.4, options: { threshold: 0.5 } })).field).toBe("options.threshold/threshold");
    expect(parseRequest("grid", v3({ threshold: 0.5, options: { threshold: 0.5 } }), "v3").options).toEqual({ threshold: [0.5] });
  });

  it("v2 spellings under options conflicting with v3 spellings name both keys", () => {
    expect(failure("maxfit", v3({ options: { censor_type: "relevance", eval_type: "similarity" } })).field).toBe("options.censor_type/options.eval_type");
  });

  it("unknown options are warnings, not errors", () => {
    const r = parseRequest("psr", v3({ options: { foo: 1, attribute_combi: [[1, 0, 0]] } }), "v3");
    expect(r.warnings).toEqual(['ignored option "foo" (not a psr option)', 'ignored option "attribute_combi" (not a psr option)']);
  });

  it("Grid + missing_moments in v3 is ignored with a warning", () => {
    const r = parseRequest("grid", v3({ options: { missing_moments: "complete" } }), "v3");
    expect(r.options).toEqual({});
    expect(r.warnings).toHaveLength(1);
  });

  it("PSR censor_type both is rejected through the engine resolver", () => {
    const e = failure("psr", v3({ options: { censor_type: "both" } }));
    expect(e.field).toBe("options.censor_type");
    expect(e.expected).toBe("relevance or similarity");
  });

  it("engine combination checks propagate", () => {
    expect(failure("grid", v3({ options: { min_k: 4 } })).field).toBe("options.min_k");
    expect(failure("grid", v3({ options: { allowed_k: [1], max_k: 2 } })).field).toBe("options.max_k");
    expect(failure("psr", v3({ options: { threshold: 1.5 } })).field).toBe("options.threshold[0]");
    expect(
      failure(
        "psr",
        v3({
          options: {
            cov_inv: [
              [1, 0],
              [0, 1],
            ],
          },
        }),
      ).field,
    ).toBe("options.cov_inv");
  });

  it("access_id is required unless the caller says otherwise (the CLI)", () => {
    const body = { y, X, theta };
    expect(failure("psr", body).field).toBe("access_id");
    expect(failure("psr", { ...body, access_id: "" }).field).toBe("access_id");
    const r = parseRequest("psr", body, "v3", { requireAccessId: false });
    expect(r.accessId).toBe("");
    expect(() => parseRequest("psr", { ...body, access_id: 5 }, "v3", { requireAccessId: false })).toThrow(InvalidInputError);
  });
});

describe("bad structures name the field", () => {
  it.each<[string, Record<string, unknown>, string]>([
    ["a string in X", { X: [X[0], [0.1, "a", 0.2], ...X.slice(2)] }, "X[1][1]"],
    ["X ragged", { X: [X[0], X[1], [0.1, 0.2], ...X.slice(3)] }, "X[2]"],
    ["X not an array", { X: "matrix" }, "X"],
    ["X empty", { X: [] }, "X"],
    ["X row not an array", { X: [X[0], 7, ...X.slice(2)] }, "X[1]"],
    ["y missing", { y: undefined }, "y"],
    ["y with null", { y: [0.1, 0.2, null, 0.4, 0.5] }, "y[2]"],
    ["y N x 2", { y: y.map((v) => [v, v]) }, "y[0]"],
    ["y shorter than X", { y: y.slice(1) }, "y"],
    ["theta wrong length", { theta: [0.1, 0.2] }, "theta"],
    ["theta row wrong length", { theta: [theta, [0.1, 0.2]] }, "theta[1]"],
    ["theta with null", { theta: [0.1, null, 0.3] }, "theta[1]"],
    ["theta rows with null", { theta: [theta, [0.1, 0.2, null]] }, "theta[1][2]"],
    ["theta mixed nesting", { theta: [theta, 0.5] }, "theta[1]"],
    ["N <= K", { y: y.slice(0, 3), X: X.slice(0, 3) }, "X"],
    ["X with Infinity", { X: [X[0], [0.1, Infinity, 0.2], ...X.slice(2)] }, "X[1][1]"],
    ["options not an object", { options: [1, 2] }, "options"],
    ["threshold not a number", { options: { threshold: "x" } }, "options.threshold"],
  ])("%s", (_name, patch, field) => {
    const e = failure("psr", v3(patch));
    expect(e.field).toBe(field);
    expect(e.expected.length).toBeGreaterThan(3);
    expect(e.expected).not.toMatch(/^Expected|Required|Invalid input/);
  });

  it("the expected texts are readable", () => {
    expect(failure("psr", v3({ X: [X[0], [0.1, "a", 0.2], ...X.slice(2)] })).expected).toBe("a number or null (missing)");
    expect(failure("psr", v3({ y: [0.1, 0.2, null, 0.4, 0.5] })).message).toMatch(/got null/);
    expect(failure("psr", "not json object").field).toBe("body");
  });

  it("a row of a multi-row theta gets the row prefix from checkData", () => {
    const e = failure("maxfit", v3({ theta: [theta, [0.1, Infinity, 0.3]] }));
    expect(e.field).toBe("theta[1][1]");
    expect(e.message).toMatch(/got Infinity/);
  });

  it("fieldFromPath", () => {
    expect(fieldFromPath(["X", 3, 1])).toBe("X[3][1]");
    expect(fieldFromPath(["options", "threshold", 0])).toBe("options.threshold[0]");
    expect(fieldFromPath([])).toBe("body");
  });
});

describe("v2 bodies", () => {
  /** The grid body the official client sends (docs/api.md section 3). */
  const official = { access_id: "user-1", ...officialV2Body("grid", { y, X, theta }) };

  it("parses the official client's grid body without warnings", () => {
    const r = parseRequest("grid", official, "v2");
    expect(Array.from(r.data.y)).toEqual(y);
    expect(r.thetas.map((t) => Array.from(t))).toEqual([theta]);
    expect(r.warnings).toEqual([]);
    expect(r.options).toEqual({
      threshold: [0, 0.2, 0.5, 0.8],
      censor_type: "both",
      censor_unit: "percent",
      censor_operator: "gte",
      prediction_scale: "response",
      adj_fit_multiplier: "K",
      inv_method: "gaussian",
      objective: "kfit",
      min_k: 1,
      max_iter: 1000,
      seed: 7,
      retain: [],
    });
    expect(r.resolved.seed).toBe(7);
  });

  it("a v2 PSR body with the client's default eval_type both is not rejected (G8)", () => {
    const psr = { access_id: "user-1", ...officialV2Body("psr", { y, X, theta }) };

    const r = parseRequest("psr", psr, "v2");
    expect(r.options.censor_type).toBe("relevance");
    expect(r.resolved.censor_type).toBe("relevance");
    expect(r.resolved.missing_moments).toBe("pairwise");
    expect(r.warnings).toHaveLength(1);
    expect(r.warnings[0]).toMatch(/eval_type "both"/);
  });

  it("flat y and flat theta are accepted", () => {
    const r = parseRequest("psr", { access_id: "a", y, X, theta }, "v2");
    expect(Array.from(r.thetas[0])).toEqual(theta);
  });

  it("v2 theta must be one row", () => {
    const e = failure("psr", { access_id: "a", y, X, theta: [theta, theta] }, "v2");
    expect(e.field).toBe("theta");
    expect(e.expected).toMatch(/exactly one row/);
  });

  it("v2 legacy threshold_range with threshold null", () => {
    const r = parseRequest("maxfit", { access_id: "a", y, X, theta: [theta], threshold: null, threshold_range: [0, 0.6], stepsize: 0.2 }, "v2");
    expect(r.options.threshold).toEqual([0, 0.2, 0.4, 0.6]);
  });

  it("an unknown top-level key of a v2 body is an ignored option", () => {
    const r = parseRequest("maxfit", { access_id: "a", y, X, theta: [theta], colour: "red" }, "v2");
    expect(r.warnings).toEqual(['ignored option "colour" (not a maxfit option)']);
  });

  it("an X reference needs a resolver", () => {
    const body = { access_id: "a", y, X: "0123456789abcdef.json", theta: [theta] };
    expect(failure("psr", body, "v2").field).toBe("X");
    const r = parseRequest("psr", body, "v2", {
      resolveXReference: (ref) => {
        expect(ref).toBe("0123456789abcdef.json");
        return X;
      },
    });
    expect(r.data.rows).toBe(5);
  });
});
