/**
 * The rules of version 2 of the prediction API that are not routing (docs/api.md section 3): what
 * `/binary` and a PSR without thresholds mean, which outcomes the logistic scale accepts, what a
 * receipt lists as ignored, and how a failed job reads. v2.ts serves them; pure functions, no I/O.
 */
import type { Analysis } from "../api/options.js";
import { describe, V2_PSR_DEFAULT_THRESHOLDS } from "../api/options.js";
import { capWarnings, warningText, type RequestWarning } from "../api/warnings.js";
import { LambdaError, LambdaStatus, v2Failed, type V2FailedBody, type V2FailureCode, type V2JobRef } from "../api/v2-status.js";
import { ServiceError } from "./http.js";

/**
 * The top level of a v2 POST as the service reads it: `/binary` forces the logistic scale (a note
 * in `notes` when the caller asked otherwise), and a PSR given no threshold at all (null or absent,
 * no `threshold_range`) sweeps [0, 0.2, 0.4, 0.6, 0.8] (G11; v3 keeps the engine default [0.5]).
 *
 * @example
 * const notes: string[] = [];
 * v2Body("psr", true, { prediction_scale: "linear" }, notes);
 * // { _output_scale: "logistic", threshold: [0, 0.2, 0.4, 0.6, 0.8] }; notes: ['prediction_scale "linear" overridden: ...']
 */
export function v2Body(analysis: Analysis, binary: boolean, raw: Record<string, unknown>, notes: string[]): Record<string, unknown> {
  const body = binary ? forceLogistic(raw, notes) : raw;
  // The official client always sends a threshold; the newer OpenAPI text names these for none.
  if (analysis === "psr" && body.threshold == null && body.threshold_range == null) return { ...body, threshold: [...V2_PSR_DEFAULT_THRESHOLDS] };
  return body;
}

/** `/binary`: the body with `_output_scale: "logistic"` (and no `prediction_scale`); a note when the caller asked otherwise. */
function forceLogistic(body: Record<string, unknown>, notes: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    if (key === "prediction_scale" || key === "_output_scale") {
      if (value !== null && value !== undefined && !(typeof value === "string" && value.trim().toLowerCase() === "logistic")) {
        notes.push(`${key} ${describe(value)} overridden: /binary predicts on the logistic (probability) scale`);
      }
      continue;
    }
    out[key] = value;
  }
  out._output_scale = "logistic";
  return out;
}

/**
 * The logistic scale predicts probabilities: y must be 0/1 with both present (refused at POST, a
 * 400 naming the value, not as a failed job).
 *
 * @example
 * checkBinaryOutcome(Float64Array.of(0, 1, 1), true); // passes
 * checkBinaryOutcome(Float64Array.of(0, 2), true); // ServiceError 400, field "y[1]"
 */
export function checkBinaryOutcome(y: Float64Array, binary: boolean): void {
  const why = binary ? "/binary predicts probabilities of a 0/1 outcome" : 'prediction_scale "logistic" predicts probabilities of a 0/1 outcome';
  let zeros = 0;
  let ones = 0;
  for (let i = 0; i < y.length; i++) {
    if (y[i] === 0) zeros++;
    else if (y[i] === 1) ones++;
    else {
      throw new ServiceError(400, "invalid_input", `y[${i}]: expected 0 or 1 (${why}); got ${y[i]}`, { field: `y[${i}]`, expected: "0 or 1" });
    }
  }
  if (zeros === 0 || ones === 0) {
    throw new ServiceError(400, "invalid_input", `y: expected both 0s and 1s (${why}); got only ${zeros === 0 ? "1s" : "0s"}`, {
      field: "y",
      expected: "both 0s and 1s",
    });
  }
}

/**
 * `ignored_options` (the keys that had no effect, as the caller wrote them, section 4.2) and
 * `warnings` (other notes, as text: the request's, then the route's own `extra`) of a receipt.
 *
 * @example
 * receiptNotes("grid", { missing_moments: true }, [], []); // { ignored_options: ["missing_moments"] }
 */
export function receiptNotes(
  analysis: Analysis,
  body: Record<string, unknown>,
  notes: readonly RequestWarning[],
  extra: readonly string[],
): { ignored_options?: string[]; warnings?: string[] } {
  const ignored = new Set<string>();
  const others: RequestWarning[] = [];
  for (const note of notes) {
    if (note.code === "ignored_option" && note.key !== undefined) ignored.add(note.key);
    else others.push(note);
  }
  // The missing-data options have no effect on a Grid (it uses complete rows per combination);
  // the option parser drops them silently in v2 because the official client always sends one.
  if (analysis === "grid") for (const key of ["verify_missing_data", "missing_moments"]) if (body[key] !== null && body[key] !== undefined) ignored.add(key);
  const text = [...capWarnings(others).map(warningText), ...extra];
  return { ...(ignored.size > 0 ? { ignored_options: [...ignored] } : {}), ...(text.length > 0 ? { warnings: text } : {}) };
}

/** A job's failure as v2 tells it: the stage and error code it can carry (1..6), and the message. */
export interface V2Failure {
  message: string;
  error_code: number;
  status_code: number;
}

/**
 * The v2 body of a failed job: a failure at a stage other than INITIALIZED or PENDING reads as
 * PROCESSING, an error code outside 1..6 as PROCESS_JOB.
 *
 * @example
 * v2FailedBody({ job_id: 1, job_code: "ab" }, { message: "boom", error_code: 9, status_code: 11 });
 * // status_code 10, error_code 2 (PROCESS_JOB)
 */
export function v2FailedBody(ref: V2JobRef, failure: V2Failure): V2FailedBody {
  const stage =
    failure.status_code === LambdaStatus.INITIALIZED || failure.status_code === LambdaStatus.PENDING ? failure.status_code : LambdaStatus.PROCESSING;
  const code = (
    Number.isInteger(failure.error_code) && failure.error_code >= 1 && failure.error_code <= 6 ? failure.error_code : LambdaError.PROCESS_JOB
  ) as V2FailureCode;
  return v2Failed(ref, stage, code, failure.message);
}
