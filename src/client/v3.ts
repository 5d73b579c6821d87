/**
 * Version 3 on the wire (docs/api.md section 2):
 *
 * | call | request | answers read |
 * | --- | --- | --- |
 * | submit | POST /{analysis} | 200 receipt, or experiment receipt for several theta rows |
 * | status | GET /results/{id}/{code} | 202 queued/running (Retry-After), 200 envelope, 409 failed |
 * | field | GET /jobs/{id}/{code}/{path} | 200 {field, json_path, shape, values}, 202, 409, 404, 413 |
 * | experiment | GET /experiments/{id}/{code} | 202 or 200 with the rows |
 * | quota | GET /quota | {quota, used, remaining, unit} |
 */
import { z } from "zod";
import { fromV3Results } from "../api/result.js";
import { ExperimentReceiptSchema, ReceiptSchema } from "../api/schemas.js";
import { JobPendingError } from "./errors.js";
import { redactPath, type Transport } from "./http.js";
import type { PreparedRequest } from "./prepare.js";
import type { CallOptions, ExperimentReceipt, ExperimentRow, ExperimentState, FieldValue, JobSnapshot, QuotaStatus, Receipt, Result } from "./types.js";
import { expectShape, ExperimentViewSchema, FieldValueSchema, QuotaSchema, resultProblem, summarise, type JobRef, type Wire } from "./wire.js";

const PendingSchema = z.object({ status: z.enum(["queued", "running"]).optional() }).passthrough();
const EnvelopeSchema = z.object({ status: z.string().optional(), results: z.unknown() }).passthrough();
const ReceiptExtras = z.object({ theta_source: z.string().optional() }).passthrough();

export class V3Wire implements Wire {
  constructor(private readonly http: Transport) {}

  async submit(prepared: PreparedRequest, call: CallOptions): Promise<Receipt> {
    const path = `/${prepared.analysis}`;
    const res = await this.http.request({ method: "POST", path, body: prepared.bodies[0], signal: call.signal, timeoutMs: call.timeoutMs });
    return this.receiptOf(res.json, `POST ${this.http.root}${path}`);
  }

  /** The receipt in a POST's 200 body (checked as any answer is). */
  receiptOf(json: unknown, label: string): Receipt {
    if (typeof json === "object" && json !== null && "experiment_id" in json) {
      const e = expectShape(ExperimentReceiptSchema, json, "experiment receipt", label);
      const receipt: ExperimentReceipt = {
        experiment_id: e.experiment_id,
        experiment_code: e.experiment_code,
        n_rows: e.jobs.length,
        jobs: e.jobs.map((j) => ({ row: j.row, job_id: j.job_id, job_code: j.job_code })),
        grouped_by: "service",
      };
      if (e.warnings && e.warnings.length > 0) receipt.warnings = e.warnings;
      return receipt;
    }
    const r = expectShape(ReceiptSchema, json, "receipt", label);
    const extras = ReceiptExtras.safeParse(json);
    return {
      job_id: r.job_id,
      job_code: r.job_code,
      ...(r.warnings && r.warnings.length > 0 ? { warnings: r.warnings } : {}),
      ...(extras.success && extras.data.theta_source ? { theta_source: extras.data.theta_source } : {}),
    };
  }

  async status(job: JobRef, call: CallOptions): Promise<JobSnapshot> {
    const path = `/results/${job.job_id}/${encodeURIComponent(job.job_code)}`;
    const label = `GET ${redactPath(this.http.root + path)}`;
    const res = await this.http.request({ method: "GET", path, ...call });
    return this.snapshotOf(job, res.status, res.json, undefined, label, res.retryAfterMs);
  }

  /** A job read from a 2xx answer: 202 pending, 200 the envelope with its results (read by `read`, default `fromV3Results`). */
  snapshotOf(job: JobRef, status: number, json: unknown, read: ((results: unknown) => Result) | undefined, label: string, retryAfterMs?: number): JobSnapshot {
    if (status === 202) {
      const pending = expectShape(PendingSchema, json, "running job", label);
      return { status: pending.status ?? "running", job_id: job.job_id, job_code: job.job_code, retryAfterMs };
    }
    const envelope = expectShape(EnvelopeSchema, json, "result envelope", label);
    try {
      return { status: "completed", job_id: job.job_id, job_code: job.job_code, result: (read ?? fromV3Results)(envelope.results), raw: json };
    } catch (error) {
      throw resultProblem(error, label);
    }
  }

  async field(job: JobRef, fieldPath: string, call: CallOptions): Promise<FieldValue> {
    const segments = fieldPath.split("/").filter((s) => s !== "");
    const path = `/jobs/${job.job_id}/${encodeURIComponent(job.job_code)}/${segments.map(encodeURIComponent).join("/")}`;
    const label = `GET ${redactPath(this.http.root + path)}`;
    const res = await this.http.request({ method: "GET", path, ...call });
    if (res.status === 202) {
      const pending = expectShape(PendingSchema, res.json, "running job", label);
      throw new JobPendingError(`job ${job.job_id} is still ${pending.status ?? "running"}: its fields are available once it completes (use wait())`, {
        status: 202,
        request: label,
        jobId: job.job_id,
        jobStatus: pending.status ?? "running",
        code: "pending",
      });
    }
    const value = expectShape(FieldValueSchema, res.json, "field", label);
    return { field: value.field, json_path: value.json_path, shape: value.shape, values: value.values };
  }

  async experiment(receipt: ExperimentReceipt, call: CallOptions): Promise<ExperimentState> {
    const path = `/experiments/${receipt.experiment_id}/${encodeURIComponent(receipt.experiment_code ?? "")}`;
    const label = `GET ${redactPath(this.http.root + path)}`;
    const res = await this.http.request({ method: "GET", path, ...call });
    return this.experimentOf(res.json, label);
  }

  /** An experiment's state from its view (a 200 or 202 body). */
  experimentOf(json: unknown, label: string): ExperimentState {
    const view = expectShape(ExperimentViewSchema, json, "experiment", label);
    const rows: ExperimentRow[] = view.rows.map((r) => ({
      row: r.row,
      job_id: r.job_id,
      job_code: r.job_code,
      status: r.status,
      yhat: r.yhat ?? null,
      fit: r.fit ?? null,
      ...(r.message !== undefined ? { message: r.message } : {}),
      ...(r.error_code !== undefined ? { error_code: r.error_code } : {}),
    }));
    return summarise({ experiment_id: view.experiment_id, experiment_code: view.experiment_code }, rows, view.status);
  }

  async quota(call: CallOptions): Promise<QuotaStatus> {
    const res = await this.http.request({ method: "GET", path: "/quota", ...call });
    return this.quotaOf(res.json, `GET ${this.http.root}/quota`);
  }

  quotaOf(json: unknown, label: string): QuotaStatus {
    return expectShape(QuotaSchema, json, "quota", label);
  }
}
