import fc from "fast-check";
import { z } from "zod";
import { describe, expect, it } from "vitest";
import { ErrorBodySchema, ExperimentReceiptSchema, ReceiptSchema, ThetaSchema, YSchema } from "../../src/api/schemas.js";

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
