/**
 * What a client is told when its job failed: a stable, readable reason, never the text of an
 * internal error (`EMFILE: too many open files, open '/srv/rbp/jobs/...'`, `RangeError: Set maximum
 * size exceeded`), which names server paths and implementation details. The detail goes to the
 * service's log instead (issue 11, item 9).
 *
 * Kept as they are: the engine's own refusals and computation errors (ComputationError,
 * InvalidInputError: they name the option to change), the time limit, and the service's own
 * sentences about a job (its X upload was missing, its inputs were lost in a restart). Everything
 * else becomes one of the sentences below, chosen by what happened.
 */
import type { JobFailure } from "./store/records.js";

/** A failure as clients see it, and the original text when it was replaced (for the log). */
export interface PublicFailure {
  failure: JobFailure;
  /** The internal text that was replaced; undefined when the reason was already public. */
  detail?: string;
}

const SEE_LOG = "the service's log has the detail";

/** Internal reasons by their start: what a client is told instead. */
const REPLACED: ReadonlyArray<[RegExp, string]> = [
  [/^the worker running it crashed\b/, `the worker running the job stopped unexpectedly (it may have run out of memory); ${SEE_LOG}`],
  [/^the job could not be sent to a worker\b/, `the job could not be handed to a worker; ${SEE_LOG}`],
  [/^(no worker could be started|a worker could not be started|a new worker)\b/, `no worker could be started to run the job; ${SEE_LOG}`],
  // `${name}: ${message}` of an engine error that is not one of its own (pool.ts).
  [/^(Range|Type|Reference|Syntax|Eval|URI|Aggregate|Internal)?Error\b/, `the computation failed with an internal error; ${SEE_LOG}`],
];

/** Reasons that are public as they are (the service's own sentences). */
const PUBLIC: readonly RegExp[] = [
  /^the job exceeded its time limit of [\d.]+ s$/,
  /^the worker running it exited unexpectedly \(exit code -?\d+\)$/,
  /^interrupted by a restart\b/,
  /^Failed to load X_matrix input: /,
  /^its result could not be stored(: the service's storage is full)?$/,
];

/** Longest reason a client is sent. */
const MAX_REASON_CHARS = 1000;

/**
 * The failure as a client may see it. `error_code` 3 (the prediction failed) with no internal
 * error name is the engine's own message and kept; other texts are matched against the known
 * internal reasons; anything unknown becomes a generic reason (the text goes to the log).
 *
 * @example
 * publicFailure({ message: "EMFILE: too many open files, open '/data/x'", error_code: 2, status_code: 10 }).failure.message;
 * // "the service could not run or record the job (an internal error); the service's log has the detail"
 */
export function publicFailure(failure: JobFailure): PublicFailure {
  const message = failure.message;
  for (const [pattern, replacement] of REPLACED) {
    if (pattern.test(message)) return message === replacement ? { failure } : { failure: { ...failure, message: replacement }, detail: message };
  }
  if (PUBLIC.some((p) => p.test(message)) || REPLACED.some(([, r]) => r === message) || message === GENERIC) return { failure };
  if (failure.error_code === 3 && !looksInternal(message)) {
    return message.length <= MAX_REASON_CHARS ? { failure } : { failure: { ...failure, message: `${message.slice(0, MAX_REASON_CHARS)}...` } };
  }
  return { failure: { ...failure, message: GENERIC }, detail: message };
}

const GENERIC = `the service could not run or record the job (an internal error); ${SEE_LOG}`;

/** A file path, an errno code or a stack frame: text from inside the server. */
function looksInternal(message: string): boolean {
  return /(^|[\s'"(])\/[^\s'"]+\/[^\s'"]+/.test(message) || /\b(E[A-Z]{3,}|ERR_[A-Z_]+)\b/.test(message) || /\n\s+at /.test(message);
}
