/**
 * The service's policies at their exact bounds (issue 26: the JSON depth limit was tested only
 * far beyond it): nesting at the limit passes and one more level is refused, the 422 names where;
 * the quota ledger takes exactly what remains and never more.
 */
import { describe, expect, it } from "vitest";
import { checkJsonDepth, errorBody, MAX_JSON_DEPTH, parseJsonLenient, ServiceError } from "../../src/service/http.js";
import { QuotaLedger } from "../../src/service/quota.js";

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
    expect(body.details).toEqual([{ field: "options.x[0]", expected: "at most 3 levels of nesting" }]);
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
