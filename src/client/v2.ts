/**
 * Version 2 on the wire (docs/api.md section 3):
 *
 * | call | request | answers read |
 * | --- | --- | --- |
 * | submit | POST /{analysis}, flat body, one per theta row | 200 `{job_id, job_code, ignored_options?}` |
 * | status | GET /results with `{job_id, job_code}` as a JSON body | 200 always: running (no `yhat`, or `yhat: null`), failed (`error_code` 1..6), or the flat result |
 * | field | (none in v2) | the flat result read as above, then the path resolved inside it |
 * | experiment | (none in v2) | every row read as above (group.ts) |
 * | quota | GET /quota/summary | `{quota, used, remaining, period_start, period_end, unit}` |
 *
 * Several theta rows: v2 takes one row per POST, so the client posts one job per row and groups
 * them (`grouped_by: "client"`, no experiment id). It first reads the quota and refuses the whole
 * group (QuotaExceededError, nothing posted) when fewer units remain than rows; if a POST still
 * fails part-way, the error carries the rows already posted in `submitted`.
 *
 * Results are normalised by `fromV2Result` into the same `Result` type as v3.
 */
import { z } from "zod";
import { shapeOf } from "../api/json.js";
import { fromV2Result } from "../api/result.js";
import { ReceiptSchema } from "../api/schemas.js";
import { lambdaErrorMessage } from "../api/v2-status.js";
import { JobFailedError, JobPendingError, NotFoundError, QuotaExceededError, RbpError } from "./errors.js";
import { groupState } from "./group.js";
import type { Transport } from "./http.js";
import type { PreparedRequest } from "./prepare.js";
import type { CallOptions, ExperimentJob, ExperimentReceipt, ExperimentRow, ExperimentState, FieldValue, JobSnapshot, QuotaStatus, Receipt } from "./types.js";
import { expectShape, QuotaSchema, resultProblem, type JobRef, type Wire } from "./wire.js";

const V2ReceiptExtras = z.object({ ignored_options: z.array(z.string()).optional() }).passthrough();
const V2BodySchema = z
  .object({
    status_code: z.number().int().optional(),
    error_code: z.number().int().nullable().optional(),
    message: z.string().optional(),
    job_id: z.union([z.number(), z.string()]).optional(),
  })
  .passthrough();

export class V2Wire implements Wire {
  constructor(private readonly http: Transport) {}

  async submit(prepared: PreparedRequest, call: CallOptions): Promise<Receipt> {
    const label = `POST ${this.http.root}/${prepared.analysis}`;
    if (prepared.rows > 1) {
      const q = await this.quota(call);
      if (q.remaining < prepared.rows) {
        throw new QuotaExceededError(
          `Limit Exceeded: ${prepared.rows} theta rows need ${prepared.rows} units (one v2 job each) and the plan has ${q.remaining} left (quota ${q.quota}, used ${q.used}); nothing was posted`,
          { code: "quota_exceeded", remaining: q.remaining, required: prepared.rows, quota: q.quota, request: label },
        );
      }
    }
    const jobs: ExperimentJob[] = [];
    const warnings = [...prepared.warnings];
    for (let row = 0; row < prepared.bodies.length; row++) {
      let json: unknown;
      try {
        json = (
          await this.http.request({ method: "POST", path: `/${prepared.analysis}`, body: prepared.bodies[row], signal: call.signal, timeoutMs: call.timeoutMs })
        ).json;
      } catch (error) {
        if (error instanceof RbpError && jobs.length > 0) error.submitted = [...jobs];
        throw error;
      }
      const r = expectShape(ReceiptSchema, json, "receipt", label);
      jobs.push({ row, job_id: r.job_id, job_code: r.job_code });
      if (row === 0) {
        const extras = V2ReceiptExtras.safeParse(json);
        for (const key of extras.success ? (extras.data.ignored_options ?? []) : []) warnings.push(`ignored option "${key}"`);
        for (const w of r.warnings ?? []) warnings.push(w);
      }
    }
    const notes = warnings.length > 0 ? { warnings: [...new Set(warnings)] } : {};
    if (jobs.length === 1) return { job_id: jobs[0].job_id, job_code: jobs[0].job_code, ...notes };
    const group: ExperimentReceipt = { experiment_id: null, experiment_code: null, n_rows: jobs.length, jobs, grouped_by: "client", ...notes };
    return group;
  }

  /** The v2 body of a job: running, failed or completed (always HTTP 200). */
  async status(job: JobRef, call: CallOptions): Promise<JobSnapshot> {
    const label = `GET ${this.http.root}/results`;
    const res = await this.http.request({
      method: "GET",
      path: "/results",
      body: JSON.stringify({ job_id: job.job_id, job_code: job.job_code }),
      ...call,
    });
    const body = expectShape(V2BodySchema, res.json, "v2 result", label);
    const errorCode = body.error_code ?? 0;
    if (errorCode > 0) {
      const message = this.http.redactor.text(body.message ?? lambdaErrorMessage(errorCode) ?? `error_code ${errorCode}`);
      if (body.job_id === undefined && body.message === "unknown job") {
        throw new NotFoundError(`no job ${job.job_id} with this code for this API key (v2: unknown job) (${label})`, {
          status: 200,
          code: "not_found",
          request: label,
          body: this.http.redactor.value(res.json),
        });
      }
      throw new JobFailedError(`job ${job.job_id} failed: ${message} (${label})`, {
        status: 200,
        code:
          typeof res.json === "object" && res.json !== null && typeof (res.json as { error?: unknown }).error === "string"
            ? (res.json as { error: string }).error
            : "job_failed",
        reason: message,
        jobId: job.job_id,
        errorCode,
        request: label,
        body: this.http.redactor.value(res.json),
      });
    }
    if (body.yhat === undefined || body.yhat === null) {
      return { status: body.status_code === 1 ? "queued" : "running", job_id: job.job_id, job_code: job.job_code, retryAfterMs: res.retryAfterMs };
    }
    try {
      return { status: "completed", job_id: job.job_id, job_code: job.job_code, result: fromV2Result(res.json), raw: res.json };
    } catch (error) {
      throw resultProblem(error, label);
    }
  }

  /** v2 has no field endpoint: the flat result is read whole and the path resolved inside it. */
  async field(job: JobRef, fieldPath: string, call: CallOptions): Promise<FieldValue> {
    const snap = await this.status(job, call);
    if (snap.status !== "completed") {
      throw new JobPendingError(`job ${job.job_id} is still ${snap.status}: its fields are available once it completes (use wait())`, {
        status: 200,
        jobId: job.job_id,
        jobStatus: snap.status,
        code: "pending",
      });
    }
    const segments = fieldPath.split("/").filter((s) => s !== "");
    let value: unknown = snap.raw;
    const keys: Array<string | number> = [];
    for (const segment of segments) {
      if (Array.isArray(value) && /^\d+$/.test(segment) && Number(segment) < value.length) {
        keys.push(Number(segment));
        value = value[Number(segment)];
      } else if (typeof value === "object" && value !== null && !Array.isArray(value) && Object.hasOwn(value, segment)) {
        keys.push(segment);
        value = (value as Record<string, unknown>)[segment];
      } else {
        const available = typeof value === "object" && value !== null && !Array.isArray(value) ? Object.keys(value) : [];
        throw new NotFoundError(
          `no field "${fieldPath}" in the v2 result of job ${job.job_id}${available.length > 0 ? `; available: ${available.join(", ")}` : ""}`,
          { code: "not_found" },
        );
      }
    }
    const jsonPath =
      "$" + keys.map((k) => (typeof k === "number" ? `[${k}]` : /^[A-Za-z_][A-Za-z0-9_]*$/.test(k) ? `.${k}` : `['${k.replace(/'/g, "\\'")}']`)).join("");
    return { field: segments.join("/"), json_path: jsonPath, shape: shapeOf(value), values: value };
  }

  experiment(receipt: ExperimentReceipt, call: CallOptions, known?: Map<number, ExperimentRow>): Promise<ExperimentState> {
    return groupState((job, c) => this.status(job, c), receipt, call, known);
  }

  async quota(call: CallOptions): Promise<QuotaStatus> {
    const res = await this.http.request({ method: "GET", path: "/quota/summary", ...call });
    return expectShape(QuotaSchema, res.json, "quota", `GET ${this.http.root}/quota/summary`);
  }
}
