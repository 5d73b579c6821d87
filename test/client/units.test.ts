/** The client's pieces without a server: retry arithmetic, the polling schedule, size bounds, request preparation. */
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { PayloadTooLargeError, ValidationError, ConfigurationError } from "../../src/client/errors.js";
import { redactPath } from "../../src/client/http.js";
import { nextDelay, withRetryAfter } from "../../src/client/polling.js";
import { checkRequest, prepareRequest, X_LIMIT_BYTES } from "../../src/client/prepare.js";
import { parseRequest } from "../../src/api/request.js";
import { datasetFromRows } from "../../src/engine/data.js";
import { Redactor } from "../../src/internal/redact.js";
import { backoffDelay, parseRetryAfter } from "../../src/client/retry.js";
import { jsonSizeBounds, readMatrix } from "../../src/client/size.js";
import { quickstart } from "./helpers.js";

/** The quickstart 7x5 request. */
const small = quickstart();
const v3 = { version: "v3" as const, accessId: "user-1" };
const v2 = { version: "v2" as const, accessId: "user-1" };

describe("Retry-After and backoff", () => {
  it("reads delta-seconds and HTTP dates, ignores junk", () => {
    expect(parseRetryAfter("2")).toBe(2000);
    expect(parseRetryAfter("0")).toBe(0);
    expect(parseRetryAfter("0.5")).toBe(500);
    expect(parseRetryAfter(["3", "9"])).toBe(3000);
    const now = Date.parse("Wed, 21 Oct 2015 07:28:00 GMT");
    expect(parseRetryAfter("Wed, 21 Oct 2015 07:28:05 GMT", now)).toBe(5000);
    expect(parseRetryAfter("Wed, 21 Oct 2015 07:27:00 GMT", now)).toBe(0);
    expect(parseRetryAfter(undefined)).toBeUndefined();
    expect(parseRetryAfter("")).toBeUndefined();
    expect(parseRetryAfter("-1")).toBeUndefined();
    expect(parseRetryAfter("soon")).toBeUndefined();
  });

  it("backoff is full jitter below min(max, base * 2^attempt)", () => {
    expect(backoffDelay(0, 500, 8000, () => 0.999)).toBe(499);
    expect(backoffDelay(3, 500, 8000, () => 0.999)).toBe(3996);
    expect(backoffDelay(10, 500, 8000, () => 0.999)).toBe(7992);
    expect(backoffDelay(2, 500, 8000, () => 0)).toBe(0);
  });
});

describe("polling schedule", () => {
  const schedule = { initialDelayMs: 10, factor: 1.5, maxDelayMs: 2000 };

  it("starts at 10 ms and grows by 1.5 to the 2 s cap", () => {
    const delays: number[] = [];
    let d: number | undefined;
    for (let i = 0; i < 16; i++) delays.push((d = nextDelay(d, schedule)));
    expect(delays.slice(0, 4)).toEqual([10, 15, 22.5, 33.75]);
    expect(Math.max(...delays)).toBe(2000);
    expect(delays.at(-1)).toBe(2000);
    // Ten reads in the first ~750 ms, then the pace of a long job.
    const firstSecond = delays.reduce((acc, x) => (acc.t + x <= 1000 ? { t: acc.t + x, n: acc.n + 1 } : acc), { t: 0, n: 0 });
    expect(firstSecond.n).toBeLessThanOrEqual(10);
  });

  it("a 202's Retry-After is a floor only once the job has run that long, and never above the cap", () => {
    expect(withRetryAfter(15, 1000, 20, schedule)).toBe(15);
    expect(withRetryAfter(15, 1000, 999, schedule)).toBe(15);
    expect(withRetryAfter(384, 1000, 1000, schedule)).toBe(1000);
    expect(withRetryAfter(1500, 1000, 5000, schedule)).toBe(1500);
    expect(withRetryAfter(100, 30_000, 60_000, schedule)).toBe(2000);
    expect(withRetryAfter(100, undefined, 60_000, schedule)).toBe(100);
  });
});

describe("size bounds of X's JSON", () => {
  const cell = fc.oneof(
    fc.double({ noNaN: false }),
    fc.integer({ min: -1e9, max: 1e9 }),
    fc.constant(null),
    fc.double({ min: -1e-6, max: 1e-6 }),
    fc.double({ min: 1e15, max: 1e22 }),
    fc.constantFrom(0, -0, 1e21, -1e21, 5e-324, Number.MAX_VALUE, -Number.MIN_VALUE, 0.1, 1e-7, 9.999999999999999e-8),
  );

  it("lower <= exact <= upper for any numbers", () => {
    fc.assert(
      fc.property(fc.array(fc.array(cell, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 6 }), (X) => {
        const exact = JSON.stringify(X).length;
        const b = jsonSizeBounds(X)!;
        expect(b.lower).toBeLessThanOrEqual(exact);
        expect(b.upper).toBeGreaterThanOrEqual(exact);
        // exact: JSON writes X back as itself (what the in-process wire needs to skip JSON).
        expect(b.exact).toBe(X.every((row) => row.every((v) => v === null || (Number.isFinite(v) && !Object.is(v, -0)))));
      }),
      { numRuns: 2000 },
    );
  });

  it("is exact for integers and nulls", () => {
    const X = [
      [0, -0, 1, -1, 10, 999, -1000, null],
      [123456789012, 1e20, -99, NaN, Infinity, 7, 8, 9],
    ];
    const b = jsonSizeBounds(X)!;
    expect(b.lower).toBe(JSON.stringify(X).length);
    expect(b.upper).toBe(JSON.stringify(X).length);
  });

  it("is undefined for something that is not rows", () => {
    expect(jsonSizeBounds("X")).toBeUndefined();
    expect(jsonSizeBounds([1, 2])).toBeUndefined();
  });

  it("readMatrix: X's cells as datasetFromRows copies them, with bounds and exactness as jsonSizeBounds says", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.array(cell, { minLength: 6, maxLength: 6 }), { minLength: 1, maxLength: 6 }),
        fc.boolean(),
        (k, wide, shared) => {
          const X = wide.map((row) => row.slice(0, k));
          const read = readMatrix(X, { shared, maxBytes: X_LIMIT_BYTES })!;
          const exact = JSON.stringify(X).length;
          expect(read.lower).toBeLessThanOrEqual(exact);
          expect(read.upper).toBeGreaterThanOrEqual(exact);
          expect(read.exact).toBe(jsonSizeBounds(X)!.exact);
          expect([read.rows, read.cols]).toEqual([X.length, k]);
          expect(read.values.buffer instanceof SharedArrayBuffer).toBe(shared);
          // Bit for bit (NaN for null, -0 kept).
          expect([...read.values].map((v) => (Object.is(v, -0) ? "-0" : v))).toEqual(
            [...datasetFromRows(new Array<number>(X.length).fill(0), X).X].map((v) => (Object.is(v, -0) ? "-0" : v)),
          );
        },
      ),
      { numRuns: 500 },
    );
  });

  it("readMatrix: undefined for anything the schema's X does not accept, and for an X that a byte a cell puts over the limit", () => {
    const opts = { shared: false, maxBytes: X_LIMIT_BYTES };
    expect(readMatrix("X", opts)).toBeUndefined();
    expect(readMatrix([], opts)).toBeUndefined();
    expect(readMatrix([[]], opts)).toBeUndefined();
    expect(readMatrix([1, 2], opts)).toBeUndefined();
    expect(readMatrix([[1, 2], [3]], opts)).toBeUndefined();
    expect(readMatrix([[1, 2], 3], opts)).toBeUndefined();
    expect(readMatrix([[1, "2"]], opts)).toBeUndefined();
    expect(readMatrix([[1, undefined]], opts)).toBeUndefined();
    expect(readMatrix([[1, , 3]], opts)).toBeUndefined();
    // "[[1,2]]": 5 bytes of brackets and commas, and a byte a cell at least.
    expect(readMatrix([[1, 2]], { shared: false, maxBytes: 2 + 2 + 1 + 2 - 1 })).toBeUndefined();
    // Within 26 bytes a cell: the shape's bounds; past them, jsonSizeBounds' own (here exact).
    expect(readMatrix([[1, 2]], { shared: false, maxBytes: 2 + 2 + 1 + 2 * 26 })).toMatchObject({ lower: 7, upper: 57, loose: true });
    expect(readMatrix([[1, 2]], { shared: false, maxBytes: 2 + 2 + 1 + 2 * 26 - 1 })).toMatchObject({ lower: 7, upper: 7, loose: false });
    expect(readMatrix([[1, 2]], { shared: false, maxBytes: 7 })!.values).toEqual(new Float64Array([1, 2]));
  });

  it("readMatrix: past the shape's bounds, jsonSizeBounds' bounds and the same cells, in one pass", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.array(cell, { minLength: 6, maxLength: 6 }), { minLength: 1, maxLength: 6 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (k, wide, at) => {
          const X = wide.map((row) => row.slice(0, k));
          const frame = 2 + (X.length - 1) + X.length * (2 + (k - 1));
          const cells = X.length * k;
          // A limit anywhere from a byte a cell to 26.
          const maxBytes = Math.floor(frame + cells + at * 25 * cells);
          const read = readMatrix(X, { shared: false, maxBytes })!;
          const bounds = jsonSizeBounds(X)!;
          expect(read.loose).toBe(frame + 26 * cells <= maxBytes);
          if (!read.loose) expect([read.lower, read.upper, read.exact]).toEqual([bounds.lower, bounds.upper, bounds.exact]);
          expect([...read.values].map((v) => (Object.is(v, -0) ? "-0" : v))).toEqual(
            [...datasetFromRows(new Array<number>(X.length).fill(0), X).X].map((v) => (Object.is(v, -0) ? "-0" : v)),
          );
        },
      ),
      { numRuns: 500 },
    );
  });

  it("checkRequest parses what parseRequest parses from the same body, X read once (shared or not)", () => {
    const X = [
      [1, null, 3],
      [4, 5.5, -6],
      [7, 8, 9e-9],
      [0.1, 2, 3],
      [1, 1, 1],
    ];
    for (const request of [
      { y: [1, 2, 3, 4, 5], X },
      { y: [[1], [2], [3], [4], [5]], X, options: { max_k: 2, threshold: [0.2] }, theta: [1, 2, 3] },
      {
        y: [1, 2, 3, 4, 5],
        X,
        theta: [
          [1, 2, 3],
          [3, 2, 1],
        ],
        options: { ignored_key: 1 },
      },
    ] as const) {
      for (const shared of [false, true]) {
        const checked = checkRequest("grid", request as never, { ...v3, shared });
        const direct = parseRequest("grid", { access_id: "user-1", ...request }, "v3", { requireAccessId: true });
        expect(checked.parsed).toEqual(direct);
        expect(checked.parsed.data.y.buffer instanceof SharedArrayBuffer).toBe(shared);
        expect(checked.parsed.data.X.buffer instanceof SharedArrayBuffer).toBe(shared);
      }
    }
    // The default theta (the last row of X) read from the values; a missing value there refused as before.
    expect(Array.from(checkRequest("grid", { y: [1, 2, 3, 4, 5], X }, v3).parsed.thetas[0])).toEqual([1, 1, 1]);
    const lastMissing = [...X.slice(0, 4), [1, null, 1]];
    expect(() => checkRequest("grid", { y: [1, 2, 3, 4, 5], X: lastMissing }, v3)).toThrow(/theta: expected K=3 finite numbers/);
  });
});

describe("prepareRequest", () => {
  it("v3: one body with the options as given", () => {
    const p = prepareRequest("psr", { ...small, options: { threshold: [0.8], censor_type: "relevance" } }, v3);
    expect(p.bodies).toHaveLength(1);
    expect(JSON.parse(p.bodies[0])).toEqual({ access_id: "user-1", ...small, options: { threshold: [0.8], censor_type: "relevance" } });
    expect(p.rows).toBe(1);
    expect(p.xBytes).toBe(JSON.stringify(small.X).length);
  });

  it("v3: NaN in X goes out as null", () => {
    const X = small.X.map((r) => [...r]);
    X[2][1] = NaN;
    const p = prepareRequest("grid", { y: small.y, X }, v3);
    expect(JSON.parse(p.bodies[0]).X[2][1]).toBeNull();
  });

  it("v2: a flat body per theta row, y N x 1, theta 1 x K, v2 option names", () => {
    const p = prepareRequest(
      "grid",
      { ...small, theta: [small.theta, small.X[0]], options: { censor_type: "both", censor_unit: "percent", censor_operator: "gte", min_k: 2, seed: 7 } },
      v2,
    );
    expect(p.rows).toBe(2);
    const bodies = p.bodies.map((b) => JSON.parse(b));
    expect(bodies[0].y).toEqual(small.y.map((v) => [v]));
    expect(bodies[0].theta).toEqual([small.theta]);
    expect(bodies[1].theta).toEqual([small.X[0]]);
    expect(bodies[0]).toMatchObject({ access_id: "user-1", eval_type: "both", is_threshold_percent: true, most_eval: true, k: 2, _seed: 7 });
    expect(bodies[0].options).toBeUndefined();
  });

  it("v2: Grid without theta sends the last row of X", () => {
    const p = prepareRequest("grid", { y: small.y, X: small.X }, v2);
    expect(JSON.parse(p.bodies[0]).theta).toEqual([small.X[6]]);
  });

  it.each([
    ["N <= K", { y: small.y.slice(0, 5), X: small.X.slice(0, 5), theta: small.theta }, "psr", "X"],
    ["non-finite y", { ...small, y: [...small.y.slice(0, 6), Infinity] }, "psr", "y[6]"],
    ["null in theta", { ...small, theta: [24, 5, null, 60, 11] }, "psr", "theta[2]"],
    ["theta of the wrong length", { ...small, theta: [1, 2, 3] }, "psr", "theta"],
    ["y and X of different lengths", { ...small, y: small.y.slice(1) }, "psr", "y"],
    ["PSR and censor_type both", { ...small, options: { censor_type: "both" } }, "psr", "options.censor_type"],
    ["an unknown option value", { ...small, options: { censor_operator: "ge" } }, "psr", "options.censor_operator"],
    [
      "required_attributes with attribute_combi",
      { ...small, options: { attribute_combi: [[1, 1, 0, 0, 0]], required_attributes: [1, 0, 0, 0, 0] } },
      "grid",
      "options.required_attributes",
    ],
    ["min_k above K", { ...small, options: { min_k: 9 } }, "grid", "options.min_k"],
    ["PSR without theta", { y: small.y, X: small.X }, "psr", "theta"],
  ])("refuses %s, naming the field", (_name, request, analysis, field) => {
    try {
      prepareRequest(analysis as "psr", request as never, v3);
      throw new Error("accepted");
    } catch (e) {
      expect(e).toBeInstanceOf(ValidationError);
      expect((e as ValidationError).field).toMatch(new RegExp(`^${field.replace(/[[\].]/g, "\\$&")}`));
      expect((e as ValidationError).local).toBe(true);
      expect((e as Error).message).toMatch(/nothing was sent and no quota was spent/);
    }
  });

  it("needs an access id", () => {
    expect(() => prepareRequest("psr", small, { version: "v3", accessId: undefined })).toThrow(ConfigurationError);
    expect(() => prepareRequest("psr", small, { version: "v3", accessId: undefined })).toThrow(/CSA_ACCESS_ID/);
    expect(JSON.parse(prepareRequest("psr", { ...small, accessId: "mine" }, { version: "v3", accessId: undefined }).bodies[0]).access_id).toBe("mine");
  });

  it("refuses an X whose JSON cannot fit in 5 MiB before encoding it", () => {
    // 700k integers of 8 digits: the lower bound alone is over 5 MiB.
    const X = Array.from({ length: 70_000 }, (_, i) => Array.from({ length: 10 }, (_, j) => 10_000_000 + i * 10 + j));
    const y = X.map((r) => r[0]);
    // "before encoding it": no block of X's rows reaches JSON.stringify (not a clock: a spy)
    const stringify = vi.spyOn(JSON, "stringify");
    let error: unknown;
    try {
      prepareRequest("psr", { y, X, theta: X[0] }, v3);
    } catch (e) {
      error = e;
    }
    const rows = new Set<unknown>(X);
    const encodedRows = stringify.mock.calls.filter(([v]) => Array.isArray(v) && v.some((row) => rows.has(row))).length;
    stringify.mockRestore();
    expect(encodedRows).toBe(0);
    expect(error).toBeInstanceOf(PayloadTooLargeError);
    const e = error as PayloadTooLargeError;
    expect(e.local).toBe(true);
    expect(e.limit).toBe(X_LIMIT_BYTES);
    expect(e.bytes).toBe(JSON.stringify(X).length); // integers: the bound is exact
    expect(e.message).toMatch(/5\.00 MiB/);
  });

  it("checks the exact size when the bounds leave it open", () => {
    // Non-integers: lower bound under the limit, upper bound over it; exact size just over.
    const limit = 10_000;
    const make = (rows: number) => Array.from({ length: rows }, (_, i) => [i + 0.123456789, i * 0.5 + 0.25, -i - 0.75]);
    let rows = 10;
    while (JSON.stringify(make(rows + 10)).length <= limit) rows += 10;
    const fits = make(rows);
    const over = make(rows + 10);
    const b = jsonSizeBounds(over)!;
    expect(b.lower).toBeLessThan(limit);
    expect(b.upper).toBeGreaterThan(limit);
    expect(() => prepareRequest("psr", { y: fits.map((r) => r[0]), X: fits, theta: [1, 2, 3] }, { ...v3, limitBytes: limit })).not.toThrow();
    expect(() => prepareRequest("psr", { y: over.map((r) => r[0]), X: over, theta: [1, 2, 3] }, { ...v3, limitBytes: limit })).toThrow(PayloadTooLargeError);
  });
});

describe("X's encoding and the limit, whatever the numbers", () => {
  const finite = fc.oneof(
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.integer({ min: -1e6, max: 1e6 }),
    fc.double({ min: -1, max: 1, noNaN: true }),
  );
  it("refuses exactly when JSON.stringify(X) is over the limit, and sends exactly that text", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(finite, finite), { minLength: 3, maxLength: 30 }), fc.integer({ min: 20, max: 1500 }), (rows, limit) => {
        const X = rows.map(([a, b]) => [a, b]);
        const y = X.map((_, i) => i);
        const exact = JSON.stringify(X).length;
        try {
          const p = prepareRequest("psr", { y, X, theta: [0, 0] }, { ...v3, limitBytes: limit });
          expect(exact).toBeLessThanOrEqual(limit);
          expect(p.xBytes).toBe(exact);
          expect(p.bodies[0]).toContain(`"X":${JSON.stringify(X)},`);
        } catch (e) {
          if (!(e instanceof PayloadTooLargeError)) throw e;
          expect(exact).toBeGreaterThan(limit);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe("secrets", () => {
  it("the redactor scrubs plain, URL-encoded and JSON-escaped forms, deep", () => {
    const r = new Redactor(['s3cr+t/key"x', undefined, "ab"]);
    expect(r.text('key=s3cr+t/key"x!')).toBe("key=[redacted]!");
    expect(r.text(`k=${encodeURIComponent('s3cr+t/key"x')}`)).toBe("k=[redacted]");
    expect(r.text(JSON.stringify({ k: 's3cr+t/key"x' }))).toBe('{"k":"[redacted]"}');
    expect(r.value({ a: ['s3cr+t/key"x', 1], b: { 's3cr+t/key"x': 2 } })).toEqual({ a: ["[redacted]", 1], b: { "[redacted]": 2 } });
    expect(r.text("ab")).toBe("ab"); // too short to be a secret
    expect(JSON.stringify(r)).not.toContain("s3cr");
  });

  it("job codes are elided from request labels", () => {
    expect(redactPath("/v3/results/12/0123456789abcdef")).toBe("/v3/results/12/…");
    expect(redactPath("/v3/jobs/12/0123456789abcdef/insights/relevance")).toBe("/v3/jobs/12/…/insights/relevance");
    expect(redactPath("/v3/quota")).toBe("/v3/quota");
  });
});

describe("Retry-After, the edges mutation testing found", () => {
  it("several digits, surrounding blanks; digits followed by anything else are not a delay", () => {
    expect(parseRetryAfter("120")).toBe(120_000);
    expect(parseRetryAfter(" 2 ")).toBe(2000);
    expect(parseRetryAfter(["  7"])).toBe(7000);
    expect(parseRetryAfter("12abc")).toBeUndefined();
    expect(parseRetryAfter("   ")).toBeUndefined();
  });
});
