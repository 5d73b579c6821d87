/**
 * What the prediction service (core.ts) refuses, as domain errors: a stable `code`, a message a
 * caller can act on, and the data a reply carries. The service knows nothing of HTTP; http.ts
 * `httpError` alone maps each code to its status (and Retry-After to a header), so the HTTP
 * routes and the in-process lane answer a refusal alike.
 *
 * | code | meaning | HTTP |
 * | --- | --- | --- |
 * | `quota_exceeded` | the plan cannot pay the request; nothing was charged | 429 |
 * | `insufficient_storage` | the store is full; nothing was charged | 507 |
 * | `service_busy` | the store cannot take or read it now (out of files, busy); try again | 503 |
 * | `store_unavailable` | the store cannot be reached (outage.ts) | 503 |
 * | `gone` | the job, experiment or result was removed by the retention | 410 |
 * | `not_found` | a result has no such field (fields.ts) | 404 |
 * | `payload_too_large` | an upload is larger than the store keeps (uploads.ts) | 413 |
 * | `unauthorized` | no API key was sent (auth.ts) | 401 |
 * | `forbidden` | a wrong API key or access id (auth.ts), an upload token wrong or expired (uploads.ts) | 403 |
 */
import { brand, RbpBaseError } from "../errors/index.js";

export type RefusalCode =
  "quota_exceeded" | "insufficient_storage" | "service_busy" | "store_unavailable" | "gone" | "not_found" | "payload_too_large" | "unauthorized" | "forbidden";

const REFUSAL_CODES: ReadonlySet<string> = new Set<RefusalCode>([
  "quota_exceeded",
  "insufficient_storage",
  "service_busy",
  "store_unavailable",
  "gone",
  "not_found",
  "payload_too_large",
  "unauthorized",
  "forbidden",
]);

export interface RefusalInit {
  /** The one request field at fault. */
  field?: string;
  /** What that field should hold. */
  expected?: string;
  /** What was expected where, field by field. */
  details?: Array<{ field?: string; expected?: string; [key: string]: unknown }>;
  /** More keys for the reply's body (e.g. `remaining` of a `quota_exceeded`). */
  extra?: Record<string, unknown>;
  /** Seconds after which trying again may succeed. */
  retryAfterS?: number;
}

/**
 * A request the service refuses, with its stable code.
 *
 * @example
 * throw new ServiceRefusal("gone", "job 12 is no longer kept: ...");
 */
export class ServiceRefusal extends RbpBaseError {
  static {
    brand(this, "ServiceRefusal");
  }
  override readonly name = "ServiceRefusal";

  constructor(
    code: RefusalCode,
    message: string,
    readonly init: RefusalInit = {},
  ) {
    super(message, code);
  }
}

/**
 * The refusal code of `error`, or undefined when it is no refusal of the service.
 *
 * @example
 * if (refusalCode(error) === "gone") return undefined; // v2 reads a removed job as an unknown one
 */
export function refusalCode(error: unknown): RefusalCode | undefined {
  return error instanceof ServiceRefusal && REFUSAL_CODES.has(error.code) ? (error.code as RefusalCode) : undefined;
}
