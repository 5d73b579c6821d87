/**
 * Errors of the HTTP client, one class per kind a caller may want to catch:
 *
 * | class | when |
 * | --- | --- |
 * | ConfigurationError | no API key, no base URL, no access id for a POST, a bad setting |
 * | AuthenticationError | 401 / 403 (`field`: `x-api-key` or `access_id`) |
 * | ValidationError | 400 / 422, or refused before sending (`local`); `field`, `expected` |
 * | QuotaExceededError | 429 because the plan is spent (`remaining`, `required`) |
 * | RateLimitError | 429 throttling (`retryAfterMs`) |
 * | JobFailedError | 409, or a failed v2 body (`reason`, `jobId`, `errorCode`) |
 * | JobPendingError | a one-shot read (`result`, `field`) of a job that is still running (202) |
 * | NotFoundError | 404, or the v2 "unknown job" body |
 * | FieldTooLargeError | 413 on one field (`smallerPaths` to ask for instead) |
 * | PayloadTooLargeError | 413 on a POST, or an X over the 5 MiB limit refused before sending |
 * | TimeoutError | a request or a wait ran out of time (`phase`, `maybeSent`) |
 * | ConnectionError | the connection failed or dropped (`maybeSent`) |
 * | AbortError | the caller's AbortSignal fired |
 * | ApiError | any other status, or a body that is not the JSON expected (`body`, `excerpt`) |
 *
 * All extend RbpError (`status`, `code` = the service's machine code, else the class's default,
 * `request` = method and
 * path with job codes elided, `attempts`). None holds the API key: errors are built only from
 * scrubbed strings and values (redact.ts), never from request options or headers, and a
 * low-level cause is copied into a plain Error with a scrubbed message. `toJSON` lists the same
 * fields.
 */

import { brand, RbpBaseError } from "../errors/index.js";

export interface RbpErrorInit {
  /** HTTP status of the response, when there was one. */
  status?: number;
  /** The service's machine code (`error` in its body), or a client code. */
  code?: string;
  /** "GET /v3/results/12/…": method and path, job and experiment codes elided. */
  request?: string;
  /** Attempts made (1 = no retry). */
  attempts?: number;
  /** The service's error body (scrubbed), when it was JSON. */
  body?: unknown;
  /** A low-level cause, already sanitised (see `safeCause`). */
  cause?: Error;
}

export class RbpError extends RbpBaseError {
  static {
    brand(this, "RbpError");
  }
  /** The `code` of an error of this class when the service sent none. */
  static readonly defaultCode: string = "api_error";
  override name = "RbpError";
  readonly status: number | undefined;
  readonly request: string | undefined;
  readonly attempts: number | undefined;
  readonly body: unknown;
  /**
   * v2 groups only: the rows posted (each a job, charged) before this error stopped the rest.
   * Wait on them with `waitExperiment({ ..., jobs: submitted })` or let them be.
   */
  submitted: Array<{ row: number; job_id: number; job_code: string }> | undefined;

  constructor(message: string, init: RbpErrorInit = {}) {
    super(message, init.code ?? (new.target as unknown as typeof RbpError).defaultCode, init.cause !== undefined ? { cause: init.cause } : undefined);
    this.status = init.status;
    this.request = init.request;
    this.attempts = init.attempts;
    this.body = init.body;
  }

  /** Fields particular to the subclass, for toJSON. */
  protected details(): Record<string, unknown> {
    return {};
  }

  toJSON(): Record<string, unknown> {
    const out: Record<string, unknown> = { name: this.name, message: this.message };
    const base: Record<string, unknown> = {
      status: this.status,
      code: this.code,
      request: this.request,
      attempts: this.attempts,
      ...this.details(),
      submitted: this.submitted,
      body: this.body,
    };
    for (const [k, v] of Object.entries(base)) if (v !== undefined) out[k] = v;
    if (this.cause instanceof Error) out.cause = { name: this.cause.name, message: this.cause.message };
    return out;
  }

  /** util.inspect: the stack, then the fields that are set (the same as toJSON's). */
  [Symbol.for("nodejs.util.inspect.custom")](depth: number, options: object, show: (value: unknown, options: object) => string): string {
    const { name: _name, message: _message, ...fields } = this.toJSON();
    if (Object.keys(fields).length === 0 || depth < 0) return String(this.stack);
    return `${String(this.stack)} ${show(fields, { ...options, depth: depth === null ? null : depth - 1 })}`;
  }
}

/** A setting is missing or wrong (no request was made). */
export class ConfigurationError extends RbpError {
  static {
    brand(this, "ConfigurationError");
  }
  static override readonly defaultCode: string = "configuration";
  override name = "ConfigurationError";
  /** The setting at fault, e.g. `CSA_API_KEY`, `baseUrl`. */
  readonly setting: string;
  constructor(setting: string, message: string) {
    super(message, { code: "configuration" });
    this.setting = setting;
  }
  protected override details() {
    return { setting: this.setting };
  }
}

/** 401 (no key) or 403 (a key or access id the service does not know, or an expired access id). */
export class AuthenticationError extends RbpError {
  static {
    brand(this, "AuthenticationError");
  }
  static override readonly defaultCode: string = "authentication_failed";
  override name = "AuthenticationError";
  /** `x-api-key` or `access_id` when the service says which. */
  readonly field: string | undefined;
  constructor(message: string, init: RbpErrorInit & { field?: string } = {}) {
    super(message, init);
    this.field = init.field;
  }
  protected override details() {
    return { field: this.field };
  }
}

/** 400/422 from the service, or a request refused by the client before sending (`local`). */
export class ValidationError extends RbpError {
  static {
    brand(this, "ValidationError");
  }
  static override readonly defaultCode: string = "invalid_request";
  override name = "ValidationError";
  /** The request field at fault: `theta`, `X[3][1]`, `options.censor_type`, ... */
  readonly field: string | undefined;
  /** What was expected there, in words. */
  readonly expected: string | undefined;
  /** True when the client refused the request: nothing was sent and no quota was spent. */
  readonly local: boolean;
  constructor(message: string, init: RbpErrorInit & { field?: string; expected?: string; local?: boolean } = {}) {
    super(message, init);
    this.field = init.field;
    this.expected = init.expected;
    this.local = init.local ?? false;
  }
  protected override details() {
    return { field: this.field, expected: this.expected, local: this.local };
  }
}

/** 429 because the plan's quota cannot pay for the request (nothing was created or charged). */
export class QuotaExceededError extends RbpError {
  static {
    brand(this, "QuotaExceededError");
  }
  static override readonly defaultCode: string = "quota_exceeded";
  override name = "QuotaExceededError";
  readonly remaining: number | undefined;
  readonly required: number | undefined;
  readonly quota: number | undefined;
  constructor(message: string, init: RbpErrorInit & { remaining?: number; required?: number; quota?: number } = {}) {
    super(message, init);
    this.remaining = init.remaining;
    this.required = init.required;
    this.quota = init.quota;
  }
  protected override details() {
    return { remaining: this.remaining, required: this.required, quota: this.quota };
  }
}

/** 429 throttling: too many requests for now. */
export class RateLimitError extends RbpError {
  static {
    brand(this, "RateLimitError");
  }
  static override readonly defaultCode: string = "rate_limited";
  override name = "RateLimitError";
  /** The server's Retry-After, in milliseconds, when it sent one. */
  readonly retryAfterMs: number | undefined;
  constructor(message: string, init: RbpErrorInit & { retryAfterMs?: number } = {}) {
    super(message, init);
    this.retryAfterMs = init.retryAfterMs;
  }
  protected override details() {
    return { retryAfterMs: this.retryAfterMs };
  }
}

/** The job failed (409 in v3; a failed body in v2). `reason` is the service's explanation. */
export class JobFailedError extends RbpError {
  static {
    brand(this, "JobFailedError");
  }
  static override readonly defaultCode: string = "job_failed";
  override name = "JobFailedError";
  readonly reason: string;
  readonly jobId: number | undefined;
  /** LambdaError code (docs/api.md section 3): 2 process, 3 prediction failed, ... */
  readonly errorCode: number | undefined;
  constructor(message: string, init: RbpErrorInit & { reason: string; jobId?: number; errorCode?: number }) {
    super(message, init);
    this.reason = init.reason;
    this.jobId = init.jobId;
    this.errorCode = init.errorCode;
  }
  protected override details() {
    return { reason: this.reason, jobId: this.jobId, errorCode: this.errorCode };
  }
}

/** A one-shot read of a job that has not finished (202, or a v2 running body). Poll with `wait`. */
export class JobPendingError extends RbpError {
  static {
    brand(this, "JobPendingError");
  }
  static override readonly defaultCode: string = "pending";
  override name = "JobPendingError";
  readonly jobId: number | undefined;
  /** `queued` or `running`. */
  readonly jobStatus: string;
  constructor(message: string, init: RbpErrorInit & { jobId?: number; jobStatus: string }) {
    super(message, init);
    this.jobId = init.jobId;
    this.jobStatus = init.jobStatus;
  }
  protected override details() {
    return { jobId: this.jobId, jobStatus: this.jobStatus };
  }
}

/** 404: no such job, experiment, field or route for this key. */
export class NotFoundError extends RbpError {
  static {
    brand(this, "NotFoundError");
  }
  static override readonly defaultCode: string = "not_found";
  override name = "NotFoundError";
}

/** 413 on a single field: ask for one of `smallerPaths` instead. */
export class FieldTooLargeError extends RbpError {
  static {
    brand(this, "FieldTooLargeError");
  }
  static override readonly defaultCode: string = "field_too_large";
  override name = "FieldTooLargeError";
  readonly field: string | undefined;
  readonly smallerPaths: string[];
  readonly bytes: number | undefined;
  readonly limit: number | undefined;
  constructor(message: string, init: RbpErrorInit & { field?: string; smallerPaths?: string[]; bytes?: number; limit?: number } = {}) {
    super(message, init);
    this.field = init.field;
    this.smallerPaths = init.smallerPaths ?? [];
    this.bytes = init.bytes;
    this.limit = init.limit;
  }
  protected override details() {
    return { field: this.field, smallerPaths: this.smallerPaths, bytes: this.bytes, limit: this.limit };
  }
}

/** 413 on a POST body, or an X refused before sending because its JSON exceeds 5 MiB (`local`). */
export class PayloadTooLargeError extends RbpError {
  static {
    brand(this, "PayloadTooLargeError");
  }
  static override readonly defaultCode: string = "payload_too_large";
  override name = "PayloadTooLargeError";
  readonly limit: number | undefined;
  /** The size found (exact, or a lower bound when refused before encoding). */
  readonly bytes: number | undefined;
  readonly local: boolean;
  constructor(message: string, init: RbpErrorInit & { limit?: number; bytes?: number; local?: boolean } = {}) {
    super(message, init);
    this.limit = init.limit;
    this.bytes = init.bytes;
    this.local = init.local ?? false;
  }
  protected override details() {
    return { limit: this.limit, bytes: this.bytes, local: this.local };
  }
}

/** A request (`phase` request) or a wait for a job (`phase` wait) ran out of time. */
export class TimeoutError extends RbpError {
  static {
    brand(this, "TimeoutError");
  }
  static override readonly defaultCode: string = "timeout";
  override name = "TimeoutError";
  readonly timeoutMs: number;
  readonly phase: "request" | "wait";
  /** The request may have reached the server (for a POST: the job may exist and be charged). */
  readonly maybeSent: boolean;
  readonly jobId: number | undefined;
  constructor(message: string, init: RbpErrorInit & { timeoutMs: number; phase: "request" | "wait"; maybeSent?: boolean; jobId?: number }) {
    super(message, init);
    this.timeoutMs = init.timeoutMs;
    this.phase = init.phase;
    this.maybeSent = init.maybeSent ?? false;
    this.jobId = init.jobId;
  }
  protected override details() {
    return { timeoutMs: this.timeoutMs, phase: this.phase, maybeSent: this.maybeSent, jobId: this.jobId };
  }
}

/** The connection could not be made, or dropped before a response. */
export class ConnectionError extends RbpError {
  static {
    brand(this, "ConnectionError");
  }
  static override readonly defaultCode: string = "connection_failed";
  override name = "ConnectionError";
  /**
   * False when the request provably never left (connection refused, DNS failure, connect
   * timeout); true when it may have reached the server (for a POST: the job may exist and be
   * charged, so it was not re-sent).
   */
  readonly maybeSent: boolean;
  constructor(message: string, init: RbpErrorInit & { maybeSent: boolean }) {
    super(message, init);
    this.maybeSent = init.maybeSent;
  }
  protected override details() {
    return { maybeSent: this.maybeSent };
  }
}

/** The caller's AbortSignal fired. */
export class AbortError extends RbpError {
  static {
    brand(this, "AbortError");
  }
  static override readonly defaultCode: string = "aborted";
  override name = "AbortError";
  constructor(message = "the request was aborted by the caller", init: RbpErrorInit = {}) {
    super(message, { code: "aborted", ...init });
  }
}

/** Any other status, or a response that is not the JSON the client expects. */
export class ApiError extends RbpError {
  static {
    brand(this, "ApiError");
  }
  static override readonly defaultCode: string = "api_error";
  override name = "ApiError";
  /** The start of a body that was not JSON (scrubbed, whitespace collapsed). */
  readonly excerpt: string | undefined;
  constructor(message: string, init: RbpErrorInit & { excerpt?: string } = {}) {
    super(message, init);
    this.excerpt = init.excerpt;
  }
  protected override details() {
    return { excerpt: this.excerpt };
  }
}

/**
 * A plain Error standing in for a low-level error (undici, net): its name, its code and a
 * scrubbed message, nothing else (no request options, sockets or headers).
 */
export function safeCause(error: unknown, scrub: (s: string) => string): Error | undefined {
  if (error === undefined || error === null) return undefined;
  const source = error instanceof Error ? error : new Error(String(error));
  const copy = new Error(scrub(source.message));
  copy.name = source.name;
  const code = (source as { code?: unknown }).code;
  if (typeof code === "string") (copy as Error & { code?: string }).code = code;
  copy.stack = `${copy.name}: ${copy.message}`;
  return copy;
}
