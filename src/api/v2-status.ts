/**
 * v2 status bodies (docs/api.md section 3): the LambdaStatus and LambdaError
 * codes the official client reads, the `GET /results` bodies of a running, failed or unknown job,
 * the quota bodies, and the CRC-64/XZ that names an uploaded X.
 *
 * Rules of section 2.2 that these builders enforce:
 * - `error_code` is always an integer, and a failure carries both `status_code` and an
 *   `error_code` in 1..6 (rules 2 to 4); anything else throws RangeError here, before the wire.
 * - A running body has no `yhat` and no key named `error` (rule 6).
 * - A failed body DOES carry `error` (a machine code, the unified error shape of section 1 and
 *   `ErrorBodySchema`): the multi-task collector then counts the job as finished and failed,
 *   which is what it is, and section 5.3 says to put the error key "only on failed jobs". It never
 *   carries `status` (rule 7) or `yhat`.
 * - An unknown job answers the [REC] body with status_code 0 and error_code 1 (G15).
 */

/** LambdaStatus (csa_common_lib `enum_types/lambda_status.py`). */
export const LambdaStatus = {
  INITIALIZED: 0,
  PENDING: 1,
  PROCESSING: 10,
  COMPLETED: 11,
} as const;
export type LambdaStatusCode = 0 | 1 | 10 | 11;

/** LambdaError (csa_common_lib `enum_types/errors.py`, codes 1..6 since Nov 2024). */
export const LambdaError = {
  NO_ERROR: 0,
  POST_JOB: 1,
  PROCESS_JOB: 2,
  PREDICTION: 3,
  PAYLOAD: 4,
  X_INPUT: 5,
  SAVE_RESULTS: 6,
} as const;
export type LambdaErrorCode = 0 | 1 | 2 | 3 | 4 | 5 | 6;
/** The codes a failed job may carry (rule 3: any other positive value crashes the client). */
export type V2FailureCode = 1 | 2 | 3 | 4 | 5 | 6;

/** The messages the client prints after "GURU MEDITATION ERROR: " (verbatim, typos included). */
export const LAMBDA_ERROR_MESSAGES: Readonly<Record<LambdaErrorCode, string>> = {
  0: "No error.",
  1: "Something went wrong while posting a job to the server.",
  2: "Something went wrong while processing a job.",
  3: "Prediction task failed.",
  4: "Unable to parse input payload",
  5: "Failed to load X_matrix input.",
  6: "Failed to save prediction results.",
};

/** Machine codes for the `error` key of a failed body, one per LambdaError. */
export const LAMBDA_ERROR_NAMES: Readonly<Record<V2FailureCode, string>> = {
  1: "post_job",
  2: "process_job",
  3: "prediction_failed",
  4: "payload_unparsable",
  5: "x_input_unloadable",
  6: "results_unsaved",
};

/** The LambdaError message of a code, or undefined for a code the client does not know. */
export function lambdaErrorMessage(code: number): string | undefined {
  return Object.prototype.hasOwnProperty.call(LAMBDA_ERROR_MESSAGES, code) ? LAMBDA_ERROR_MESSAGES[code as LambdaErrorCode] : undefined;
}

/**
 * What the official client shows for a failed body: `#<status_code><error_code> GURU MEDITATION
 * ERROR: <message>`, e.g. `#103 GURU MEDITATION ERROR: Prediction task failed.` (section 2.2).
 */
export function v2ClientErrorText(statusCode: number, errorCode: number): string {
  return `#${statusCode}${errorCode} GURU MEDITATION ERROR: ${lambdaErrorMessage(errorCode) ?? "unknown error"}`;
}

/** A job as the v2 receipt names it. */
export interface V2JobRef {
  job_id: number;
  job_code: string;
}

export interface V2RunningBody {
  job_id: number;
  job_code: string;
  status_code: 1 | 10;
  error_code: 0;
  statusMsg: "PROCESSING";
}

export interface V2FailedBody {
  job_id: number;
  job_code: string;
  status_code: 0 | 1 | 10;
  error_code: V2FailureCode;
  /** Machine code (LAMBDA_ERROR_NAMES unless the caller gives one). */
  error: string;
  message: string;
  details?: Array<Record<string, unknown>>;
}

export interface V2UnknownJobBody {
  status_code: 0;
  error_code: 1;
  message: "unknown job";
}

/**
 * Body of a queued (stage 1, pending) or running (stage 10, processing; the default) job. Answer it
 * with HTTP 200 (rule 1). It echoes the receipt and, for clients older than `638abf1`, `statusMsg`.
 */
export function v2Running(job: V2JobRef, stage: 1 | 10 = LambdaStatus.PROCESSING): V2RunningBody {
  if (stage !== LambdaStatus.PENDING && stage !== LambdaStatus.PROCESSING) {
    throw new RangeError(`v2Running: stage must be 1 (pending) or 10 (processing), got ${String(stage)}`);
  }
  return { job_id: job.job_id, job_code: job.job_code, status_code: stage, error_code: 0, statusMsg: "PROCESSING" };
}

/**
 * Body of a failed job (HTTP 200). `stage` is the LambdaStatus where it failed: 1 for payload or X
 * errors found before processing, 10 for compute errors (0 is accepted for a job that never got
 * past initialisation). `errorCode` is 1..6. `message` is the human text (for example the engine's
 * error message); `extra.error` overrides the machine code and `extra.details` adds field details.
 */
export function v2Failed(
  job: V2JobRef,
  stage: 0 | 1 | 10,
  errorCode: V2FailureCode,
  message: string,
  extra: { error?: string; details?: Array<Record<string, unknown>> } = {},
): V2FailedBody {
  if (stage !== 0 && stage !== 1 && stage !== 10) {
    throw new RangeError(`v2Failed: stage must be the LambdaStatus where the job failed (0, 1 or 10), got ${String(stage)}`);
  }
  if (!Number.isInteger(errorCode) || errorCode < 1 || errorCode > 6) {
    throw new RangeError(`v2Failed: errorCode must be a LambdaError code in 1..6, got ${String(errorCode)}`);
  }
  return {
    job_id: job.job_id,
    job_code: job.job_code,
    status_code: stage,
    error_code: errorCode,
    error: extra.error ?? LAMBDA_ERROR_NAMES[errorCode],
    message,
    ...(extra.details !== undefined ? { details: extra.details } : {}),
  };
}

/** Body for an unknown or mismatched job_id/job_code (HTTP 200, section 2.2 [REC], G15). */
export function v2UnknownJob(): V2UnknownJobBody {
  return { status_code: 0, error_code: 1, message: "unknown job" };
}

// ---------------------------------------------------------------------------------------------
// Quota (section 2.4 [REC], G6)

export interface QuotaState {
  /** Units of the period (one unit per v2 POST). */
  quota: number;
  /** Units used so far in the period. */
  used: number;
  period_start: Date;
  period_end: Date;
}

export type V2QuotaType = "quota" | "used" | "remaining" | "summary";

export interface V2QuotaPeriod {
  period_start: string;
  period_end: string;
}
export interface V2QuotaBody extends V2QuotaPeriod {
  quota: number;
}
export interface V2QuotaUsedBody extends V2QuotaPeriod {
  used: number;
}
export interface V2QuotaRemainingBody extends V2QuotaPeriod {
  remaining: number;
}
export interface V2QuotaSummaryBody extends V2QuotaPeriod {
  quota: number;
  used: number;
  remaining: number;
  unit: "prediction_task";
}

/** `YYYY-MM-DD HH:MM:SS` in UTC (the vendor's `convert_datetime_to_string` format; no zone). */
export function v2DateTime(date: Date): string {
  const t = date.getTime();
  if (!Number.isFinite(t)) throw new RangeError("v2DateTime: invalid Date");
  return date.toISOString().slice(0, 19).replace("T", " ");
}

function quotaNumbers(state: QuotaState): { quota: number; used: number; remaining: number } & V2QuotaPeriod {
  for (const key of ["quota", "used"] as const) {
    const v = state[key];
    if (!Number.isInteger(v) || v < 0) throw new RangeError(`quota: ${key} must be a non-negative integer, got ${String(v)}`);
  }
  return {
    quota: state.quota,
    used: state.used,
    // Never negative: an over-used period (a race, a lowered plan) has nothing left.
    remaining: Math.max(0, state.quota - state.used),
    period_start: v2DateTime(state.period_start),
    period_end: v2DateTime(state.period_end),
  };
}

/** `GET /quota`. */
export function v2Quota(state: QuotaState): V2QuotaBody {
  const q = quotaNumbers(state);
  return { quota: q.quota, period_start: q.period_start, period_end: q.period_end };
}

/** `GET /quota/used`. */
export function v2QuotaUsed(state: QuotaState): V2QuotaUsedBody {
  const q = quotaNumbers(state);
  return { used: q.used, period_start: q.period_start, period_end: q.period_end };
}

/** `GET /quota/remaining`. */
export function v2QuotaRemaining(state: QuotaState): V2QuotaRemainingBody {
  const q = quotaNumbers(state);
  return { remaining: q.remaining, period_start: q.period_start, period_end: q.period_end };
}

/** `GET /quota/summary`. */
export function v2QuotaSummary(state: QuotaState): V2QuotaSummaryBody {
  const q = quotaNumbers(state);
  return { quota: q.quota, used: q.used, remaining: q.remaining, period_start: q.period_start, period_end: q.period_end, unit: "prediction_task" };
}

/** The body of `GET /quota[/<type>]` by the client's `quota_type` (`quota` is the bare path). */
export function v2QuotaBody(type: V2QuotaType, state: QuotaState): V2QuotaBody | V2QuotaUsedBody | V2QuotaRemainingBody | V2QuotaSummaryBody {
  switch (type) {
    case "quota":
      return v2Quota(state);
    case "used":
      return v2QuotaUsed(state);
    case "remaining":
      return v2QuotaRemaining(state);
    case "summary":
      return v2QuotaSummary(state);
  }
  throw new RangeError(`v2QuotaBody: unknown quota type ${String(type)}`);
}

// ---------------------------------------------------------------------------------------------
// CRC-64/XZ (section 2.3): poly 0x42F0E1EBA9EA3693 reflected (0xC96C5795D7870F42), init and
// xorout all ones. Table-driven over two 32-bit halves, so a large upload is hashed without BigInt.

const POLY_HI = 0xc96c5795;
const POLY_LO = 0xd7870f42;
const TABLE_HI = new Uint32Array(256);
const TABLE_LO = new Uint32Array(256);
for (let n = 0; n < 256; n++) {
  let hi = 0;
  let lo = n;
  for (let bit = 0; bit < 8; bit++) {
    const odd = lo & 1;
    lo = ((lo >>> 1) | ((hi & 1) << 31)) >>> 0;
    hi = hi >>> 1;
    if (odd) {
      hi = (hi ^ POLY_HI) >>> 0;
      lo = (lo ^ POLY_LO) >>> 0;
    }
  }
  TABLE_HI[n] = hi;
  TABLE_LO[n] = lo;
}

/**
 * CRC-64/XZ of `bytes` as lower-case hex, without `0x` and without zero padding (so it can be
 * shorter than 16 characters), as the official client names an uploaded X. "123456789" gives
 * `995dc9bbdf1939fa`; no bytes give `0`.
 */
export function crc64xz(bytes: Uint8Array): string {
  let hi = 0xffffffff;
  let lo = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) {
    const index = (lo ^ bytes[i]) & 0xff;
    lo = (((lo >>> 8) | (hi << 24)) ^ TABLE_LO[index]) >>> 0;
    hi = ((hi >>> 8) ^ TABLE_HI[index]) >>> 0;
  }
  hi = (hi ^ 0xffffffff) >>> 0;
  lo = (lo ^ 0xffffffff) >>> 0;
  return ((BigInt(hi) << 32n) | BigInt(lo)).toString(16);
}

/** The upload file name of an X serialised to `bytes`: `<crc64xz hex>.json`. */
export function v2XFileName(bytes: Uint8Array): string {
  return `${crc64xz(bytes)}.json`;
}
