/**
 * Version 2 of the prediction API (docs/api.md section 3), served
 * under `/v2/prediction-engine`, so that the official Python client and raw-HTTP v2 callers work
 * after changing only the host. Every answer is JSON.
 *
 * | route | answers |
 * | --- | --- |
 * | POST /psr, /maxfit, /grid, /grid-singularity (also /grid_singularity), each also with /binary | 200 `{job_id, job_code, ignored_options?, warnings?}`; 400 invalid input (naming the field), 403 auth, 413 size, 429 quota |
 * | GET /results, receipt `{job_id, job_code}` as the JSON body (or the query string) | always 200: running `{job_id, job_code, status_code: 1\|10, error_code: 0, statusMsg: "PROCESSING"}`; completed: the flat result (section 5.1); failed `{job_id, job_code, status_code, error_code: 1..6, error, message}`; unknown `{status_code: 0, error_code: 1, message: "unknown job"}` |
 * | GET /payload/upload/url/X, body `{file_name}` | 200 `{url, file_name, method: "PUT", expires_at}`: an absolute URL on this service with a signed, expiring token |
 * | PUT /payload/upload/X/{file_name}?token=... | 200 `{file_name, rows, cols, bytes, outcome, expires_at}` |
 * | GET /quota, /quota/used, /quota/remaining, /quota/summary | section 2.4 bodies (free) |
 * | legacy: GET /v2/results | as GET /results |
 * | legacy: any /v2/engine/... | 410 |
 *
 * Behaviour (docs/api.md section 3):
 * - POST: x-api-key (403; a missing key is 403 too, the gateway's answer) -> body within 10 MiB
 *   (413) -> JSON (400; Python's NaN token is read as null, +-Infinity refused by validation) -> access_id (403)
 *   -> the whole request, options at the top level, v2 and v3 names (400) -> quota (429) -> job.
 *   One unit per accepted POST; refused POSTs are free. Unknown keys are ignored and listed in
 *   `ignored_options` (section 4.2), other notes in `warnings`.
 * - A PSR with no threshold at all (null or absent, no `threshold_range`) uses
 *   [0, 0.2, 0.4, 0.6, 0.8] (G11; v3 keeps the engine default [0.5]).
 * - `/binary` forces `prediction_scale: "logistic"` whatever `_output_scale` says (a note says so
 *   when it said otherwise), and y must then be 0/1 (400 at POST, naming the value).
 * - `/grid-singularity` is the Grid reported through its single highest-adjusted-fit cell
 *   (docs/api.md section 3; singularity.ts); its flat result adds `attribute_combi` (1 x K, the cell's
 *   attributes).
 * - A body of 256 KiB or more, or one naming a large upload, is read and checked in a worker
 *   thread (offload.ts), so that it does not stall other requests.
 * - `X` may name an upload (`"<crc64 hex>.json"`). An upload that is not there (never PUT,
 *   expired, another API key's, forgotten by a restart) gives a receipt and a job failed with
 *   status_code 1 and error_code 5, as the vendor's deferred loading did (section 2.3); that POST
 *   costs its unit like any accepted POST. An upload that is there is checked like an inline X.
 * - GET /results long-polls: a queued or running job's request is held until the job ends or
 *   `v2LongPollMs` (default 240 s) passes; at most V2_MAX_HELD_READS per organisation are held. Reads are never throttled (no 429) and cost nothing.
 *   A malformed receipt (not JSON, job_id not an integer, job_code not a string) is a 400.
 * - A job is readable through v2 and v3 alike (one job store, G20): the flat result is derived
 *   from the same stored `results` (so the same rounded numbers), with `experiment_id` for the rows
 *   of a v3 experiment, and `most_eval` from the censor operator the job ran with.
 */
import type { IncomingMessage } from "node:http";
import type { Analysis } from "../api/options.js";
import { describe, V2_PSR_DEFAULT_THRESHOLDS } from "../api/options.js";
import type { ParsedRequest } from "../api/request.js";
import { LambdaError, LambdaStatus, v2DateTime, v2QuotaBody, v2Running, v2UnknownJob, type V2QuotaType } from "../api/v2-status.js";
import type { PredictionService } from "./core.js";
import type { Org } from "./credentials.js";
import { checkJsonShape, parseJsonLenient, readBody, reserveBody, sendJson, ServiceError } from "./http.js";
import { refusalCode } from "./refusals.js";
import type { Job, JobVariant } from "./store/records.js";
import { checkBeforeQueue } from "./preflight.js";
import { publicFailure } from "./reasons.js";
import type { Method, Route, RouteRequest, RouteTable } from "./router.js";
import { OFFLOAD_BYTES, parseV2Body, v2ResultBody, v2TopLevel } from "./offload.js";
import { streamMatrix } from "./matrix-stream.js";
import type { SharedMatrix } from "./offload-worker.js";
import { UPLOAD_NAME, UploadStore, type PutOutcome, type UploadMeta, type Uploads } from "./uploads.js";
import { checkBinaryOutcome, receiptNotes, v2Body, v2FailedBody } from "./v2-rules.js";

import { inputError } from "./v3.js";

/** Uploads one service receives at once, at most (each holds about 1 MiB: matrix-stream.ts); more are a 503. */
export const MAX_UPLOADS_AT_ONCE = 32;

export const V2_PREFIXES = ["/v2/prediction-engine"];
/** The v2 root of client versions before October 2024 (`GET /v2/results`) and the removed `/v2/engine/*`. */
export const V2_LEGACY_PREFIXES = ["/v2"];

/** Thresholds of a v2 PSR that names none (docs/api.md section 3); defined in src/api, where clients resolve requests too. */
export { V2_PSR_DEFAULT_THRESHOLDS };

/** Largest body of a GET /results or upload-URL request. */
const SMALL_BODY_BYTES = 64 * 1024;
/**
 * Long-polled reads one organisation may have held open at once; a read beyond them answers at
 * once (the running body, as after the window), so a long window cannot pile up sockets. The
 * official client holds at most one per worker process (10).
 */
export const V2_MAX_HELD_READS = 64;
/** The local plan does not renew: its period has no end. */
const NO_PERIOD_END = new Date(Date.UTC(9999, 11, 31, 23, 59, 59));

interface Endpoint {
  path: string;
  analysis: Analysis;
  variant?: JobVariant;
  binary: boolean;
}

const BASES: Array<{ path: string; analysis: Analysis; variant?: JobVariant }> = [
  { path: "/psr", analysis: "psr" },
  { path: "/maxfit", analysis: "maxfit" },
  { path: "/grid", analysis: "grid" },
  { path: "/grid-singularity", analysis: "grid", variant: "grid_singularity" },
  // legacy spelling (section 2.5)
  { path: "/grid_singularity", analysis: "grid", variant: "grid_singularity" },
];

export const V2_ENDPOINTS: Endpoint[] = BASES.flatMap((b) => [
  { ...b, binary: false },
  { ...b, path: `${b.path}/binary`, binary: true },
]);

const QUOTA_PATHS: Array<{ path: string; type: V2QuotaType }> = [
  { path: "/quota", type: "quota" },
  { path: "/quota/used", type: "used" },
  { path: "/quota/remaining", type: "remaining" },
  { path: "/quota/summary", type: "summary" },
];

/**
 * What v2 holds for one service, shared by its route tables: the upload store, the uploads being
 * received, and the long-polled reads held per organisation.
 */
interface V2State {
  uploads: Uploads;
  receiving: Slots;
  heldReads: Slots;
  started: Date;
}

/** The v2 route tables of a service: `/v2/prediction-engine`, and the legacy `/v2` ones (which share its held reads). */
export function v2Routes(service: PredictionService): RouteTable[] {
  const c = service.config;
  const settings = { ttlMs: c.uploadTtlMs, urlTtlMs: c.uploadUrlTtlMs, maxStoreBytes: c.maxUploadStoreBytes };
  const state: V2State = {
    // A shared store (PostgreSQL) keeps uploads for every front end; else this process's memory.
    uploads: service.store.uploads?.(settings) ?? new UploadStore(settings),
    receiving: new Slots(MAX_UPLOADS_AT_ONCE),
    heldReads: new Slots(V2_MAX_HELD_READS),
    started: new Date(),
  };
  return [v2Table(service, state), v2LegacyTable(service, state)];
}

function v2Table(service: PredictionService, state: V2State): RouteTable {
  const routes: Route[] = [
    ...V2_ENDPOINTS.map((e): Route => ({ method: "POST", path: e.path, handler: (r) => postAnalysis(service, state.uploads, e, r) })),
    { method: "GET", path: "/results", handler: (r) => getResults(service, state.heldReads, r) },
    { method: "GET", path: "/payload/upload/url/X", handler: (r) => getUploadUrl(service, state.uploads, r) },
    { method: "PUT", path: "/payload/upload/X/:file_name", handler: (r) => putUpload(service, state, r) },
    ...QUOTA_PATHS.map((q): Route => ({ method: "GET", path: q.path, handler: (r) => getQuota(service, state.started, q.type, r) })),
  ];
  return { name: "v2", prefixes: V2_PREFIXES, routes };
}

/** `GET /v2/results` (client history) and a 410 for the removed `/v2/engine/*` (section 2.5). */
function v2LegacyTable(service: PredictionService, state: V2State): RouteTable {
  const methods: Method[] = ["GET", "POST", "PUT", "DELETE"];
  const gone = (): never => {
    throw new ServiceError(
      410,
      "gone",
      "Gone: the /v2/engine endpoints (relevance, similarity, informativeness, fit, adjusted-fit, asymmetry) were removed in November 2024; " +
        "POST /v2/prediction-engine/psr, /maxfit or /grid, and read relevance, similarity, info_x, fit, adjusted_fit and asymmetry from the result",
      { errorCode: LambdaError.POST_JOB },
    );
  };
  const routes: Route[] = [
    { method: "GET", path: "/results", handler: (r) => getResults(service, state.heldReads, r) },
    ...methods.flatMap((method): Route[] => [
      { method, path: "/engine", handler: gone },
      { method, path: "/engine/*rest", handler: gone },
    ]),
  ];
  return { name: "v2-legacy", prefixes: V2_LEGACY_PREFIXES, routes };
}

// ---------------------------------------------------------------------------------------------
// Shared

/** The organisation of the x-api-key; a missing key is a 403 too (the API Gateway's answer a v2 client expects). */
function v2Org(service: PredictionService, req: IncomingMessage): Org {
  try {
    return service.auth.organisation(req.headers);
  } catch (error) {
    if (refusalCode(error) === "unauthorized") {
      throw new ServiceError(403, "forbidden", "Forbidden: invalid or unspecified x-api-key (send the organisation's API key in the x-api-key header)", {
        field: "x-api-key",
        expected: "the organisation's API key",
      });
    }
    throw error;
  }
}

/**
 * Reads a JSON body (Python's NaN token read as null, +-Infinity as numbers that
 * validation refuses: `parseJsonLenient`); undefined when it is empty and `allowEmpty`.
 */
async function readJsonV2(req: IncomingMessage, limit: number, allowEmpty = false): Promise<unknown> {
  const text = (await readBody(req, limit)).toString("utf8");
  if (text.trim() === "") {
    if (allowEmpty) return undefined;
    throw new ServiceError(400, "malformed_json", "the request body is empty; expected a JSON object", { field: "body", expected: "a JSON object" });
  }
  return parseJsonText(text);
}

function parseJsonText(text: string): unknown {
  let value: unknown;
  try {
    value = parseJsonLenient(text);
  } catch (error) {
    throw new ServiceError(400, "malformed_json", `the request body is not valid JSON: ${(error as Error).message}`, {
      field: "body",
      expected: "a JSON object",
    });
  }
  checkJsonShape(value, 400);
  return value;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** A v3 refusal of the request parser (422) as the v2 400 (section 2.1: prefer 400 for what a v2 client sends). */
function v2InputError(error: unknown): ServiceError {
  const e = inputError(error);
  return e.status === 422 ? new ServiceError(400, e.code, e.message, e.init) : e;
}

// ---------------------------------------------------------------------------------------------
// POST

async function postAnalysis(service: PredictionService, uploads: Uploads, endpoint: Endpoint, route: RouteRequest): Promise<void> {
  const org = v2Org(service, route.req);
  // Until the request is parsed (twice, below), its body is held: large bodies in flight are capped (http.ts).
  const release = reserveBody(route.req, service.config.maxBodyBytes, OFFLOAD_BYTES);
  try {
    await postParsed(service, uploads, endpoint, route, org);
  } finally {
    release();
  }
}

async function postParsed(service: PredictionService, uploads: Uploads, endpoint: Endpoint, { req, res }: RouteRequest, org: Org): Promise<void> {
  // The body is parsed twice, in a worker thread when it is large (offload.ts): first its top
  // level (no y, theta or inline X) for the steps below, then the whole request.
  const bytes = await readBody(req, service.config.maxBodyBytes, OFFLOAD_BYTES);
  const raw = await v2TopLevel(bytes);
  service.auth.checkAccessId(org, raw);

  const notes: string[] = [];
  // `/binary` forces the logistic scale; a PSR given no threshold at all sweeps the v2 defaults (G11).
  const body = v2Body(endpoint.analysis, endpoint.binary, raw, notes);

  let upload: SharedMatrix | undefined;
  if (typeof body.X === "string") {
    const name = body.X;
    if (!UPLOAD_NAME.test(name)) {
      throw new ServiceError(
        400,
        "invalid_input",
        `X: expected N rows of K numbers or nulls, or the name of an uploaded X ("<crc64 hex>.json"); got ${describe(name)}`,
        {
          field: "X",
          expected: 'N rows of K numbers or nulls, or "<name>.json" of an upload',
        },
      );
    }
    upload = await uploads.get(org.name, name);
    if (!upload) {
      const hours = service.config.uploadTtlMs / 3600_000;
      const job = await service.submitFailed(
        org,
        endpoint.analysis,
        {
          message:
            `Failed to load X_matrix input: no upload named "${name}" for this API key ` +
            `(uploads are kept ${Number.isInteger(hours) ? hours : hours.toFixed(2)} h after their PUT, and a restart of the service forgets them); ` +
            "upload X again (GET /payload/upload/url/X, then PUT to the URL) and post again",
          error_code: LambdaError.X_INPUT,
          status_code: LambdaStatus.PENDING,
        },
        { variant: endpoint.variant, warnings: notes },
      );
      sendJson(res, 200, { job_id: job.id, job_code: job.code, ...(notes.length > 0 ? { warnings: notes } : {}) });
      return;
    }
  }

  let request: ParsedRequest;
  try {
    request = await parseV2Body(endpoint.analysis, bytes, body, upload);
  } catch (error) {
    throw v2InputError(error);
  }
  if (request.resolved.prediction_scale === "logistic") checkBinaryOutcome(request.data.y, endpoint.binary);
  try {
    checkBeforeQueue(request, service.config.limits);
  } catch (error) {
    throw v2InputError(error);
  }
  request.warnings.push(...notes);

  const submission = await service.submit(org, request, endpoint.variant ? { variant: endpoint.variant } : {});
  const job = submission.jobs[0];
  sendJson(res, 200, { job_id: job.id, job_code: job.code, ...receiptNotes(endpoint.analysis, body, request.notes, notes) });
}

// ---------------------------------------------------------------------------------------------
// GET /results

interface V2Receipt {
  /** undefined: well-formed but no job can have it (negative, beyond the safe integers). */
  id: number | undefined;
  code: string;
}

/** The receipt of a GET /results: the JSON body, or (for callers that cannot send a GET body) the query string. */
function readReceipt(body: unknown, query: URLSearchParams): V2Receipt {
  let source: Record<string, unknown>;
  if (body === undefined) {
    if (!query.has("job_id") && !query.has("job_code")) {
      throw new ServiceError(400, "invalid_input", 'body: expected the receipt {"job_id": ..., "job_code": "..."} as the JSON body of the GET', {
        field: "body",
        expected: "the receipt {job_id, job_code}",
      });
    }
    source = { job_id: query.get("job_id") ?? undefined, job_code: query.get("job_code") ?? undefined };
  } else if (isRecord(body)) {
    source = body;
  } else {
    throw new ServiceError(400, "invalid_input", `body: expected the receipt {"job_id": ..., "job_code": "..."}, got ${describe(body)}`, {
      field: "body",
      expected: "the receipt {job_id, job_code}",
    });
  }
  const { job_id: rawId, job_code: code } = source;
  let id: number | undefined;
  if (typeof rawId === "number" && Number.isInteger(rawId)) id = rawId >= 0 && Number.isSafeInteger(rawId) ? rawId : undefined;
  else if (typeof rawId === "string" && /^\s*\d+\s*$/.test(rawId)) {
    const n = Number(rawId.trim());
    id = Number.isSafeInteger(n) ? n : undefined;
  } else {
    throw new ServiceError(
      400,
      "invalid_input",
      `job_id: expected the integer job_id of the receipt (a number or a string of digits), got ${describe(rawId)}`,
      {
        field: "job_id",
        expected: "an integer",
      },
    );
  }
  if (typeof code !== "string") {
    throw new ServiceError(400, "invalid_input", `job_code: expected the job_code string of the receipt, got ${describe(code)}`, {
      field: "job_code",
      expected: "a string of 16 hex characters",
    });
  }
  return { id, code };
}

async function getResults(service: PredictionService, heldReads: Slots, { req, res, query }: RouteRequest): Promise<void> {
  const org = v2Org(service, req);
  const receipt = readReceipt(await readJsonV2(req, SMALL_BODY_BYTES, true), query);
  const job = receipt.id === undefined ? undefined : await service.findJob(org, receipt.id, receipt.code).catch(goneAsUnknown);
  if (!job) {
    sendJson(res, 200, v2UnknownJob());
    return;
  }
  if ((job.status === "queued" || job.status === "running") && heldReads.take(org.name)) {
    // Long-poll: the official client gives up after three GETs unless they are held (section 2.2).
    const gone = new AbortController();
    const onClose = () => gone.abort();
    res.on("close", onClose);
    try {
      await service.waitForJob(job, service.config.v2LongPollMs, gone.signal);
    } finally {
      res.off("close", onClose);
      heldReads.give(org.name);
    }
    if (gone.signal.aborted) return;
    // Records are snapshots (a database store): read the job again for its state now.
    sendJson(res, 200, await v2JobBody(service, (await service.findJob(org, job.id, job.code).catch(goneAsUnknown)) ?? job));
    return;
  }
  sendJson(res, 200, await v2JobBody(service, job));
}

/** v2 reads a job removed by retention (410) as an unknown one; any other error (a store that is down: 503) stays. */
function goneAsUnknown(error: unknown): undefined {
  if (refusalCode(error) === "gone") return undefined;
  throw error;
}

/** The v2 body of a job in any state (HTTP 200 in every case). */
export async function v2JobBody(service: PredictionService, job: Job): Promise<unknown> {
  const ref = { job_id: job.id, job_code: job.code };
  switch (job.status) {
    case "queued":
      return v2Running(ref, LambdaStatus.PENDING);
    case "running":
      return v2Running(ref, LambdaStatus.PROCESSING);
    case "failed":
      return v2FailedBody(
        ref,
        publicFailure(job.failure ?? { message: "the job failed", error_code: LambdaError.PROCESS_JOB, status_code: LambdaStatus.PROCESSING }).failure,
      );
    case "completed":
      // Encoded JSON (a string goes out as it is); a large result is parsed and encoded off this thread.
      return await v2ResultBody(await service.resultJson(job), {
        job_id: job.id,
        job_code: job.code,
        censor_operator: job.censor_operator,
        ...(job.experiment_id !== undefined ? { experiment_id: job.experiment_id } : {}),
      });
  }
}

// ---------------------------------------------------------------------------------------------
// X upload

/**
 * The absolute root of this service: `publicUrl` when configured (behind a proxy), else the
 * address and port the connection arrived at. Never the request's Host header, which the caller
 * chooses (`Host: evil.example` would send the upload, and its token, elsewhere).
 */
export function publicBase(service: PredictionService, req: IncomingMessage): string {
  const configured = service.config.publicUrl;
  if (configured !== undefined) return configured.replace(/\/+$/, "");
  let address = req.socket.localAddress ?? "127.0.0.1";
  if (address.startsWith("::ffff:") && address.includes(".")) address = address.slice("::ffff:".length);
  return `http://${address.includes(":") ? `[${address}]` : address}:${req.socket.localPort}`;
}

function readFileName(body: unknown, query: URLSearchParams): string {
  const value = isRecord(body) ? body.file_name : body === undefined ? (query.get("file_name") ?? undefined) : undefined;
  if (typeof value !== "string" || !UPLOAD_NAME.test(value)) {
    throw new ServiceError(
      400,
      "invalid_input",
      `file_name: expected "<crc64 hex>.json" (letters, digits, ".", "_" or "-", ending in .json), got ${describe(value)}`,
      {
        field: "file_name",
        expected: '"<crc64 hex>.json"',
      },
    );
  }
  return value;
}

async function getUploadUrl(service: PredictionService, uploads: Uploads, { req, res, query }: RouteRequest): Promise<void> {
  const org = v2Org(service, req);
  const name = readFileName(await readJsonV2(req, SMALL_BODY_BYTES, true), query);
  const { token, expires } = uploads.sign(org.name, name);
  const url = `${publicBase(service, req)}${V2_PREFIXES[0]}/payload/upload/X/${encodeURIComponent(name)}?token=${encodeURIComponent(token)}`;
  sendJson(res, 200, { url, file_name: name, method: "PUT", expires_at: v2DateTime(new Date(expires)) });
}

async function putUpload(service: PredictionService, { uploads, receiving }: V2State, { req, res, params, query }: RouteRequest): Promise<void> {
  const name = params.file_name;
  if (!UPLOAD_NAME.test(name)) {
    throw new ServiceError(400, "invalid_input", `file_name: expected "<crc64 hex>.json", got ${describe(name)}`, { field: "file_name" });
  }
  const org = uploads.verify(query.get("token"), name);
  // The PUT is authorised by its token (G18); a key, when sent, must be the same organisation's.
  if (req.headers["x-api-key"] !== undefined && v2Org(service, req).name !== org) {
    throw new ServiceError(403, "forbidden", "Forbidden: this upload URL was issued to another API key", { field: "x-api-key" });
  }
  // Read as it arrives, each block of values stored before the next is read (matrix-stream.ts):
  // the memory of an upload is a few blocks, whatever its size, and uploads at once are capped.
  if (!receiving.take("")) {
    throw new ServiceError(503, "service_busy", `the service is receiving ${MAX_UPLOADS_AT_ONCE} uploads already; try again in a moment`, {
      headers: { "retry-after": "1", connection: "close" },
    });
  }
  let upload: UploadMeta;
  let outcome: PutOutcome["outcome"];
  try {
    const writer = await uploads.begin(org, name);
    try {
      const shape = await streamMatrix(req, service.config.maxUploadBytes, (block) => writer.write(block));
      ({ upload, outcome } = await writer.commit(shape));
    } catch (error) {
      await writer.abort();
      throw error;
    }
  } finally {
    receiving.give("");
  }
  sendJson(res, 200, {
    file_name: name,
    rows: upload.rows,
    cols: upload.cols,
    bytes: upload.bytes,
    outcome,
    expires_at: v2DateTime(new Date(upload.expires)),
  });
}

// ---------------------------------------------------------------------------------------------
// Quota (section 2.4, G6)

async function getQuota(service: PredictionService, started: Date, type: V2QuotaType, { req, res }: RouteRequest): Promise<void> {
  const org = v2Org(service, req);
  const { quota, used } = await service.quotaStatus(org);
  const since = (await service.firstJobTime(org)) ?? started;
  sendJson(res, 200, v2QuotaBody(type, { quota, used, period_start: since, period_end: NO_PERIOD_END }));
}

// ---------------------------------------------------------------------------------------------
// Bounds

/** A count per key (an organisation) of what is held, at most `max` each: the long-polled reads, the uploads being received. */
class Slots {
  readonly #held = new Map<string, number>();
  constructor(readonly max: number) {}

  /** Takes a slot of `key`; false (and nothing taken) when it holds `max` already. */
  take(key: string): boolean {
    const holding = this.#held.get(key) ?? 0;
    if (holding >= this.max) return false;
    this.#held.set(key, holding + 1);
    return true;
  }

  /** Gives back a slot `take` gave. */
  give(key: string): void {
    const left = (this.#held.get(key) ?? 1) - 1;
    if (left > 0) this.#held.set(key, left);
    else this.#held.delete(key);
  }
}
