/**
 * What both API versions share on the client side: the interface of a version's wire, and the
 * checks that turn response bodies into the public types (a body that does not fit is an
 * ApiError naming the field, never a crash further down).
 */
import { z } from "zod";
import { fieldFromPath } from "../api/request.js";
import { ResultError } from "../api/result.js";
import { ApiError, ValidationError } from "./errors.js";
import type { PreparedRequest } from "./prepare.js";
import type {
  CallOptions,
  ExperimentReceipt,
  ExperimentRow,
  ExperimentState,
  ExperimentStatus,
  FieldValue,
  JobReceipt,
  JobSnapshot,
  QuotaStatus,
  Receipt,
} from "./types.js";

export interface JobRef {
  job_id: number;
  job_code: string;
}

/** One API version as the client speaks it. */
export interface Wire {
  submit(prepared: PreparedRequest, call: CallOptions): Promise<Receipt>;
  /** One read of a job; a failed job throws JobFailedError. */
  status(job: JobRef, call: CallOptions): Promise<JobSnapshot>;
  /** One field of a finished job; JobPendingError while it runs. */
  field(job: JobRef, path: string, call: CallOptions): Promise<FieldValue>;
  /**
   * The parent view of an experiment. `known` holds rows already finished (v2 groups read only
   * the others); ignored by v3, which reads the whole view in one request.
   */
  experiment(receipt: ExperimentReceipt, call: CallOptions, known?: Map<number, ExperimentRow>): Promise<ExperimentState>;
  quota(call: CallOptions): Promise<QuotaStatus>;
}

/** Parses `value` with `schema`, or throws an ApiError naming the first field that does not fit. */
export function expectShape<T extends z.ZodTypeAny>(schema: T, value: unknown, what: string, request: string): z.output<T> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  throw new ApiError(`unexpected ${what} from the service: ${fieldFromPath(issue.path)}: ${issue.message} (${request})`, {
    status: 200,
    code: "unexpected_response",
    request,
  });
}

/** A ResultError (malformed result object) as an ApiError; anything else unchanged. */
export function resultProblem(error: unknown, request: string): unknown {
  if (error instanceof ResultError && error.reason === "malformed") {
    return new ApiError(`unexpected result from the service: ${error.message} (${request})`, { status: 200, code: "unexpected_response", request });
  }
  return error;
}

export const FieldValueSchema = z.object({
  field: z.string(),
  json_path: z.string(),
  shape: z.array(z.number().int().nonnegative()).nullable(),
  values: z.unknown(),
});

const Cells = z.array(z.number().nullable()).nullable();
export const ExperimentViewSchema = z.object({
  experiment_id: z.number().int(),
  experiment_code: z.string(),
  status: z.enum(["running", "completed", "partial_failed", "failed"]),
  rows: z.array(
    z.object({
      row: z.number().int().nonnegative(),
      job_id: z.number().int(),
      job_code: z.string(),
      status: z.enum(["queued", "running", "completed", "failed"]),
      yhat: Cells.optional(),
      fit: Cells.optional(),
      message: z.string().optional(),
      error_code: z.number().int().optional(),
    }),
  ),
});

export const QuotaSchema = z.object({
  quota: z.number(),
  used: z.number(),
  remaining: z.number(),
  unit: z.string().optional(),
  period_start: z.string().optional(),
  period_end: z.string().optional(),
});

/** The parent status from row states (the service's rule, docs/api.md section 2). */
export function experimentStatus(rows: ReadonlyArray<Pick<ExperimentRow, "status">>): ExperimentStatus {
  const done = rows.filter((r) => r.status === "completed").length;
  const failed = rows.filter((r) => r.status === "failed").length;
  if (done + failed < rows.length) return "running";
  return failed === 0 ? "completed" : done === 0 ? "failed" : "partial_failed";
}

export function summarise(
  ids: { experiment_id: number | null; experiment_code: string | null },
  rows: ExperimentRow[],
  status: ExperimentStatus = experimentStatus(rows),
): ExperimentState {
  return {
    experiment_id: ids.experiment_id,
    experiment_code: ids.experiment_code,
    status,
    n_rows: rows.length,
    n_completed: rows.filter((r) => r.status === "completed").length,
    n_failed: rows.filter((r) => r.status === "failed").length,
    rows,
  };
}

/** A receipt (or `{job_id, job_code}`) a caller passed in, checked before it goes into a URL. */
export function jobRef(receipt: unknown): JobRef {
  const r = receipt as Partial<JobReceipt> | null;
  if (
    typeof r !== "object" ||
    r === null ||
    typeof r.job_id !== "number" ||
    !Number.isSafeInteger(r.job_id) ||
    r.job_id < 0 ||
    typeof r.job_code !== "string" ||
    r.job_code === ""
  ) {
    throw new ValidationError("receipt: expected a job receipt {job_id, job_code} as submit() returns it", {
      field: "receipt",
      expected: "{job_id: integer, job_code: string}",
      local: true,
    });
  }
  return { job_id: r.job_id, job_code: r.job_code };
}

export { isExperimentReceipt } from "./receipts.js";
