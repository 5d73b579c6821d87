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
