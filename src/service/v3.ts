/**
 * Version 3 of the prediction API (docs/api.md sections 1 and 2, docs/limits.md),
 * served under `/v3/prediction-engine` and `/v3`:
 *
 * | route | answers |
 * | --- | --- |
 * | POST /grid, /maxfit, /psr | 200 receipt `{job_id, job_code, warnings?, warning_details?, theta_source?}`, or for M > 1 theta rows an experiment receipt `{experiment_id, experiment_code, n_rows, jobs: [{row, job_id, job_code}], warnings?, warning_details?}` |
 * | GET /results/{id}/{code}, /jobs/{id}/{code} | 202 `{job_id, job_code, status: queued\|running, status_code: 1\|10, error_code: 0}` (Retry-After: 1); 200 `{job_id, job_code, status: "completed", results}`; 409 failed |
 * | GET /jobs/{id}/{code}/{field...} | 200 `{field, json_path, shape, values}`; 202 / 409 as above; 404 unknown field; 413 `field_too_large` |
 * | GET /experiments/{id}/{code} | 202 until every row is done, then 200 `{experiment_id, experiment_code, status, n_rows, rows: [...]}` |
 * | GET /quota | `{quota, used, remaining, unit: "prediction_task"}` (free) |
 *
 * POST order: API key (401/403) -> body within the size limit (413) -> JSON (400) -> access_id
 * (403) -> the whole request, values, combinations and limits (422) -> quota (429) -> jobs. Only
 * the last step spends quota. Bodies from 256 KiB on are parsed and checked in a worker thread
 * (offload.ts), so that a large POST does not stall other requests.
 */
import type { IncomingMessage } from "node:http";
import { ANALYSES, type Analysis } from "../api/options.js";
import { parseRequest, type ParsedRequest } from "../api/request.js";
import type { PredictionService, Submission } from "./core.js";
import { byteLength, JsonScanner, locateField, rootMembers, type Member } from "./field-scan.js";
import { displayPath, jsonPath, smallerArrayPaths } from "./fields.js";
import { readBody, reserveBody, sendJson, sendLargeJson, ServiceError } from "./http.js";
import { OFFLOAD_BYTES, parseV3Body } from "./offload.js";
import type { Experiment, Job } from "./store/records.js";
import { inputError } from "./input-error.js";
import { DEFAULT_LIMITS, type ServiceLimits } from "./limits.js";
import { checkBeforeQueue } from "./preflight.js";
import { publicFailure } from "./reasons.js";
import type { Route, RouteRequest, RouteTable } from "./router.js";
import { capWarnings } from "../api/warnings.js";

export const V3_PREFIXES = ["/v3/prediction-engine", "/v3"];

/** LambdaStatus codes (docs/api.md section 3) for a job that is not finished. */
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
  // A large body is parsed and checked in a worker thread (offload.ts), a small one inline.
  const release = reserveBody(req, service.config.maxBodyBytes, OFFLOAD_BYTES);
  let parsed: Awaited<ReturnType<typeof parseV3Body>>;
  try {
    parsed = await parseV3Body(analysis, await readBody(req, service.config.maxBodyBytes, OFFLOAD_BYTES), service.config.limits);
  } finally {
    release();
  }
  if (!parsed.ok && !parsed.hasAccessStage) throw parsed.error;
  service.auth.checkAccessId(org, { access_id: parsed.accessId });
  if (!parsed.ok) throw parsed.error;
  const request = parsed.request;
  const submission = await service.submit(org, request);
  sendJson(res, 200, receiptBody(submission, request.notes));
}

/**
 * The 200 body of a POST: the job's receipt, or the experiment's for several theta rows. Its
 * warnings are the text for people and the same warnings as data ({code, key, reason}; docs/api.md
 * section 2.1), one for one.
 */
export function receiptBody(submission: Submission, notes: ParsedRequest["notes"]): Record<string, unknown> {
  const warnings = submission.warnings.length > 0 ? { warnings: submission.warnings, warning_details: capWarnings(notes) } : {};
  if (submission.experiment) {
    const e = submission.experiment;
    return {
      experiment_id: e.id,
      experiment_code: e.code,
      n_rows: submission.jobs.length,
      jobs: submission.jobs.map((job) => ({ row: job.row, job_id: job.id, job_code: job.code })),
      ...warnings,
    };
  }
  const job = submission.jobs[0];
  return {
    job_id: job.id,
    job_code: job.code,
    ...warnings,
    ...(job.theta_source ? { theta_source: job.theta_source } : {}),
  };
}

/** parseRequest, with every refusal as a 422 naming the field. */
export function parseV3(analysis: Analysis, body: unknown, limits: ServiceLimits = DEFAULT_LIMITS): ParsedRequest {
  try {
    const request = parseRequest(analysis, body, "v3", { requireAccessId: true }) as ParsedRequest;
    checkBeforeQueue(request, limits);
    return request;
  } catch (error) {
    throw inputError(error);
  }
}

export { inputError } from "./input-error.js";

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
  const reply = unfinishedReply(job);
  if (reply === undefined) return false;
  sendJson(res, reply.status, reply.body, reply.headers);
  return true;
}

/** The 202 (queued, running) or 409 (failed) reply of GET /results for a job without a result; undefined when it is completed. */
export function unfinishedReply(job: Job): { status: number; body: Record<string, unknown>; headers: Record<string, string> } | undefined {
  if (job.status === "queued" || job.status === "running") {
    return {
      status: 202,
      body: {
        job_id: job.id,
        job_code: job.code,
        status: job.status,
        status_code: job.status === "queued" ? STATUS_PENDING : STATUS_PROCESSING,
        error_code: 0,
      },
      headers: { "retry-after": "1" },
    };
  }
  if (job.status === "failed") {
    const failure = publicFailure(job.failure ?? { message: "the job failed", error_code: 2, status_code: STATUS_PROCESSING }).failure;
    return {
      status: 409,
      body: {
        job_id: job.id,
        job_code: job.code,
        status: "failed",
        status_code: failure.status_code,
        error_code: failure.error_code,
        message: `the job failed: ${failure.message}`,
        error: "job_failed",
        reason: failure.message,
        ...timesOf(job),
      },
      headers: {},
    };
  }
  return undefined;
}

/** When the job was created, started and finished (ISO 8601), so a caller can see queueing and compute time. */
export function timesOf(job: Job): { created_at: string; started_at?: string; finished_at?: string } {
  return { created_at: job.created_at, started_at: job.started_at, finished_at: job.finished_at };
}

async function getJob(service: PredictionService, request: RouteRequest): Promise<void> {
  const job = await findJob(service, request.req, request.params);
  if (replyUnfinished(request, job)) return;
  const json = await service.resultJson(job);
  const head = JSON.stringify(completedHead(job)).slice(0, -1);
  // A large result is measured and written a slice at a time, not as one 100 MB write.
  await sendLargeJson(request.res, 200, [`${head},"results":`, json, "}"]);
}

/** The members of a completed job's 200 envelope before its `results`. */
export function completedHead(job: Job): Record<string, unknown> {
  return {
    job_id: job.id,
    job_code: job.code,
    status: "completed",
    ...(job.experiment_id !== undefined ? { experiment_id: job.experiment_id, row: job.row } : {}),
    ...timesOf(job),
  };
}

async function getField(service: PredictionService, request: RouteRequest): Promise<void> {
  const job = await findJob(service, request.req, request.params);
  if (replyUnfinished(request, job)) return;
  const field = request.rest.join("/");
  // A store that reads one field itself (PostgreSQL cuts it out in SQL) answers first; otherwise
  // the field is read from the result's JSON text by a scanner that yields to the event loop
  // (field-scan.ts): the whole result is never parsed, so a huge result does not stall others.
  const stored = await service.storedField(job, request.rest);
  const scanner = new JsonScanner(stored !== undefined ? (JSON.stringify(stored.value) ?? "null") : await service.resultJson(job));
  const { path, start, end } =
    stored !== undefined
      ? { path: stored.path, start: 0, end: scanner.text.length }
      : await locateField(scanner, request.rest, await largeResultIndex(service, job.id, scanner));
  const limit = service.config.maxFieldBytes;
  // UTF-8 takes at least one byte per UTF-16 unit: beyond the limit in characters is beyond it in bytes.
  const bytes = end - start > limit ? await byteLength(scanner, start, end) : Buffer.byteLength(scanner.text.slice(start, end));
  const described = await scanner.describe(start);
  const shape = described.kind === "array" ? described.shape : described.kind === "object" ? null : [];
  if (bytes > limit) {
    const shown = displayPath(path);
    const smaller =
      described.kind === "array"
        ? smallerArrayPaths(shown, described.length)
        : described.kind === "object"
          ? described.keys.slice(0, 12).map((k) => `${shown}/${k}`)
          : [];
    throw new ServiceError(
      413,
      "field_too_large",
      `field "${field}" is ${bytes} bytes, above the limit of ${limit} bytes for one field` +
        (smaller.length > 0 ? `; ask for a smaller part, e.g. ${smaller.join(", ")}` : ""),
      { field, extra: { shape, bytes, limit, smaller_fields: smaller } },
    );
  }
  const head = JSON.stringify({ field, json_path: jsonPath(path), shape });
  sendJson(request.res, 200, `${head.slice(0, -1)},"values":${scanner.text.slice(start, end)}}`);
}

/** Top-level members of the last few large results read (a job's result never changes): a field read again is found at once. */
const ROOT_INDEXES = new WeakMap<PredictionService, Map<number, Member[]>>();
const ROOT_INDEX_ENTRIES = 16;
const ROOT_INDEX_MIN_CHARS = 1024 * 1024;

async function largeResultIndex(service: PredictionService, jobId: number, scanner: JsonScanner): Promise<Member[] | undefined> {
  if (scanner.text.length < ROOT_INDEX_MIN_CHARS) return undefined;
  let index = ROOT_INDEXES.get(service);
  if (index === undefined) ROOT_INDEXES.set(service, (index = new Map()));
  let members = index.get(jobId);
  if (members === undefined || members.length === 0 || members[members.length - 1].end > scanner.text.length) {
    members = await rootMembers(scanner);
    index.set(jobId, members);
    for (const key of index.keys()) {
      if (index.size <= ROOT_INDEX_ENTRIES) break;
      index.delete(key);
    }
  } else {
    index.delete(jobId);
    index.set(jobId, members);
  }
  return members;
}

async function getExperiment(service: PredictionService, { req, res, params }: RouteRequest): Promise<void> {
  const org = service.auth.organisation(req.headers);
  const id = parseId(params.experiment_id);
  const experiment = id === undefined ? undefined : await service.findExperiment(org, id, params.experiment_code);
  if (!experiment) throw new ServiceError(404, "not_found", `no experiment ${params.experiment_id} with this code for this API key`);
  const body = await experimentView(service, experiment);
  sendJson(res, body.status === "running" ? 202 : 200, body, body.status === "running" ? { "retry-after": "1" } : {});
}

export async function experimentView(service: PredictionService, experiment: Experiment) {
  const jobs = await service.experimentJobs(experiment);
  const rows = jobs.map((job) => ({
    row: job.row,
    job_id: job.id,
    job_code: job.code,
    status: job.status,
    yhat: job.status === "completed" ? (job.compact?.yhat ?? null) : null,
    fit: job.status === "completed" ? (job.compact?.fit ?? null) : null,
    ...(job.status === "failed" && job.failure ? { message: publicFailure(job.failure).failure.message, error_code: job.failure.error_code } : {}),
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
