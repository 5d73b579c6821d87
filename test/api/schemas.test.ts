import fc from "fast-check";
import { z } from "zod";
import { describe, expect, it } from "vitest";
import {
  ErrorBodySchema,
  ExperimentReceiptSchema,
  ReceiptSchema,
  ThetaSchema,
  V3RequestSchema,
  V3RequestSchemaNoAccess,
  YSchema,
  plainV3Body,
} from "../../src/api/schemas.js";

describe("receipts and error bodies", () => {
  it("receipt", () => {
    expect(ReceiptSchema.parse({ job_id: 1074, job_code: "66cfc21f7effa501" })).toEqual({ job_id: 1074, job_code: "66cfc21f7effa501" });
    expect(ReceiptSchema.safeParse({ job_id: "1074", job_code: "66cfc21f7effa501" }).success).toBe(false);
    expect(ReceiptSchema.safeParse({ job_id: 1.5, job_code: "x" }).success).toBe(false);
    expect(ReceiptSchema.parse({ job_id: 1, job_code: "a", warnings: ["w"] }).warnings).toEqual(["w"]);
  });

  it("experiment receipt", () => {
    const ok = {
      experiment_id: 3,
      experiment_code: "a073bf7cce273e33",
      jobs: [
        { job_id: 10, job_code: "aa", row: 0 },
        { job_id: 11, job_code: "bb", row: 1 },
      ],
    };
    expect(ExperimentReceiptSchema.parse(ok).jobs[1].row).toBe(1);
    expect(ExperimentReceiptSchema.safeParse({ ...ok, jobs: [{ job_id: 10, job_code: "aa" }] }).success).toBe(false);
    expect(ExperimentReceiptSchema.safeParse({ ...ok, jobs: [] }).success).toBe(false);
  });

  it("error body", () => {
    const body = {
      message: "X row 5 has 3 values, expected 4",
      error: "invalid_input",
      status_code: 400,
      error_code: 4,
      details: [{ field: "X[5]", expected: "4 values like the first row" }],
    };
    expect(ErrorBodySchema.parse(body).details?.[0].field).toBe("X[5]");
    expect(ErrorBodySchema.safeParse({ message: "Forbidden" }).success).toBe(false);
    expect(ErrorBodySchema.safeParse({ ...body, status_code: "400" }).success).toBe(false);
  });
});

describe("array shapes", () => {
  it("y: N numbers or N x 1", () => {
    expect(YSchema.parse([[1], [2]])).toEqual([1, 2]);
    expect(YSchema.parse([1, 2])).toEqual([1, 2]);
    expect(YSchema.safeParse([]).success).toBe(false);
  });

  it("theta: one row or several, always rows out", () => {
    expect(ThetaSchema.parse([1, 2])).toEqual([[1, 2]]);
    expect(ThetaSchema.parse([[1, 2]])).toEqual([[1, 2]]);
    expect(
      ThetaSchema.parse([
        [1, 2],
        [3, 4],
      ]),
    ).toEqual([
      [1, 2],
      [3, 4],
    ]);
    expect(ThetaSchema.safeParse([[1, "a"]]).success).toBe(false);
    expect(ThetaSchema.safeParse([NaN, 1]).success).toBe(false);
  });
});

describe("y's plain-loop check", () => {
  // y as zod checked it value by value before the plain loop (the detailed check still names what is wrong).
  const valueByValue = z.preprocess(
    (v) => (Array.isArray(v) && v.length > 0 && v.every((e) => Array.isArray(e) && e.length === 1) ? v.map((e) => e[0]) : v),
    z
      .array(
        z.number({
          invalid_type_error: "a finite number (y is N numbers or an N x 1 column, without missing values)",
          required_error: "a finite number (y is N numbers or an N x 1 column, without missing values)",
        }),
        {
          invalid_type_error: "an array of N numbers or an N x 1 column",
          required_error: "an array of N numbers or an N x 1 column",
        },
      )
      .min(1, "at least one value"),
  );
  const cell = fc.oneof(fc.double(), fc.constantFrom(null, undefined, "1", NaN, Infinity, -0, true), fc.array(fc.double(), { maxLength: 2 }));
  const y = fc.oneof(fc.array(cell, { maxLength: 6 }), fc.array(fc.double(), { maxLength: 6 }), fc.constantFrom(undefined, null, 3, "y", {}));

  it("accepts and refuses what the value-by-value check did, with the same issues", () => {
    fc.assert(
      fc.property(y, (value) => {
        const now = z.object({ y: YSchema }).safeParse({ y: value });
        const before = z.object({ y: valueByValue }).safeParse({ y: value });
        expect(now.success).toBe(before.success);
        if (now.success && before.success) expect(now.data).toEqual(before.data);
        else expect(now.error?.issues).toEqual(before.error?.issues);
      }),
      { numRuns: 2000 },
    );
  });
});

describe("a v3 body's common case by plain code (plainV3Body)", () => {
  const X = [[1, 2]];
  const value = fc.oneof(fc.constant(undefined), fc.constant(null), fc.double(), fc.string(), fc.array(fc.double(), { maxLength: 3 }), fc.boolean());
  const key = fc.oneof(fc.constantFrom("max_k", "threshold", "__proto__", "constructor", "toString", "0"), fc.string({ maxLength: 4 }));
  const options = fc.oneof(
    fc.constant(undefined),
    fc.constant(null),
    fc.dictionary(key, value, { maxKeys: 4 }),
    fc.constant([1]),
    fc.constant(new Date(0)),
    fc.constant(Object.create({ inherited: 1 }) as object),
    fc.constant(JSON.parse('{"__proto__": 1, "max_k": 2}') as object),
    fc.constant({ [Symbol("s")]: 1, max_k: 2 }),
  );
  const body = fc.record(
    {
      access_id: fc.oneof(fc.constant(undefined), fc.constant(""), fc.constant("me"), fc.constant(7)),
      y: fc.oneof(
        { arbitrary: fc.array(fc.double({ noNaN: true }), { minLength: 1, maxLength: 4 }), weight: 8 },
        fc.array(fc.double(), { maxLength: 4 }),
        fc.constant([[1], [2]]),
        fc.constant([1, null]),
        fc.constant("y"),
      ),
      theta: fc.oneof(fc.constant(undefined), fc.constant(null), fc.constant([1, 2])),
      options,
    },
    { requiredKeys: ["y"] },
  );

  it("answers what the schema answers, or undefined (the schema then runs)", () => {
    let answered = 0;
    fc.assert(
      fc.property(body, fc.boolean(), fc.integer({ min: 0, max: 9 }), (b, requireAccessId, extra) => {
        const given = { ...b, X, ...(extra === 0 ? { extra: 1 } : {}) };
        const plain = plainV3Body(given, requireAccessId);
        const parsed = (requireAccessId ? V3RequestSchema : V3RequestSchemaNoAccess).safeParse(given);
        if (plain === undefined) return;
        answered++;
        expect(parsed.success).toBe(true);
        const data = parsed.data as Record<string, unknown>;
        // The same values, key for key (the parser reads these, and spreads options).
        for (const k of ["access_id", "y", "X", "theta"] as const) expect(plain[k] ?? undefined).toEqual(data[k] ?? undefined);
        expect(plain.options === null || plain.options === undefined ? plain.options : { ...plain.options }).toStrictEqual(data.options);
        expect(Object.keys(data).filter((k) => data[k] !== undefined && !["access_id", "y", "X", "theta", "options"].includes(k))).toEqual([]);
      }),
      { numRuns: 3000 },
    );
    expect(answered).toBeGreaterThan(100);
  });

  it("leaves to the schema what it would report or change", () => {
    const y = [1, 2];
    expect(plainV3Body({ access_id: "me", y, X }, true)).toEqual({ access_id: "me", y, X, theta: undefined, options: undefined });
    expect(plainV3Body({ y, X }, true)).toBeUndefined();
    expect(plainV3Body({ y, X }, false)).toBeDefined();
    expect(plainV3Body({ access_id: "me", y: [[1], [2]], X }, true)).toBeUndefined();
    expect(plainV3Body({ access_id: "me", y: [1, NaN], X }, true)).toBeUndefined();
    expect(plainV3Body({ access_id: "me", y, X, theta: [1, 2] }, true)).toBeUndefined();
    expect(plainV3Body({ access_id: "me", y, X, options: { max_k: undefined } }, true)).toBeUndefined();
    expect(plainV3Body({ access_id: "me", y, X, other: 1 }, true)).toBeUndefined();
  });
});
