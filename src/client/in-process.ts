/**
 * The in-process wire: version 3 spoken to a service that runs in this very process (the notebook's
 * embedded service), without sockets, JSON bodies or the result's schema check, and with no
 * polling delay: a read of an unfinished job waits in the service until the job ends (at most
 * `HOLD_MS`, so that a progress line still hears about a long job).
 *
 * What a caller sees is what the HTTP wire gives, reply by reply:
 * - the request is checked by the same code first (`checkRequest`: the same local errors);
 * - the service answers each call with the status and the JSON body of its HTTP route
 *   (`InProcessEndpoint`, implemented by the service's lane), and a refusal becomes the same
 *   error through `errorFromResponse`, with the same request label (`POST http://…/v3/grid`);
 * - receipts, experiment views and quota go through the same shape checks as over HTTP; a
 *   result is the stored JSON as parsed, read by `fromOwnV3Results` (the same Result as
 *   `fromV3Results` on the text the route sends: the service wrote it in this process). The
 *   service answers the parsed value itself when its worker sent the result decoded beside the
 *   text (service/encode.ts `encodeResult`), so this process does not parse what it wrote.
 *
 * A request whose values would not survive JSON unchanged (-0, a non-finite number, undefined
 * in the options, a class instance) or whose body could pass the service's body limit goes over
 * HTTP, as does everything this wire does not serve (a field of a result, a result larger than
 * the client reads): the service also listens on loopback.
 */
import { fromOwnV3Columns, fromOwnV3Results } from "../api/result.js";
import { errorFromResponse } from "./error-map.js";
import { AbortError } from "./errors.js";
import { redactPath, type Transport } from "./http.js";
import { checkRequest, encodeRequest, type CheckedRequest, type PreparedRequest } from "./prepare.js";
import { jsonSizeBounds } from "./size.js";
import type {
  Analysis,
  CallOptions,
  ExperimentReceipt,
  ExperimentState,
  FieldValue,
  InProcessEndpoint,
  InProcessReply,
  JobSnapshot,
  PredictionRequest,
  QuotaStatus,
  Receipt,
} from "./types.js";
import { V3Wire } from "./v3.js";
import type { JobRef, Wire } from "./wire.js";

/** The longest a read of an unfinished job waits in the service before it answers (ms). */
export const HOLD_MS = 100;

/** Options of a read that may wait in the service (`wait`'s polls). */
export interface HoldOptions extends CallOptions {
  holdMs?: number;
  /** The caller holds results compactly (`readsColumns`): a result may come with its long columns held. */
  columns?: boolean;
}

export class InProcessWire implements Wire {
  readonly #http: Transport;
  readonly #endpoint: InProcessEndpoint;
  readonly #v3: V3Wire;
  readonly #maxResponseBytes: number;
  /** The POST labels of errors, by analysis (the same text every call). */
  readonly #postLabels: Partial<Record<Analysis, string>> = {};

  constructor(http: Transport, endpoint: InProcessEndpoint, maxResponseBytes: number) {
    this.#http = http;
    this.#endpoint = endpoint;
    this.#v3 = new V3Wire(http);
    this.#maxResponseBytes = maxResponseBytes;
  }

  /** The bodies are already encoded: over HTTP. */
  submit(prepared: PreparedRequest, call: CallOptions): Promise<Receipt> {
    return this.#v3.submit(prepared, call);
  }

  /**
   * Checks the request as `prepareRequest` does, then hands it to the service in process when
   * JSON would carry it unchanged, else encodes it and POSTs it. Answers the receipt and the
   * notes of the local parse.
   */
  async submitRequest(
    analysis: Analysis,
    request: PredictionRequest<object>,
    accessId: string | undefined,
    call: CallOptions,
  ): Promise<{ receipt: Receipt; warnings: string[] }> {
    const checked = checkRequest(analysis, request, { version: "v3", accessId, shared: true });
    const warnings = checked.parsed.warnings;
    if (!this.#carries(checked)) return { receipt: await this.#v3.submit(encodeRequest(checked, "v3"), call), warnings };
    const label = (this.#postLabels[analysis] ??= this.#label("POST", `/${analysis}`));
    if (call.signal?.aborted) throw new AbortError(undefined, { request: label, attempts: 0 });
    const reply = await this.#endpoint.submit(checked.parsed);
    const json = this.#accept(reply, label);
    return { receipt: ownJobReceipt(json) ?? this.#v3.receiptOf(json, label), warnings };
  }

  async status(job: JobRef, call: HoldOptions): Promise<JobSnapshot> {
    const path = `/results/${job.job_id}/${encodeURIComponent(job.job_code)}`;
    const label = this.#label("GET", path);
    if (call.signal?.aborted) throw new AbortError(undefined, { request: label, attempts: 0 });
    const hold = Math.max(0, Math.min(call.holdMs ?? 0, call.timeoutMs ?? Infinity));
    const reply = await this.#endpoint.job(job.job_id, job.job_code, hold, call.signal);
    // The service has the result decoded (`parsed`, read when asked, or `columns`).
    const decoded = reply.columns !== undefined || reply.parsed !== undefined;
    // A result that could be larger than the client reads: over HTTP, which refuses it with its own error (or serves it).
    const size = reply.results !== undefined ? reply.results.length : decoded ? reply.resultsBytesAtMost : undefined;
    if (size !== undefined && size + 4096 > this.#maxResponseBytes) return this.#v3.status(job, call);
    const json = this.#accept(reply, label);
    // The text, or (a result ahead of its text) the JSON of its strings and keys: the only parts a scrub changes.
    const text = reply.results ?? (decoded ? reply.scan : undefined);
    if (reply.status !== 200 || text === undefined) return this.#v3.snapshotOf(job, reply.status, json, undefined, label);
    const scrub = this.#http.redactor.mayContain(text);
    // Straight to held columns for a caller that holds results compactly, when nothing is to be scrubbed.
    if (decoded && call.columns === true && reply.columns !== undefined && !scrub) {
      // The envelope with its results, as `{ ...json, results }` has them, by Object.assign (docs/architecture.md).
      return this.#v3.snapshotOf(job, 200, Object.assign({}, json as object, { results: reply.columns() }), fromOwnV3Columns, label);
    }
    // The service's decoded copy of the stored JSON when it has one (the same value): no parse of what this process wrote.
    const parsed: unknown = decoded ? reply.parsed : JSON.parse(text);
    const results = scrub ? this.#http.redactor.value(parsed) : parsed;
    return this.#v3.snapshotOf(job, 200, Object.assign({}, json as object, { results }), fromOwnV3Results, label);
  }

  field(job: JobRef, path: string, call: CallOptions): Promise<FieldValue> {
    return this.#v3.field(job, path, call);
  }

  async experiment(receipt: ExperimentReceipt, call: HoldOptions): Promise<ExperimentState> {
    const path = `/experiments/${receipt.experiment_id}/${encodeURIComponent(receipt.experiment_code ?? "")}`;
    const label = this.#label("GET", path);
    if (call.signal?.aborted) throw new AbortError(undefined, { request: label, attempts: 0 });
    if (receipt.experiment_id === null) return this.#v3.experiment(receipt, call);
    const hold = Math.max(0, Math.min(call.holdMs ?? 0, call.timeoutMs ?? Infinity));
    const reply = await this.#endpoint.experiment(receipt.experiment_id, receipt.experiment_code ?? "", hold, call.signal);
    return this.#v3.experimentOf(this.#accept(reply, label), label);
  }

  async quota(call: CallOptions): Promise<QuotaStatus> {
    const label = this.#label("GET", "/quota");
    if (call.signal?.aborted) throw new AbortError(undefined, { request: label, attempts: 0 });
    return this.#v3.quotaOf(this.#accept(await this.#endpoint.quota(), label), label);
  }

  #label(method: string, path: string): string {
    return `${method} ${redactPath(this.#http.root + path)}`;
  }

  /** A 2xx reply's body (scrubbed as the transport scrubs it); any other reply as the transport's error. */
  #accept(reply: InProcessReply, label: string): unknown {
    const retry = reply.headers?.["retry-after"];
    const retryAfterMs = retry !== undefined && /^\d+$/.test(retry) ? Number(retry) * 1000 : undefined;
    const text = JSON.stringify(reply.body) ?? "";
    const body = this.#http.redactor.mayContain(text) ? this.#http.redactor.value(JSON.parse(text) as unknown) : (JSON.parse(text) as unknown);
    if (reply.status >= 200 && reply.status < 300) return body;
    throw errorFromResponse({ status: reply.status, body, contentType: "application/json", retryAfterMs, request: label, attempts: 1 });
  }

  /** Whether JSON carries the request unchanged and its body stays within the service's limit. */
  #carries(checked: CheckedRequest): boolean {
    const { request } = checked;
    if (checked.xUpperBytes === undefined || !Array.isArray(request.y)) return false;
    // X was read once by checkRequest (its size bounds say whether JSON writes it back unchanged).
    if (!checked.xExact || !exactRow(request.y)) return false;
    const theta = request.theta;
    let thetaBytes = 0;
    if (theta !== undefined) {
      const rows = (Array.isArray(theta[0]) ? theta : [theta]) as unknown[][];
      if (!exactMatrix(rows)) return false;
      thetaBytes = jsonSizeBounds(rows)?.upper ?? Infinity;
    }
    let optionBytes = 0;
    if (request.options !== undefined) {
      if (!exactJson(request.options, 0)) return false;
      optionBytes = Buffer.byteLength(JSON.stringify(request.options));
    }
    const accessBytes = Buffer.byteLength(JSON.stringify(checked.accessId));
    const max = this.#endpoint.maxBodyBytes;
    // Bounds of y's and X's shapes alone (26 bytes a number at most) first; their values give closer ones.
    const rest = thetaBytes + optionBytes + accessBytes + 64;
    if (checked.xUpperLoose && checked.xUpperBytes + 3 + 27 * request.y.length + rest <= max) return true;
    const xBytes = checked.xUpperLoose ? (jsonSizeBounds(request.X)?.upper ?? Infinity) : checked.xUpperBytes;
    return xBytes + (jsonSizeBounds([request.y])?.upper ?? Infinity) + rest <= max;
  }
}

/**
 * A single job's receipt from the body the service built in this process (`receiptBody`): the
 * fields `receiptOf` keeps, without its schema check (0.7 ms of a warm N=1,000 K=10 call). An
 * experiment's receipt, or anything unexpected, goes through `receiptOf`.
 */
function ownJobReceipt(json: unknown): Receipt | undefined {
  const r = json as { experiment_id?: unknown; job_id?: unknown; job_code?: unknown; warnings?: unknown; theta_source?: unknown };
  if (r.experiment_id !== undefined || !Number.isSafeInteger(r.job_id) || typeof r.job_code !== "string") return undefined;
  const warnings = r.warnings;
  if (warnings !== undefined && !(Array.isArray(warnings) && warnings.every((w) => typeof w === "string"))) return undefined;
  return {
    job_id: r.job_id as number,
    job_code: r.job_code,
    ...(warnings !== undefined && warnings.length > 0 ? { warnings: warnings as string[] } : {}),
    ...(typeof r.theta_source === "string" && r.theta_source !== "" ? { theta_source: r.theta_source } : {}),
  };
}

/** A number JSON writes back as itself (finite, not -0). */
function exactNumber(v: number): boolean {
  return Number.isFinite(v) && !(v === 0 && 1 / v < 0);
}

function exactRow(row: unknown[]): boolean {
  for (let j = 0; j < row.length; j++) {
    const v = row[j];
    // Inline (one call per value was 0.7 ms of a warm N=1,000 K=10 call): v - v is NaN for ±Infinity and NaN.
    if (typeof v === "number" ? v - v !== 0 || (v === 0 && 1 / v < 0) : v !== null) return false;
  }
  return true;
}

function exactMatrix(rows: unknown[][]): boolean {
  for (const row of rows) if (!Array.isArray(row) || !exactRow(row)) return false;
  return true;
}

/** Whether JSON.parse(JSON.stringify(value)) is a value equal to `value` (plain data, no holes, no undefined). */
function exactJson(value: unknown, depth: number): boolean {
  if (value === null || typeof value === "string" || typeof value === "boolean") return true;
  if (typeof value === "number") return exactNumber(value);
  if (typeof value !== "object" || depth > 32) return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!(i in value) || !exactJson(value[i], depth + 1)) return false;
    return true;
  }
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return false;
  if (Object.getOwnPropertySymbols(value).length > 0) return false;
  for (const key of Object.keys(value)) if (!exactJson((value as Record<string, unknown>)[key], depth + 1)) return false;
  return true;
}
