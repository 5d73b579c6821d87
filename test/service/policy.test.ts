/**
 * The service's policies at their exact bounds (issue 26: the JSON depth limit was tested only
 * far beyond it): nesting at the limit passes and one more level is refused, the 422 names where;
 * the quota ledger takes exactly what remains and never more.
 */
import { describe, expect, it } from "vitest";
import { checkJsonShape, errorBody, parseJsonLenient, ServiceError } from "../../src/service/http.js";
import { QuotaLedger } from "../../src/service/quota.js";
import { parseRequest, type ParsedRequest } from "../../src/api/request.js";
import { BODY_LIMITS, checkLimits, DEFAULT_LIMITS, estimateWork, jobWork, LimitExceededError, type ServiceLimits } from "../../src/service/limits.js";
import { gold, quickstart } from "./helpers.js";

const MAX_JSON_DEPTH = BODY_LIMITS.maxJsonDepth;
/** The depth part of `checkJsonShape`: the body limits with `maxJsonDepth` set to `limit`. */
const checkJsonDepth = (value: unknown, limit = MAX_JSON_DEPTH, status = 422) => checkJsonShape(value, status, { ...BODY_LIMITS, maxJsonDepth: limit });
/** `depth` levels of arrays around 1: depth 1 is [1]. */
const nested = (depth: number): unknown => JSON.parse("[".repeat(depth) + "1" + "]".repeat(depth));
function refusal(fn: () => void): ServiceError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ServiceError);
    return error as ServiceError;
  }
  throw new Error("expected a refusal");
}

describe("the JSON depth limit", () => {
  it(`the default is ${MAX_JSON_DEPTH}: exactly that deep passes, one level more is a 422`, () => {
    expect(MAX_JSON_DEPTH).toBe(32);
    expect(() => checkJsonDepth(nested(MAX_JSON_DEPTH))).not.toThrow();
    const e = refusal(() => checkJsonDepth(nested(MAX_JSON_DEPTH + 1)));
    expect(e.status).toBe(422);
    expect(e.code).toBe("invalid_input");
    expect(e.message).toContain(`at most ${MAX_JSON_DEPTH} levels deep`);
  });

  it("any limit, at and past it, objects and arrays alike; scalars have no depth", () => {
    for (const limit of [1, 2, 3, 5]) {
      expect(() => checkJsonDepth(nested(limit), limit)).not.toThrow();
      expect(refusal(() => checkJsonDepth(nested(limit + 1), limit)).status).toBe(422);
    }
    expect(() => checkJsonDepth({ a: { b: 1 } }, 2)).not.toThrow();
    expect(() => checkJsonDepth({ a: { b: {} } }, 2)).toThrow(ServiceError);
    expect(() => checkJsonDepth(1, 0)).not.toThrow();
    expect(() => checkJsonDepth("text", 0)).not.toThrow();
    expect(() => checkJsonDepth(null, 0)).not.toThrow();
    expect(() => checkJsonDepth([], 0)).toThrow(ServiceError);
  });

  it("only the deepest branch counts: wide and shallow passes", () => {
    expect(() => checkJsonDepth({ a: [1, 2, 3], b: { c: [4] }, d: Array.from({ length: 100 }, () => [1]) }, 3)).not.toThrow();
    expect(() => checkJsonDepth({ a: [1], b: { c: [[4]] } }, 3)).toThrow(ServiceError);
  });

  it("the 422 names the field where the nesting goes too deep (three steps of its path at most) and the limit", () => {
    const body = errorBody(refusal(() => checkJsonDepth({ options: { x: [[[1]]] } }, 3)));
    expect(body).toMatchObject({ status_code: 422, error_code: 4, field: "options.x[0]", limit: 3 });
    expect(body.details).toEqual([{ field: "options.x[0]", expected: "JSON nested at most 3 levels deep" }]);
    expect(body.message).toBe("options.x[0]: expected JSON nested at most 3 levels deep; this value goes deeper");
    const field = (fn: () => void) => errorBody(refusal(fn)).field;
    expect(field(() => checkJsonDepth({ a: { b: { c: { d: { e: {} } } } } }, 4))).toBe("a.b.c");
    expect(field(() => checkJsonDepth([[1]], 1))).toBe("[0]");
    expect(field(() => checkJsonDepth([{ k: [1] }], 2))).toBe("[0].k");
    expect(field(() => checkJsonDepth({}, 0))).toBe("body");
    expect(refusal(() => checkJsonDepth({ a: {} }, 1, 400)).status).toBe(400);
  });
});

describe("parseJsonLenient", () => {
  it("standard JSON as JSON.parse; Python's NaN as null and ±Infinity as non-finite numbers, outside strings only", () => {
    expect(parseJsonLenient('{"a":[1,2]}')).toEqual({ a: [1, 2] });
    expect(parseJsonLenient("[NaN, Infinity, -Infinity]")).toEqual([null, Infinity, -Infinity]);
    expect(parseJsonLenient('{"x": NaN, "s": "NaN"}')).toEqual({ x: null, s: "NaN" });
    expect(() => parseJsonLenient("[nan]")).toThrow(SyntaxError);
    expect(() => parseJsonLenient('{"a": 1')).toThrow(SyntaxError);
  });
});

describe("QuotaLedger", () => {
  it("takes units while enough remain, exactly down to zero, and nothing when too few are left", () => {
    const ledger = new QuotaLedger();
    expect(ledger.reserve("acme", 10, 3)).toEqual({ ok: true, status: { quota: 10, used: 3, remaining: 7 } });
    expect(ledger.reserve("acme", 10, 7)).toEqual({ ok: true, status: { quota: 10, used: 10, remaining: 0 } });
    expect(ledger.reserve("acme", 10, 1)).toEqual({ ok: false, status: { quota: 10, used: 10, remaining: 0 } });
    expect(ledger.status("acme", 10).used).toBe(10);
    expect(ledger.status("other", 5)).toEqual({ quota: 5, used: 0, remaining: 5 });
  });

  it("refuses a reservation of more than remains without taking any of it", () => {
    const ledger = new QuotaLedger();
    ledger.reserve("acme", 10, 8);
    expect(ledger.reserve("acme", 10, 3)).toEqual({ ok: false, status: { quota: 10, used: 8, remaining: 2 } });
    expect(ledger.reserve("acme", 10, 2).ok).toBe(true);
  });

  it("refunds give units back, never below zero; add counts units already spent; a plan below use shows 0 remaining", () => {
    const ledger = new QuotaLedger();
    ledger.add("acme", 4);
    expect(ledger.status("acme", 10)).toEqual({ quota: 10, used: 4, remaining: 6 });
    ledger.add("acme", 2);
    ledger.refund("acme", 3);
    expect(ledger.status("acme", 10).used).toBe(3);
    ledger.refund("acme", 50);
    expect(ledger.status("acme", 10).used).toBe(0);
    ledger.add("acme", 12);
    expect(ledger.status("acme", 10)).toEqual({ quota: 10, used: 12, remaining: 0 });
  });

  it("units must be a positive integer", () => {
    const ledger = new QuotaLedger();
    for (const units of [0, -1, 1.5, NaN]) expect(() => ledger.reserve("acme", 10, units)).toThrow(RangeError);
    expect(ledger.status("acme", 10).used).toBe(0);
  });
});

describe("the service's limits, counted without running anything", () => {
  // the quickstart 7 x 5: N = 7 rows, K = 5 attributes, 31 admissible combinations
  const grid = (options: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) =>
    parseRequest("grid", { access_id: "u", ...quickstart(extra), options: { threshold: [0, 0.5], censor_type: "both", ...options } }, "v3") as ParsedRequest;
  const psr = (options: Record<string, unknown> = {}) => parseRequest("psr", { access_id: "u", ...quickstart(), options }, "v3") as ParsedRequest;
  const refused = (request: ParsedRequest, limits: Partial<ServiceLimits>): LimitExceededError => {
    try {
      checkLimits(request, { ...DEFAULT_LIMITS, ...limits });
    } catch (error) {
      expect(error).toBeInstanceOf(LimitExceededError);
      return error as LimitExceededError;
    }
    throw new Error("expected a refusal");
  };

  it("a PSR is one combination; a Grid min(max_iter, admissible) or its attribute_combi; censors 2 for both", () => {
    expect(estimateWork(psr({ threshold: [0, 0.2, 0.4] }))).toEqual({
      attributes: 5,
      thetaRows: 1,
      combinations: 1,
      thresholds: 3,
      censors: 1,
      cells: 3,
      work: 21,
      retainedValues: 0,
    });
    const maxfit = parseRequest("maxfit", { access_id: "u", ...quickstart(), options: { threshold: [0], censor_type: "both" } }, "v3") as ParsedRequest;
    expect(estimateWork(maxfit)).toMatchObject({ combinations: 1, censors: 2, cells: 2, work: 14 });
    expect(estimateWork(grid())).toMatchObject({ combinations: 31, thresholds: 2, censors: 2, cells: 124, work: 868, retainedValues: 0 });
    expect(estimateWork(grid({ max_iter: 10 }))).toMatchObject({ combinations: 10, cells: 40, work: 280 });
    expect(
      estimateWork(
        grid({
          attribute_combi: [
            [1, 1, 0, 0, 0],
            [0, 1, 1, 1, 0],
            [1, 1, 1, 1, 1],
          ],
        }),
      ),
    ).toMatchObject({ combinations: 3 });
  });

  it("retained values: per key, by what each array holds (Q combinations, N rows, T thresholds, C censors)", () => {
    // Q = 10, K = 5, N = 7, T = 2, C = 2
    const retained = (keys: string[]) => estimateWork(grid({ max_iter: 10, retain_grid_objects: keys })).retainedValues;
    expect(retained(["k_cells"])).toBe(10);
    expect(retained(["combi_cells"])).toBe(50);
    expect(retained(["ysolo_cells"])).toBe(70);
    for (const key of ["yhat_cells", "adjusted_fit_cells", "n_cells"]) expect(retained([key]), key).toBe(40);
    expect(retained(["weights_cells"])).toBe(280);
    expect(retained(["k_cells", "weights_cells"])).toBe(290);
    expect(retained([])).toBe(0);
    expect(estimateWork(psr({ retain_grid_objects: ["weights_cells"] })).retainedValues).toBe(0);
  });

  it("each limit passes at its value and refuses one past it, naming the option to blame and how to raise it", () => {
    expect(() => checkLimits(grid(), { ...DEFAULT_LIMITS, maxAttributes: 5 })).not.toThrow();
    const attributes = refused(grid(), { maxAttributes: 4 });
    expect(attributes).toMatchObject({ field: "X", limitName: "maxAttributes", limit: 4, requested: 5 });
    expect(attributes.message).toBe(
      "X: expected at most 4 attribute columns (this service's limit maxAttributes; its operator can raise it with rbp serve --max-attributes); this request asks for 5",
    );

    const twoRows = grid({}, { theta: [gold.inputs.theta, gold.inputs.theta] });
    expect(() => checkLimits(twoRows, { ...DEFAULT_LIMITS, maxThetaRows: 2 })).not.toThrow();
    expect(refused(twoRows, { maxThetaRows: 1 })).toMatchObject({ field: "theta", limitName: "maxThetaRows", limit: 1, requested: 2 });

    expect(() => checkLimits(grid(), { ...DEFAULT_LIMITS, maxCombinations: 31 })).not.toThrow();
    expect(refused(grid(), { maxCombinations: 30 })).toMatchObject({ field: "options.max_iter", limitName: "maxCombinations", requested: 31 });
    expect(refused(grid({ max_iter: 20 }), { maxCombinations: 19 }).field).toBe("options.max_iter");
    expect(refused(grid({ min_k: 2 }), { maxCombinations: 2 }).field).toBe("options.min_k");
    expect(refused(grid({ max_k: 4 }), { maxCombinations: 2 }).field).toBe("options.max_k");
    expect(
      refused(
        grid({
          attribute_combi: [
            [1, 1, 0, 0, 0],
            [0, 1, 1, 1, 0],
          ],
        }),
        { maxCombinations: 1 },
      ).field,
    ).toBe("options.attribute_combi");

    const keep = grid({ max_iter: 10, retain_grid_objects: ["weights_cells"] });
    expect(() => checkLimits(keep, { ...DEFAULT_LIMITS, maxRetainedValues: 280 })).not.toThrow();
    const retained = refused(keep, { maxRetainedValues: 279 });
    expect(retained).toMatchObject({ field: "options.retain_grid_objects", limitName: "maxRetainedValues", requested: 280 });
    expect(retained.message).toContain("retained cell values per job");

    expect(() => checkLimits(grid(), { ...DEFAULT_LIMITS, maxWork: 868 })).not.toThrow();
    const work = refused(grid(), { maxWork: 867 });
    expect(work).toMatchObject({ field: "options.threshold", limitName: "maxWork", limit: 867, requested: 868 });
    expect(work.message).toContain("rows x cells per job (here 7 rows x 31 combinations x 2 thresholds x 2 censors)");
    expect(work.message).toContain("rbp serve --max-work");
    expect(refused(grid({ max_iter: 30 }), { maxWork: 100 }).field).toBe("options.max_iter");
    expect(refused(psr({ threshold: [0, 0.5] }), { maxWork: 13 }).field).toBe("options.threshold");
    expect(checkLimits(grid(), DEFAULT_LIMITS).work).toBe(868);
  });

  it("numbers in messages have thousands separators; beyond 2^53 they say so", () => {
    const big = refused(grid(), { maxWork: 1 });
    expect(big.message).toContain("at most 1 rows x cells");
    const e = new LimitExceededError("X", "maxAttributes", 1_000, Infinity, "attribute columns");
    expect(e.message).toContain("at most 1,000 attribute columns");
    expect(e.message).toContain("this request asks for more than 2^53");
  });

  it("jobWork: rows x cells of a stored request, its options resolved again", () => {
    const request = grid({ max_iter: 10 });
    expect(jobWork({ analysis: "grid", data: request.data, thetas: request.thetas, options: { threshold: [0, 0.5], censor_type: "both", max_iter: 10 } })).toBe(
      280,
    );
  });
});

describe("error bodies and lenient JSON, the edges mutation testing found", () => {
  it("error_code 4 for 400, 413 and 422, else 1; field and details only when there is a field", () => {
    for (const status of [400, 413, 422]) expect(errorBody(new ServiceError(status, "x", "m")).error_code).toBe(4);
    for (const status of [401, 404, 409, 429, 500, 503]) expect(errorBody(new ServiceError(status, "x", "m")).error_code).toBe(1);
    expect(errorBody(new ServiceError(422, "x", "m", { errorCode: 9 })).error_code).toBe(9);
    expect(errorBody(new ServiceError(503, "unavailable", "later"))).toStrictEqual({ message: "later", error: "unavailable", status_code: 503, error_code: 1 });
    expect(errorBody(new ServiceError(422, "invalid_input", "bad", { field: "X" }))).toStrictEqual({
      message: "bad",
      error: "invalid_input",
      status_code: 422,
      error_code: 4,
      field: "X",
      details: [{ field: "X" }],
    });
    const given = [{ field: "a", expected: "b" }];
    expect(errorBody(new ServiceError(422, "invalid_input", "bad", { details: given, extra: { limit: 3 } }))).toMatchObject({ details: given, limit: 3 });
  });

  it("what does not parse throws JSON.parse's own error, with or without Python's tokens in it", () => {
    const own = (text: string) => {
      try {
        JSON.parse(text);
      } catch (error) {
        return (error as Error).message;
      }
      throw new Error("parsed");
    };
    for (const text of ['{"a": 1', "[NaN, }", "[nan]"]) expect(() => parseJsonLenient(text)).toThrow(own(text));
  });

  it("the ledger's refusal says what it got", () => {
    expect(() => new QuotaLedger().reserve("acme", 10, 0)).toThrow("units must be a positive integer, got 0");
  });
});
