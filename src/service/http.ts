/**
 * HTTP plumbing of the local service: JSON replies, the one error shape, and request bodies read
 * with a streaming size limit (a body over the limit is refused as soon as the limit is crossed,
 * or at once when Content-Length already says so; nothing beyond the limit is buffered).
 *
 * Error body (docs/api.md section 1, `ErrorBodySchema` in src/api/schemas.ts):
 * `{message, error, status_code, error_code, details?, field?, ...extra}` where `error` is a
 * machine code (`invalid_input`, `unauthorized`, `forbidden`, `not_found`, `quota_exceeded`,
 * `payload_too_large`, `field_too_large`, `malformed_json`, `job_failed`, ...), `status_code` the
 * HTTP status, `error_code` the LambdaError code a v2 client understands (docs/api.md section 3):
 * 4 for input that cannot be used, 1 for a request refused for any other reason.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { toJson } from "../api/json.js";
import type { ErrorBody } from "../api/schemas.js";
import { brand, RbpBaseError } from "../errors/index.js";
import { quoteName } from "../api/options.js";
import { BODY_LIMITS, MiB, type BodyLimits } from "./limits.js";
import { refusalCode, type RefusalCode, type ServiceRefusal } from "./refusals.js";

export { MiB };

export interface ErrorDetail {
  field?: string;
  expected?: string;
  message?: string;
  [key: string]: unknown;
}

export interface ServiceErrorInit {
  /** The one request field at fault (also put in `details`). */
  field?: string;
  /** What was expected there, in words. */
  expected?: string;
  details?: ErrorDetail[];
  /** LambdaError code (docs/api.md section 3); default 4 for 400/413/422, else 1. */
  errorCode?: number;
  /** More keys for the body (e.g. `remaining` on a 429). */
  extra?: Record<string, unknown>;
  headers?: Record<string, string>;
}

/** A request the service refuses; `sendError` turns it into the JSON error reply. */
export class ServiceError extends RbpBaseError {
  static {
    brand(this, "ServiceError");
  }
  override readonly name = "ServiceError";
  readonly status: number;
  readonly init: ServiceErrorInit;

  constructor(status: number, code: string, message: string, init: ServiceErrorInit = {}) {
    super(message, code);
    this.status = status;
    this.init = init;
  }
}

/** The HTTP status of each refusal of the service (refusals.ts). */
const REFUSAL_STATUS: Record<RefusalCode, number> = {
  quota_exceeded: 429,
  insufficient_storage: 507,
  service_busy: 503,
  store_unavailable: 503,
  gone: 410,
  not_found: 404,
  payload_too_large: 413,
  unauthorized: 401,
  forbidden: 403,
};

/**
 * `error` as the HTTP error it is answered with: a ServiceError as it is, a refusal of the service
 * (refusals.ts) at its code's status; undefined for anything else (the caller's 500).
 *
 * @example
 * const reply = httpError(error) ?? new ServiceError(500, "internal_error", "the service failed unexpectedly; see its log");
 */
export function httpError(error: unknown): ServiceError | undefined {
  if (error instanceof ServiceError) return error;
  const code = refusalCode(error);
  if (code === undefined) return undefined;
  const { field, expected, details, extra, retryAfterS } = (error as ServiceRefusal).init;
  return new ServiceError(REFUSAL_STATUS[code], code, (error as ServiceRefusal).message, {
    ...(field !== undefined ? { field } : {}),
    ...(expected !== undefined ? { expected } : {}),
    ...(details !== undefined ? { details } : {}),
    ...(extra !== undefined ? { extra } : {}),
    ...(retryAfterS !== undefined ? { headers: { "retry-after": String(retryAfterS) } } : {}),
  });
}

export type ErrorReply = ErrorBody & { field?: string; [key: string]: unknown };

/** The JSON body of an error reply. */
export function errorBody(error: ServiceError): ErrorReply {
  const { field, expected, extra } = error.init;
  const details = error.init.details ?? (field !== undefined ? [{ field, ...(expected !== undefined ? { expected } : {}) }] : undefined);
  const inputStatus = error.status === 400 || error.status === 413 || error.status === 422;
  return {
    message: error.message,
    error: error.code,
    status_code: error.status,
    error_code: error.init.errorCode ?? (inputStatus ? 4 : 1),
    ...(field !== undefined ? { field } : {}),
    ...(details !== undefined ? { details } : {}),
    ...extra,
  };
}

/** Writes `body` as JSON (NaN and infinities as null). A string is sent as already-encoded JSON. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === "string" ? body : toJson(body);
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": String(Buffer.byteLength(text)),
    "cache-control": "no-store",
    ...headers,
  });
  res.end(text);
}

/** Above this size a JSON reply is measured and written a slice at a time (`sendLargeJson`). */
export const LARGE_REPLY_CHARS = 1024 * 1024;

/**
 * Writes already-encoded JSON given as parts (e.g. a head and a stored result) without holding the
 * event loop: the byte length is counted, and the text written, LARGE_REPLY_CHARS at a time,
 * waiting for the socket to drain; small replies go out at once like `sendJson`.
 *
 * @example
 * await sendLargeJson(res, 200, ['{"job_id":1,"results":', resultJson, "}"]);
 */
export async function sendLargeJson(res: ServerResponse, status: number, parts: string[], headers: Record<string, string> = {}): Promise<void> {
  const chars = parts.reduce((n, p) => n + p.length, 0);
  if (chars <= LARGE_REPLY_CHARS) return sendJson(res, status, parts.join(""), headers);
  let bytes = 0;
  for (const part of parts) {
    for (let from = 0; from < part.length; from += LARGE_REPLY_CHARS) {
      bytes += Buffer.byteLength(part.slice(from, from + LARGE_REPLY_CHARS));
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": String(bytes), "cache-control": "no-store", ...headers });
  for (const part of parts) {
    for (let from = 0; from < part.length; from += LARGE_REPLY_CHARS) {
      if (res.destroyed) return;
      const more = res.write(part.slice(from, from + LARGE_REPLY_CHARS));
      if (!more)
        await new Promise<void>((resolve) => {
          // Whichever comes first; the other listener is removed, so a long reply adds none per slice.
          const done = (): void => {
            res.off("drain", done);
            res.off("close", done);
            resolve();
          };
          res.once("drain", done);
          res.once("close", done);
        });
      else await new Promise((resolve) => setImmediate(resolve));
    }
  }
  res.end();
}

export function sendError(res: ServerResponse, error: ServiceError): void {
  sendJson(res, error.status, errorBody(error), error.init.headers);
}

/** Bytes of large request bodies being read or parsed at once, at most (docs/limits.md "Fixed limits"). */
export const MAX_BODY_BYTES_IN_FLIGHT = 128 * MiB;
const bodiesInFlight = { bytes: 0 };

/**
 * Reserves the memory a large body takes while it is read and parsed: its Content-Length (or
 * `limit` without one), when that is at least `from` bytes; returns the release (call it once
 * the body is parsed). A 503 `service_busy` with Retry-After when the large bodies in flight
 * already hold MAX_BODY_BYTES_IN_FLIGHT: many concurrent 10 MiB POSTs wait their turn at the
 * client, not in the server's memory.
 *
 * @example
 * const release = reserveBody(req, 10 * MiB, 256 * 1024);
 * try { ... await readBody(req, 10 * MiB) ... } finally { release(); }
 */
export function reserveBody(req: IncomingMessage, limit: number, from: number): () => void {
  const declared = req.headers["content-length"];
  const bytes = declared !== undefined && /^\d+$/.test(declared) ? Math.min(Number(declared), limit) : limit;
  if (bytes < from) return () => undefined;
  if (bodiesInFlight.bytes + bytes > MAX_BODY_BYTES_IN_FLIGHT) {
    throw new ServiceError(
      503,
      "service_busy",
      `the service is reading ${Math.round(bodiesInFlight.bytes / MiB)} MiB of large request bodies already; nothing was charged, try again in a moment`,
      { headers: { "retry-after": "1", connection: "close" } },
    );
  }
  bodiesInFlight.bytes += bytes;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    bodiesInFlight.bytes -= bytes;
  };
}

/**
 * Reads the whole request body, refusing it with a 413 ServiceError as soon as it is known to be
 * larger than `limit` bytes. The rest of a refused body is discarded (see `refuseRest`).
 *
 * `shared`: a body of at least `shared` bytes is read into a SharedArrayBuffer, so that a worker
 * thread can parse it without a copy (offload.ts); with a Content-Length the buffer is allocated
 * at once and each chunk copied as it arrives, so no single step copies the whole body.
 */
export function readBody(req: IncomingMessage, limit: number, shared?: number): Promise<Buffer> {
  const tooLarge = (bytes: string) =>
    new ServiceError(413, "payload_too_large", `Payload Too Large: the request body is ${bytes} bytes, above the limit of ${limit} bytes`, {
      extra: { limit },
      headers: { connection: "close" },
    });
  const declared = req.headers["content-length"];
  if (declared !== undefined && Number(declared) > limit) {
    refuseRest(req, limit);
    return Promise.reject(tooLarge(declared));
  }
  const expected = declared !== undefined && /^\d+$/.test(declared) ? Number(declared) : undefined;
  const into = shared !== undefined && expected !== undefined && expected >= shared ? Buffer.from(new SharedArrayBuffer(expected)) : undefined;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      req.off("aborted", onAborted);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        chunks.length = 0;
        refuseRest(req, limit);
        reject(tooLarge(`more than ${limit}`));
        return;
      }
      if (into !== undefined && size <= into.length) chunk.copy(into, size - chunk.length);
      else chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      // node's parser reads exactly Content-Length bytes, so `into` is full here.
      if (into !== undefined) return resolve(size === into.length ? into : into.subarray(0, Math.min(size, into.length)));
      const whole = Buffer.concat(chunks, size);
      if (shared === undefined || size < shared) return resolve(whole);
      const copy = Buffer.from(new SharedArrayBuffer(size));
      whole.copy(copy);
      resolve(copy);
    };
    const onError = (error: Error) => {
      cleanup();
      reject(new ServiceError(400, "bad_request", `the request body could not be read: ${error.message}`));
    };
    const onAborted = () => onError(new Error("the client aborted the request"));
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
    req.on("aborted", onAborted);
  });
}

/**
 * After a refusal: discard what the client still sends (so that it can read the 413 rather than
 * see a reset connection), without keeping any of it, but never more than 4 x `limit` (at least
 * 16 MiB) further bytes or 10 seconds; then close the connection.
 */
export function refuseRest(req: IncomingMessage, limit: number): void {
  const cap = Math.max(4 * limit, 16 * MiB);
  let discarded = 0;
  const stop = () => {
    clearTimeout(timer);
    req.socket.destroy();
  };
  const timer = setTimeout(stop, 10_000);
  timer.unref();
  req.on("data", (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > cap) stop();
  });
  req.on("end", () => clearTimeout(timer));
  req.on("close", () => clearTimeout(timer));
  req.resume();
}

/**
 * Refuses a parsed body whose shape is beyond BODY_LIMITS (limits.ts), before anything recursive
 * (validation, error messages) runs on it or anything is charged, with a 422 (`status`; v2 400)
 * naming the field where it happens (at most three steps of the path, a name quoted to 64
 * characters) and the limit:
 * - nested deeper than `maxJsonDepth` levels;
 * - a key (an option key, a field name: any name the client sends) longer than `maxNameChars`;
 * - an object with more than `maxObjectKeys` keys.
 * Iterative.
 *
 * @example
 * checkJsonShape(JSON.parse('{"options": {"x": [[[1]]]}}'), 422, { ...BODY_LIMITS, maxJsonDepth: 3 }); // throws 422, field "options.x[0]"
 */
export function checkJsonShape(value: unknown, status = 422, limits: BodyLimits = BODY_LIMITS): void {
  if (typeof value !== "object" || value === null) return;
  // Frames link to their parent (the path is built only for a refusal), and an array of plain
  // values (a row of X) is checked where it stands, never pushed: a 10 MiB X allocates nothing here.
  interface Frame {
    value: object;
    depth: number;
    parent: Frame | undefined;
    key: string | number;
  }
  const fieldOf = (frame: Frame | undefined, last?: string | number) => {
    const path: Array<string | number> = last === undefined ? [] : [last];
    for (let f = frame; f !== undefined && f.parent !== undefined; f = f.parent) path.unshift(f.key);
    let field = "";
    for (const part of path.slice(0, 3)) field += typeof part === "number" ? `[${part}]` : field === "" ? quoteName(part) : `.${quoteName(part)}`;
    return field === "" ? "body" : field;
  };
  const refuse = (field: string, expected: string, detail: string, limitName: keyof BodyLimits) =>
    new ServiceError(status, "invalid_input", `${field}: expected ${expected}; ${detail}`, {
      field,
      expected,
      extra: { limit: limits[limitName], limit_name: limitName },
    });
  const tooDeep = (field: string) => refuse(field, `JSON nested at most ${limits.maxJsonDepth} levels deep`, "this value goes deeper", "maxJsonDepth");
  const visit = (frame: Frame, key: string | number, child: unknown) => {
    if (typeof child !== "object" || child === null) return;
    if (Array.isArray(child) && isFlat(child)) {
      if (frame.depth + 1 > limits.maxJsonDepth) throw tooDeep(fieldOf(frame, key));
      return;
    }
    stack.push({ value: child, depth: frame.depth + 1, parent: frame, key });
  };
  const stack: Frame[] = [{ value, depth: 1, parent: undefined, key: "" }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    if (frame.depth > limits.maxJsonDepth) throw tooDeep(fieldOf(frame));
    if (Array.isArray(frame.value)) {
      const list = frame.value as unknown[];
      for (let i = 0; i < list.length; i++) visit(frame, i, list[i]);
      continue;
    }
    const record = frame.value as Record<string, unknown>;
    const keys = Object.keys(record);
    if (keys.length > limits.maxObjectKeys) {
      throw refuse(fieldOf(frame), `an object of at most ${limits.maxObjectKeys} keys`, `this one has ${keys.length}`, "maxObjectKeys");
    }
    for (const k of keys) {
      if (k.length > limits.maxNameChars) {
        throw refuse(fieldOf(frame, k), `a name of at most ${limits.maxNameChars} characters`, `this one has ${k.length}`, "maxNameChars");
      }
      visit(frame, k, record[k]);
    }
  }
}

/** An array none of whose items is an object or an array. */
function isFlat(list: unknown[]): boolean {
  for (let i = 0; i < list.length; i++) {
    const v = list[i];
    if (typeof v === "object" && v !== null) return false;
  }
  return true;
}

/**
 * JSON.parse, and when that fails, once more with the non-standard number tokens of Python's json
 * module read (docs/api.md section 1): `NaN` as null (a missing value, where one is allowed) and
 * `Infinity` / `-Infinity` as a number beyond the double range, which JSON.parse itself reads as
 * +-Infinity, so that validation refuses it with a 422 naming the field. Only tokens in a value
 * position (after `[`, `,`, `:` or at the start) and outside strings are read; anything else that
 * does not parse throws JSON.parse's own error. Standard JSON takes the first, fast path.
 */
export function parseJsonLenient(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const patched = replaceNonFiniteTokens(text);
    if (patched === undefined) throw error;
    try {
      return JSON.parse(patched);
    } catch {
      throw error;
    }
  }
}

const NON_FINITE_TOKENS: ReadonlyArray<[string, string]> = [
  ["NaN", "null"],
  ["Infinity", "1e999"],
  ["-Infinity", "-1e999"],
];

/** `text` with bare NaN / Infinity / -Infinity values replaced; undefined when there are none. */
function replaceNonFiniteTokens(text: string): string | undefined {
  const out: string[] = [];
  let from = 0;
  let inString = false;
  let previous = ""; // the last non-blank character outside strings
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') {
      inString = true;
      previous = c;
      continue;
    }
    if (c === "N" || c === "I" || c === "-") {
      const hit =
        previous === "" || previous === "[" || previous === "," || previous === ":" ? NON_FINITE_TOKENS.find(([t]) => text.startsWith(t, i)) : undefined;
      if (hit && !/[A-Za-z0-9_$.]/.test(text[i + hit[0].length] ?? "")) {
        out.push(text.slice(from, i), hit[1]);
        i += hit[0].length - 1;
        from = i + 1;
        previous = "0";
        continue;
      }
    }
    if (c !== " " && c !== "\t" && c !== "\n" && c !== "\r") previous = c;
  }
  if (out.length === 0) return undefined;
  out.push(text.slice(from));
  return out.join("");
}

/** Status of a request node's HTTP parser refused, by its error code (node's own defaults). */
const PARSER_STATUS: Record<string, [number, string]> = {
  HPE_HEADER_OVERFLOW: [431, "Request Header Fields Too Large"],
  ERR_HTTP_REQUEST_TIMEOUT: [408, "Request Timeout"],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: [413, "Payload Too Large"],
};

/**
 * The server's `clientError` listener: a request node's parser refuses (a bad request line, a
 * control character in a header, an unknown method, headers too large) still gets an answer in
 * the JSON error shape, 400 unless the parser's code says 431, 408 or 413, and the connection is
 * closed. Nothing of the request is echoed.
 *
 * @example
 * server.on("clientError", answerClientError);
 */
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === "ECONNRESET" || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, reason] = PARSER_STATUS[error.code ?? ""] ?? [400, "Bad Request"];
  const body = toJson(
    errorBody(
      new ServiceError(
        status,
        status === 400 ? "bad_request" : status === 431 ? "headers_too_large" : status === 408 ? "request_timeout" : "payload_too_large",
        `${reason}: the request could not be read as HTTP/1.1`,
      ),
    ),
  );
  const head =
    `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json; charset=utf-8\r\n` +
    `content-length: ${Buffer.byteLength(body)}\r\ncache-control: no-store\r\nconnection: close\r\n\r\n`;
  socket.end(head + body);
}
