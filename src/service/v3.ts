/**
 * Version 3 of the prediction API (service-api.md sections 2 to 8, api-compat.md section 3),
 * served under `/v3/prediction-engine` and `/v3`:
 *
 * | route | answers |
 * | --- | --- |
 * | POST /grid, /maxfit, /psr | 200 receipt `{job_id, job_code, warnings?, theta_source?}`, or for M > 1 theta rows an experiment receipt `{experiment_id, experiment_code, n_rows, jobs: [{row, job_id, job_code}], warnings?}` |
 * | GET /results/{id}/{code}, /jobs/{id}/{code} | 202 `{job_id, job_code, status: queued\|running, status_code: 1\|10, error_code: 0}` (Retry-After: 1); 200 `{job_id, job_code, status: "completed", results}`; 409 failed |
 * | GET /jobs/{id}/{code}/{field...} | 200 `{field, json_path, shape, values}`; 202 / 409 as above; 404 unknown field; 413 `field_too_large` |
 * | GET /experiments/{id}/{code} | 202 until every row is done, then 200 `{experiment_id, experiment_code, status, n_rows, rows: [...]}` |
 * | GET /quota | `{quota, used, remaining, unit: "prediction_task"}` (free) |
 *
 * POST order: API key (401/403) -> body within the size limit (413) -> JSON (400) -> access_id
 * (403) -> the whole request, values and combinations (422) -> quota (429) -> jobs. Only the last
 * step spends quota.
 */
import type { IncomingMessage } from "node:http";
import { ANALYSES, type Analysis } from "../api/options.js";
import { shapeOf } from "../api/json.js";
import { parseRequest, type ParsedRequest } from "../api/request.js";
import { ComputationError, InvalidInputError } from "../engine/errors.js";
import type { PredictionService } from "./core.js";
import { displayPath, jsonPath, smallerPaths } from "./fields.js";
import { readJson, sendJson, ServiceError } from "./http.js";
import type { Experiment, Job } from "./jobs.js";
import { checkBeforeQueue } from "./preflight.js";
import type { Route, RouteRequest, RouteTable } from "./router.js";

export const V3_PREFIXES = ["/v3/prediction-engine", "/v3"];

/** LambdaStatus codes (api-compat.md 2.2) for a job that is not finished. */
const STATUS_PENDING = 1;
const STATUS_PROCESSING = 10;

export function v3Routes(service: PredictionService): RouteTable {
  const routes: Route[] = [
    ...ANALYSES.map((analysis): Route => ({ method: "POST", path: `/${analysis}`, handler: (r) => postAnalysis(service, analysis, r) })),
    { method: "GET", path: "/results/:job_id/:job_code", handler: (r) => getJob(service, r) },
    { method: "GET", path: "/jobs/:job_id/:job_code", handler: (r) => getJob(service, r) },
    { method: "GET", path: "/jobs/:job_id/:job_code/*field", handler: (r) => getField(service, r) },
    { method: "GET", path: "/experiments/:experiment_id/:experiment_code", handler: (r) => getExperiment(service, r) },
    { method: "GET", path: "/quota", handler: (r) => getQuota(service, r) },
  ];
  return { name: "v3", prefixes: V3_PREFIXES, routes };
}

// ---------------------------------------------------------------------------------------------
// POST

async function postAnalysis(service: PredictionService, analysis: Analysis, { req, res }: RouteRequest): Promise<void> {
  const org = service.auth.organisation(req.headers);
  const body = await readJson(req, service.config.maxBodyBytes);
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new ServiceError(422, "invalid_input", "body: expected a JSON object with access_id, y, X, theta and options", {
      field: "body",
      expected: "a JSON object",
    });
  }
  service.auth.checkAccessId(org, body);
  const request = parseV3(analysis, body);
  const submission = await service.submit(org, request);
  const warnings = submission.warnings.length > 0 ? { warnings: submission.warnings } : {};
  if (submission.experiment) {
    const e = submission.experiment;
    sendJson(res, 200, {
      experiment_id: e.id,
      experiment_code: e.code,
      n_rows: submission.jobs.length,
      jobs: submission.jobs.map((job) => ({ row: job.row, job_id: job.id, job_code: job.code })),
      ...warnings,
    });
    return;
  }
  const job = submission.jobs[0];
  sendJson(res, 200, {
    job_id: job.id,
    job_code: job.code,
    ...warnings,
    ...(job.theta_source ? { theta_source: job.theta_source } : {}),
  });
}

/** parseRequest, with every refusal as a 422 naming the field. */
export function parseV3(analysis: Analysis, body: unknown): ParsedRequest {
  try {
    const request = parseRequest(analysis, body, "v3", { requireAccessId: true }) as ParsedRequest;
    checkBeforeQueue(request);
    return request;
  } catch (error) {
    throw inputError(error);
  }
}

/** An error of the request parser as the 422 reply. */
export function inputError(error: unknown): ServiceError {
  if (error instanceof InvalidInputError) {
    return new ServiceError(422, "invalid_input", error.message, { field: error.field, expected: error.expected });
  }
  if (error instanceof ComputationError) {
    return new ServiceError(422, "invalid_input", error.message, error.field !== undefined ? { field: error.field } : {});
  }
  if (error instanceof ServiceError) return error;
  // The parser only looks at the request, so whatever it throws is about the request.
  return new ServiceError(422, "invalid_input", `the request could not be read: ${error instanceof Error ? error.message : String(error)}`);
}

// ---------------------------------------------------------------------------------------------
// GET a job, a field, an experiment

function jobNotFound(id: string): ServiceError {
  return new ServiceError(404, "not_found", `no job ${id} with this code for this API key`);
}

function parseId(text: string | undefined): number | undefined {
  if (text === undefined || !/^\d{1,15}$/.test(text)) return undefined;
  return Number(text);
}

async function findJob(service: PredictionService, req: IncomingMessage, params: Record<string, string>): Promise<Job> {
  const org = service.auth.organisation(req.headers);
  const id = parseId(params.job_id);
  const job = id === undefined ? undefined : await service.findJob(org, id, params.job_code);
  if (!job) throw jobNotFound(params.job_id);
  return job;
}

/** The 202 or 409 reply of a job that has no result; false when it is completed. */
function replyUnfinished({ res }: RouteRequest, job: Job): boolean {
  if (job.status === "queued" || job.status === "running") {
    sendJson(
      res,
      202,
      {
        job_id: job.id,
        job_code: job.code,
        status: job.status,
        status_code: job.status === "queued" ? STATUS_PENDING : STATUS_PROCESSING,
        error_code: 0,
      },
      { "retry-after": "1" },
    );
    return true;
  }
  if (job.status === "failed") {
    const failure = job.failure ?? { message: "the job failed", error_code: 2, status_code: STATUS_PROCESSING };
    sendJson(res, 409, {
      job_id: job.id,
      job_code: job.code,
      status: "failed",
      status_code: failure.status_code,
      error_code: failure.error_code,
      message: `the job failed: ${failure.message}`,
      error: "job_failed",
      reason: failure.message,
      ...timesOf(job),
    });
    return true;
  }
  return false;
}

/** When the job was created, started and finished (ISO 8601), so a caller can see queueing and compute time. */
function timesOf(job: Job): { created_at: string; started_at?: string; finished_at?: string } {
  return { created_at: job.created_at, started_at: job.started_at, finished_at: job.finished_at };
}

async function getJob(service: PredictionService, request: RouteRequest): Promise<void> {
  const job = await findJob(service, request.req, request.params);
  if (replyUnfinished(request, job)) return;
  const json = await service.resultJson(job);
  const experiment = job.experiment_id !== undefined ? `"experiment_id":${job.experiment_id},"row":${job.row},` : "";
  const times = JSON.stringify(timesOf(job)).slice(1, -1);
  sendJson(request.res, 200, `{"job_id":${job.id},"job_code":${JSON.stringify(job.code)},"status":"completed",${experiment}${times},"results":${json}}`);
}

async function getField(service: PredictionService, request: RouteRequest): Promise<void> {
  const job = await findJob(service, request.req, request.params);
  if (replyUnfinished(request, job)) return;
  const field = request.rest.join("/");
  const { path, value } = await service.resultField(job, request.rest);
  const values = JSON.stringify(value) ?? "null";
  const bytes = Buffer.byteLength(values);
  const limit = service.config.maxFieldBytes;
  const shape = shapeOf(value);
  if (bytes > limit) {
    const smaller = smallerPaths(displayPath(path), value);
    throw new ServiceError(
      413,
      "field_too_large",
      `field "${field}" is ${bytes} bytes, above the limit of ${limit} bytes for one field` +
        (smaller.length > 0 ? `; ask for a smaller part, e.g. ${smaller.join(", ")}` : ""),
      { field, extra: { shape, bytes, limit, smaller_fields: smaller } },
    );
  }
  const head = JSON.stringify({ field, json_path: jsonPath(path), shape });
  sendJson(request.res, 200, `${head.slice(0, -1)},"values":${values}}`);
}

async function getExperiment(service: PredictionService, { req, res, params }: RouteRequest): Promise<void> {
  const org = service.auth.organisation(req.headers);
  const id = parseId(params.experiment_id);
  const experiment = id === undefined ? undefined : await service.findExperiment(org, id, params.experiment_code);
  if (!experiment) throw new ServiceError(404, "not_found", `no experiment ${params.experiment_id} with this code for this API key`);
  const body = await experimentView(service, experiment);
  sendJson(res, body.status === "running" ? 202 : 200, body, body.status === "running" ? { "retry-after": "1" } : {});
}

async function experimentView(service: PredictionService, experiment: Experiment) {
  const jobs = await service.experimentJobs(experiment);
  const rows = jobs.map((job) => ({
    row: job.row,
    job_id: job.id,
    job_code: job.code,
    status: job.status,
    yhat: job.status === "completed" ? (job.compact?.yhat ?? null) : null,
    fit: job.status === "completed" ? (job.compact?.fit ?? null) : null,
    ...(job.status === "failed" && job.failure ? { message: job.failure.message, error_code: job.failure.error_code } : {}),
  }));
  const done = rows.filter((r) => r.status === "completed").length;
  const failed = rows.filter((r) => r.status === "failed").length;
  const status = done + failed < rows.length ? "running" : failed === 0 ? "completed" : done === 0 ? "failed" : "partial_failed";
  return {
    experiment_id: experiment.id,
    experiment_code: experiment.code,
    analysis: experiment.analysis,
    status,
    n_rows: rows.length,
    n_completed: done,
    n_failed: failed,
    rows,
  };
}

// ---------------------------------------------------------------------------------------------

async function getQuota(service: PredictionService, { req, res }: RouteRequest): Promise<void> {
  const org = service.auth.organisation(req.headers);
  sendJson(res, 200, { ...(await service.quotaStatus(org)), unit: "prediction_task" });
}
