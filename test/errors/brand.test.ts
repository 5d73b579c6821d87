/**
 * Errors across copies of the module: an error made by one copy of rbp-notebook is `instanceof`
 * the same class of another copy (brand by Symbol.for, as undici does), every error has a stable
 * `code`, and a still-running job reads as "pending", not "not found".
 */
import { describe, expect, it, vi } from "vitest";
import * as client from "../../src/client/errors.js";
import { InvalidInputError, ComputationError } from "../../src/engine/errors.js";
import { FrameError } from "../../src/frame/errors.js";
import { RbpBaseError } from "../../src/errors/index.js";
import { toPredictionError, PredictionError } from "../../src/notebook/errors.js";

async function otherCopy() {
  vi.resetModules();
  const copy = (await import("../../src/client/errors.js")) as typeof client;
  const root = (await import("../../src/errors/index.js")) as { RbpBaseError: typeof RbpBaseError };
  expect(copy.ValidationError).not.toBe(client.ValidationError); // really a second copy
  return { copy, root };
}

describe("brands", () => {
  it("instanceof holds across two copies of the module, both ways, for the class and its bases", async () => {
    const { copy, root } = await otherCopy();
    const theirs = new copy.ValidationError("X[3][1]: expected a number", { field: "X[3][1]" });
    expect(theirs instanceof client.ValidationError).toBe(true);
    expect(theirs instanceof client.RbpError).toBe(true);
    expect(theirs instanceof RbpBaseError).toBe(true);
    expect(theirs instanceof Error).toBe(true);
    expect(theirs instanceof client.QuotaExceededError).toBe(false);
    const ours = new client.JobPendingError("still running", { jobStatus: "running" });
    expect(ours instanceof copy.JobPendingError).toBe(true);
    expect(ours instanceof root.RbpBaseError).toBe(true);
    expect(ours instanceof copy.NotFoundError).toBe(false);
  });

  it("the notebook translation reads an error from another copy as its kind", async () => {
    const { copy } = await otherCopy();
    const e = toPredictionError(new copy.QuotaExceededError("spent", { remaining: 0, required: 3 }), { subject: "Grid", scrub: (s) => s });
    expect(e.kind).toBe("quota");
  });

  it("a plain object or another error is not an instance", () => {
    expect({} instanceof client.RbpError).toBe(false);
    expect(new Error("x") instanceof RbpBaseError).toBe(false);
    expect((null as unknown) instanceof RbpBaseError).toBe(false);
    class Mine extends client.ApiError {}
    expect(new Mine("m") instanceof Mine).toBe(true);
    expect(new client.ApiError("a") instanceof Mine).toBe(false);
  });
});

describe("codes", () => {
  it("every error has a stable code; the service's own code wins on a client error", () => {
    const made: RbpBaseError[] = [
      new InvalidInputError("theta", "a number"),
      new ComputationError("singular"),
      new FrameError("no column Age", { column: "Age" }),
      new client.NotFoundError("gone"),
      new client.ValidationError("bad"),
      new client.ConfigurationError("baseUrl", "no base URL"),
      new client.JobPendingError("running", { jobStatus: "running" }),
    ];
    expect(made.map((e) => e.code)).toEqual([
      "invalid_input",
      "computation_failed",
      "invalid_data",
      "not_found",
      "invalid_request",
      "configuration",
      "pending",
    ]);
    expect(new client.ApiError("x", { code: "internal_error" }).code).toBe("internal_error");
  });
});

describe("pending", () => {
  it("a still-running job is a pending PredictionError, not a not-found one", () => {
    const e = toPredictionError(new client.JobPendingError("job 4 is still running", { jobId: 4, jobStatus: "running" }), { subject: "Grid", scrub: (s) => s });
    expect(e).toBeInstanceOf(PredictionError);
    expect(e.kind).toBe("pending");
    expect(e.code).toBe("pending");
    expect(e.jobId).toBe(4);
    expect(toPredictionError(new client.NotFoundError("no job 4"), { subject: "Grid", scrub: (s) => s }).kind).toBe("not-found");
  });
});
