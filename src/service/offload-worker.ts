/**
 * The offload worker thread (offload.ts): parses and checks large request bodies away from the
 * HTTP thread, so that a 10 MiB POST or a 250 MB upload does not stall every other request
 * (issue 11, item 7). It does exactly what the routes do inline for small bodies:
 *
 * - `v3-post`: lenient JSON (400), depth (422), a JSON object (422), then the request parser and
 *   the checks before queueing (422, limits.ts). The access id travels back separately, so that the
 *   route checks it (403) before reporting an input error, as for a small body.
 * - `upload`: an uploaded X (v2): lenient JSON (400), depth, N rows of K numbers (400), and its
 *   SHA-256; X comes back in a SharedArrayBuffer the upload store keeps.
 *
 * Errors come back as plain `{status, code, message, init}` (ServiceError's parts).
 */
import { createHash } from "node:crypto";
import { parentPort, workerData } from "node:worker_threads";
import type { Analysis } from "../api/options.js";
import { parseRequest, type ParsedRequest } from "../api/request.js";
import { checkJsonDepth, MAX_JSON_DEPTH, parseJsonLenient, ServiceError } from "./http.js";
import { inputError } from "./input-error.js";
import type { ServiceLimits } from "./limits.js";
import { checkBeforeQueue } from "./preflight.js";
import { parseUpload } from "./uploads.js";

export type OffloadTask =
  | { kind: "v3-post"; id: number; analysis: Analysis; body: Uint8Array; limits: ServiceLimits }
  | { kind: "upload"; id: number; body: Uint8Array };

export interface SerializedError {
  status: number;
  code: string;
  message: string;
  init: ServiceError["init"];
}

/** A parsed request with its theta rows in one M x K array (one buffer to move, not M). */
export interface PackedRequest extends Omit<ParsedRequest, "thetas"> {
  thetas: Float64Array;
  m: number;
}

export type OffloadReply =
  | { id: number; ok: true; kind: "v3-post"; accessId: unknown; request: PackedRequest }
  | { id: number; ok: true; kind: "upload"; rows: number; cols: number; X: Float64Array; digest: string; bytes: number }
  | { id: number; ok: false; stage: "body" | "request"; accessId?: unknown; error: SerializedError };

class Refusal {
  constructor(
    readonly stage: "body" | "request",
    readonly error: ServiceError,
    readonly accessId?: unknown,
  ) {}
}

function serialize(error: ServiceError): SerializedError {
  return { status: error.status, code: error.code, message: error.message, init: error.init };
}

function parseBody(body: Uint8Array, depthStatus: number): unknown {
  const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8");
  if (text.trim() === "") {
    throw new Refusal("body", new ServiceError(400, "malformed_json", "the request body is empty; expected a JSON object", { field: "body", expected: "a JSON object" }));
  }
  let value: unknown;
  try {
    value = parseJsonLenient(text);
  } catch (error) {
    throw new Refusal(
      "body",
      new ServiceError(400, "malformed_json", `the request body is not valid JSON: ${(error as Error).message}`, { field: "body", expected: "a JSON object" }),
    );
  }
  try {
    checkJsonDepth(value, MAX_JSON_DEPTH, depthStatus);
  } catch (error) {
    throw new Refusal("body", error as ServiceError);
  }
  return value;
}

function v3Post(task: Extract<OffloadTask, { kind: "v3-post" }>): { reply: OffloadReply; transfer: ArrayBuffer[] } {
  const body = parseBody(task.body, 422);
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new Refusal(
      "body",
      new ServiceError(422, "invalid_input", "body: expected a JSON object with access_id, y, X, theta and options", { field: "body", expected: "a JSON object" }),
    );
  }
  const accessId = (body as Record<string, unknown>).access_id;
  let request: ParsedRequest;
  try {
    request = parseRequest(task.analysis, body, "v3", { requireAccessId: true }) as ParsedRequest;
    checkBeforeQueue(request, task.limits);
  } catch (error) {
    throw new Refusal("request", inputError(error), accessId);
  }
  const K = request.data.cols;
  const thetas = new Float64Array(request.thetas.length * K);
  request.thetas.forEach((t, r) => thetas.set(t, r * K));
  const y = own(request.data.y);
  const X = own(request.data.X);
  const packed: PackedRequest = { ...request, data: { ...request.data, y, X }, thetas, m: request.thetas.length };
  return { reply: { id: task.id, ok: true, kind: "v3-post", accessId, request: packed }, transfer: [thetas.buffer, y.buffer, X.buffer] as ArrayBuffer[] };
}

/** A typed array that owns its whole buffer (so the buffer can be transferred). */
function own(a: Float64Array): Float64Array {
  return a.byteOffset === 0 && a.buffer.byteLength === a.byteLength && !(a.buffer instanceof SharedArrayBuffer) ? a : a.slice();
}

function upload(task: Extract<OffloadTask, { kind: "upload" }>): { reply: OffloadReply; transfer: ArrayBuffer[] } {
  const value = parseBody(task.body, 400);
  let matrix: { rows: number; cols: number; X: Float64Array };
  try {
    matrix = parseUpload(value);
  } catch (error) {
    throw new Refusal("body", error instanceof ServiceError ? error : new ServiceError(400, "invalid_input", "the upload is not X: a list of N rows of K numbers"));
  }
  const X = new Float64Array(new SharedArrayBuffer(matrix.X.byteLength));
  X.set(matrix.X);
  const digest = createHash("sha256").update(task.body).digest("hex");
  return { reply: { id: task.id, ok: true, kind: "upload", rows: matrix.rows, cols: matrix.cols, X, digest, bytes: task.body.byteLength }, transfer: [] };
}

export function runOffloadTask(task: OffloadTask): { reply: OffloadReply; transfer: ArrayBuffer[] } {
  try {
    return task.kind === "v3-post" ? v3Post(task) : upload(task);
  } catch (error) {
    const refusal =
      error instanceof Refusal
        ? error
        : new Refusal("body", new ServiceError(400, "bad_request", "the request body could not be read; check it against the API reference (docs/api.md)"));
    return {
      reply: { id: task.id, ok: false, stage: refusal.stage, ...(refusal.accessId !== undefined ? { accessId: refusal.accessId } : {}), error: serialize(refusal.error) },
      transfer: [],
    };
  }
}

/** Set in `workerData` by offload.ts, so that importing this module elsewhere does nothing. */
export const OFFLOAD_MARK = "rbp-offload-worker";

if (parentPort && (workerData as { mark?: string } | undefined)?.mark === OFFLOAD_MARK) {
  const port = parentPort;
  port.on("message", (task: OffloadTask) => {
    const { reply, transfer } = runOffloadTask(task);
    port.postMessage(reply, transfer);
  });
}
