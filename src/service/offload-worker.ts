/**
 * The offload worker thread (offload.ts): parses and checks large request bodies away from the
 * HTTP thread, so that a 10 MiB POST does not stall every other request
 * (issue 11, item 7). It does exactly what the routes do inline for small bodies:
 *
 * - `v3-post`: lenient JSON (400), depth (422), a JSON object (422), then the request parser and
 *   the checks before queueing (422, limits.ts). The access id travels back separately, so that the
 *   route checks it (403) before reporting an input error, as for a small body.
 * - `v2-result`: not a request but an answer: a completed job's stored results made into its v2
 *   body (v2-body.ts), so that a large one is parsed and encoded here, not on the HTTP thread.
 *
 * Errors come back as plain `{status, code, message, init}` (ServiceError's parts).
 */
import { parentPort, workerData } from "node:worker_threads";
import type { Analysis } from "../api/options.js";
import { parseRequest, type ParsedRequest } from "../api/request.js";
import { checkJsonShape, parseJsonLenient, ServiceError } from "./http.js";
import { inputError } from "./input-error.js";
import type { ServiceLimits } from "./limits.js";
import { checkBeforeQueue } from "./preflight.js";
import { v2ResultText, type V2ResultMeta } from "./v2-body.js";

/** An uploaded X as the upload store keeps it (row-major, NaN = missing, shared memory). */
export interface SharedMatrix {
  rows: number;
  cols: number;
  X: Float64Array;
}

export type OffloadTask =
  | { kind: "v3-post"; id: number; analysis: Analysis; body: Uint8Array; limits: ServiceLimits }
  /** v2, first step: the body's top level without y, theta and an inline X (for the route's own steps). */
  | { kind: "v2-light"; id: number; body: Uint8Array }
  /** v2, second step: the request from the body, its top level as the route changed it, and an upload. */
  | { kind: "v2-post"; id: number; analysis: Analysis; body: Uint8Array; top: Record<string, unknown>; upload?: SharedMatrix }
  /** Not a request: a completed job's stored results (UTF-8 JSON) made into its encoded v2 body (v2-body.ts). */
  | { kind: "v2-result"; id: number; body: Uint8Array; meta: V2ResultMeta };

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
  | { id: number; ok: true; kind: "v3-post" | "v2-post"; accessId: unknown; request: PackedRequest }
  | { id: number; ok: true; kind: "v2-light"; top: Record<string, unknown> }
  | { id: number; ok: true; kind: "v2-result"; text: string }
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
    throw new Refusal(
      "body",
      new ServiceError(400, "malformed_json", "the request body is empty; expected a JSON object", { field: "body", expected: "a JSON object" }),
    );
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
    checkJsonShape(value, depthStatus);
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
      new ServiceError(422, "invalid_input", "body: expected a JSON object with access_id, y, X, theta and options", {
        field: "body",
        expected: "a JSON object",
      }),
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
  return packReply(task.id, "v3-post", accessId, request);
}

function packReply(id: number, kind: "v3-post" | "v2-post", accessId: unknown, request: ParsedRequest): { reply: OffloadReply; transfer: ArrayBuffer[] } {
  const K = request.data.cols;
  const thetas = new Float64Array(request.thetas.length * K);
  request.thetas.forEach((t, r) => thetas.set(t, r * K));
  const y = own(request.data.y);
  const X = own(request.data.X);
  const packed: PackedRequest = { ...request, data: { ...request.data, y, X }, thetas, m: request.thetas.length };
  return { reply: { id, ok: true, kind, accessId, request: packed }, transfer: [thetas.buffer, y.buffer, X.buffer] as ArrayBuffer[] };
}

const V2_NOT_OBJECT = "body: expected a JSON object with access_id, y, X, theta and the options at the top level";

/** The top level of a v2 body without y, theta and an inline X (a string X, an upload's name, stays). */
export function topLevel(body: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) if (k !== "y" && k !== "theta" && !(k === "X" && typeof v !== "string")) out[k] = v;
  return out;
}

function v2Record(body: Uint8Array): Record<string, unknown> {
  const value = parseBody(body, 400);
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new Refusal("body", new ServiceError(400, "invalid_input", V2_NOT_OBJECT, { field: "body", expected: "a JSON object" }));
  }
  return value as Record<string, unknown>;
}

function v2Light(task: Extract<OffloadTask, { kind: "v2-light" }>): { reply: OffloadReply; transfer: ArrayBuffer[] } {
  return { reply: { id: task.id, ok: true, kind: "v2-light", top: topLevel(v2Record(task.body)) }, transfer: [] };
}

function v2Post(task: Extract<OffloadTask, { kind: "v2-post" }>): { reply: OffloadReply; transfer: ArrayBuffer[] } {
  const parsed = v2Record(task.body);
  const body: Record<string, unknown> = { ...task.top };
  for (const key of ["y", "theta", "X"]) if (!(key in task.top) && key in parsed) body[key] = parsed[key];
  const upload = task.upload;
  let request: ParsedRequest;
  try {
    request = parseRequest(task.analysis, body, "v2", {
      requireAccessId: true,
      resolveXReference: upload ? () => matrixRows(upload) : undefined,
    }) as ParsedRequest;
  } catch (error) {
    throw new Refusal("request", inputError(error), body.access_id);
  }
  return packReply(task.id, "v2-post", body.access_id, request);
}

/** A shared matrix as the nested rows a POST body would carry (null = missing). */
export function matrixRows(m: SharedMatrix): Array<Array<number | null>> {
  const out: Array<Array<number | null>> = new Array(m.rows);
  for (let i = 0; i < m.rows; i++) {
    const row: Array<number | null> = new Array(m.cols);
    for (let j = 0; j < m.cols; j++) {
      const v = m.X[i * m.cols + j];
      row[j] = Number.isNaN(v) ? null : v;
    }
    out[i] = row;
  }
  return out;
}

/** A typed array that owns its whole buffer (so the buffer can be transferred). */
function own(a: Float64Array): Float64Array {
  return a.byteOffset === 0 && a.buffer.byteLength === a.byteLength && !(a.buffer instanceof SharedArrayBuffer) ? a : a.slice();
}

function v2Result(task: Extract<OffloadTask, { kind: "v2-result" }>): { reply: OffloadReply; transfer: ArrayBuffer[] } {
  let text: string;
  try {
    text = v2ResultText(Buffer.from(task.body.buffer, task.body.byteOffset, task.body.byteLength).toString("utf8"), task.meta);
  } catch {
    // The stored results could not be read back: the service's fault, not the caller's.
    throw new Refusal("body", new ServiceError(500, "internal", "the job's stored results could not be read", { errorCode: 1 }));
  }
  return { reply: { id: task.id, ok: true, kind: "v2-result", text }, transfer: [] };
}

export function runOffloadTask(task: OffloadTask): { reply: OffloadReply; transfer: ArrayBuffer[] } {
  try {
    switch (task.kind) {
      case "v3-post":
        return v3Post(task);
      case "v2-light":
        return v2Light(task);
      case "v2-post":
        return v2Post(task);
      case "v2-result":
        return v2Result(task);
    }
  } catch (error) {
    const refusal =
      error instanceof Refusal
        ? error
        : new Refusal("body", new ServiceError(400, "bad_request", "the request body could not be read; check it against the API reference (docs/api.md)"));
    return {
      reply: {
        id: task.id,
        ok: false,
        stage: refusal.stage,
        ...(refusal.accessId !== undefined ? { accessId: refusal.accessId } : {}),
        error: serialize(refusal.error),
      },
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
