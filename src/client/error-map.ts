/**
 * An HTTP error response as the error class of its kind (errors.ts). Reads the service's error
 * body (`{message, error, status_code, error_code, field?, details?, ...}`, docs/api.md section
 * 1) when it is JSON, and falls back to the status alone (with a scrubbed excerpt) when it is not.
 */
import {
  ApiError,
  AuthenticationError,
  FieldTooLargeError,
  JobFailedError,
  NotFoundError,
  PayloadTooLargeError,
  QuotaExceededError,
  RateLimitError,
  ValidationError,
  type RbpError,
} from "./errors.js";

export interface ErrorResponse {
  status: number;
  /** The parsed body, already scrubbed; undefined when it was not JSON. */
  body: unknown;
  /** Start of a body that was not JSON (scrubbed). */
  excerpt?: string;
  contentType?: string;
  retryAfterMs?: number;
  /** "GET /v3/results/12/…" */
  request: string;
  attempts: number;
}

const STATUS_TEXT: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  409: "Conflict (the job failed)",
  413: "Payload Too Large",
  422: "Unprocessable Entity",
  429: "Too Many Requests",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

export function errorFromResponse(r: ErrorResponse): RbpError {
  const body: Obj = isObj(r.body) ? r.body : {};
  const code = str(body.error);
  const serviceMessage = str(body.message);
  const detail0 = Array.isArray(body.details) && isObj(body.details[0]) ? (body.details[0] as Obj) : {};
  const field = str(body.field) ?? str(detail0.field);
  const base = {
    status: r.status,
    code,
    request: r.request,
    attempts: r.attempts,
    body: r.body,
  };
  const statusText = STATUS_TEXT[r.status] ?? "HTTP error";
  let message: string;
  if (serviceMessage !== undefined) message = serviceMessage;
  else if (r.body === undefined && r.excerpt !== undefined) {
    message = `${r.status} ${statusText}: the service answered with ${r.contentType ? `"${r.contentType}"` : "a body"} that is not JSON${
      r.excerpt ? `: "${r.excerpt}"` : ""
    }`;
  } else message = `${r.status} ${statusText}`;
  message = `${message} (${r.request})`;

  switch (r.status) {
    case 401:
    case 403:
      return new AuthenticationError(message, { ...base, field });
    case 400:
    case 422:
      return new ValidationError(message, { ...base, field, expected: str(body.expected) ?? str(detail0.expected) });
    case 404:
      return new NotFoundError(message, base);
    case 409:
      return new JobFailedError(message, {
        ...base,
        reason: str(body.reason) ?? serviceMessage ?? "the job failed",
        jobId: num(body.job_id),
        errorCode: num(body.error_code),
      });
    case 413:
      if (code === "field_too_large" || Array.isArray(body.smaller_fields)) {
        return new FieldTooLargeError(message, {
          ...base,
          field,
          smallerPaths: Array.isArray(body.smaller_fields) ? body.smaller_fields.filter((s): s is string => typeof s === "string") : [],
          bytes: num(body.bytes),
          limit: num(body.limit),
        });
      }
      return new PayloadTooLargeError(message, { ...base, limit: num(body.limit) });
    case 429:
      if (code === "quota_exceeded" || /limit exceeded/i.test(serviceMessage ?? "")) {
        return new QuotaExceededError(message, {
          ...base,
          remaining: num(body.remaining),
          required: num(body.required),
          quota: num(body.quota),
        });
      }
      return new RateLimitError(message, { ...base, retryAfterMs: r.retryAfterMs });
    default:
      return new ApiError(message, { ...base, excerpt: r.excerpt });
  }
}
