/**
 * The records of the store layer, shared by every store (embedded.ts, pg/): jobs, experiments and
 * their inputs as the service reads them, how job ids' codes are made and compared, the failure a
 * job records when it cannot be processed, and the JSON form of a request's options.
 *
 * - job_code / experiment code: 16 lower-case hex characters of 8 bytes from the system's CSPRNG
 *   (64 random bits, `newCode`), compared in constant time (`sameCode`).
 */
import { randomFillSync, timingSafeEqual } from "node:crypto";
import type { Analysis } from "../../api/options.js";
import type { Dataset } from "../../engine/data.js";
import type { CensorOperator } from "../../engine/options.js";

/** Inputs shared by the jobs of one POST (an experiment's rows share X, y and options). */
export interface JobInput {
  analysis: Analysis;
  data: Dataset;
  thetas: Float64Array[];
  /** Canonical engine options as the caller gave them (parseRequest's `options`). */
  options: Record<string, unknown>;
}

export type JobStatus = "queued" | "running" | "completed" | "failed";

export interface JobFailure {
  message: string;
  /**
   * LambdaError code (docs/api.md section 3): 2 process job (time limit, crash), 3 prediction failed,
   * 5 X could not be loaded (a v2 POST naming an upload that is not there).
   */
  error_code: number;
  /** LambdaStatus of the stage that failed: 10 processing, 1 before processing (payload, X). */
  status_code: number;
}

/** Variants of an analysis a job may run (the v2 `/grid-singularity` endpoints: see singularity.ts). */
export type JobVariant = "grid_singularity";

/** A job as the store serves it (in memory; on disk it is a batch row plus an outcome). */
export interface JobRecord {
  id: number;
  code: string;
  org: string;
  analysis: Analysis;
  status: JobStatus;
  created_at: string;
  started_at?: string;
  finished_at?: string;
  /** Notes from parsing the request (ignored keys ...), shown on the receipt; shared by a request's jobs. */
  warnings: string[];
  /** Set when theta was absent and the last row of X was used. */
  theta_source?: "last_row_of_X";
  experiment_id?: number;
  /** Row of theta this job predicts for (0 for a single job). */
  row: number;
  /** Key of the inputs (JobInput) this job reads. */
  input_ref: string;
  failure?: JobFailure;
  /** The censor operator the job runs with (resolved); v2 reports it as `most_eval`. */
  censor_operator?: CensorOperator;
  /** Set when the job runs a variant of its analysis (v2 `/grid-singularity`). */
  variant?: JobVariant;
  /** Compact yhat and fit (rounded like the results), for the experiment view. */
  compact?: { yhat: Array<number | null>; fit: Array<number | null> };
}

export interface ExperimentRecord {
  id: number;
  code: string;
  org: string;
  analysis: Analysis;
  job_ids: number[];
  created_at: string;
}

/** The names the routes use. */
export type { ExperimentRecord as Experiment, JobRecord as Job };

/** Finished jobs and their results are removed this long after they finish, by default (both stores). */
export const DEFAULT_RETENTION_MS = 7 * 24 * 3600_000;

/** The embedded store without a data dir keeps this many bytes of results in memory, by default. */
export const DEFAULT_RESULT_MEMORY_BYTES = 256 * 1024 * 1024;

/** LambdaError 2 (process job) at LambdaStatus 10 (processing): docs/api.md section 3. */
export const PROCESS_JOB = { error_code: 2, status_code: 10 } as const;

/** Random bytes for codes, drawn from the system's CSPRNG 4 KiB at a time (as crypto.randomUUID buffers its own), each used once. */
const CODE_BYTES = Buffer.alloc(4096);
let codeAt = CODE_BYTES.length;

/**
 * A new job or experiment code: 16 hex characters of 8 bytes from crypto.randomFillSync (the
 * same bytes as crypto.randomBytes(8), drawn 512 codes at a time: one call into the CSPRNG a
 * code was ~0.05 ms of a warm in-process call).
 *
 * @example
 * newCode(); // "3f9c0a7e5b21d4c8"
 */
export function newCode(): string {
  if (codeAt + 8 > CODE_BYTES.length) {
    randomFillSync(CODE_BYTES);
    codeAt = 0;
  }
  const code = CODE_BYTES.toString("hex", codeAt, codeAt + 8);
  // Not kept once used.
  CODE_BYTES.fill(0, codeAt, codeAt + 8);
  codeAt += 8;
  return code;
}

/**
 * Constant-time comparison of a stored code with one from a URL.
 *
 * @example
 * sameCode(job.code, codeFromUrl); // false for a code of another length, without a timing hint
 */
export function sameCode(stored: string, given: string): boolean {
  const a = Buffer.from(stored, "utf8");
  const b = Buffer.from(given, "utf8");
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Why a job or experiment id answers 410: it existed, and was removed by the retention.
 *
 * @example
 * expiredMessage("job", 12, 7 * 24 * 3600_000); // "job 12 is no longer kept: ... removed 7 day(s) after they finish ..."
 */
export function expiredMessage(kind: "job" | "experiment", id: number, retentionMs: number): string {
  return `${kind} ${id} is no longer kept: finished jobs and their results are removed ${describeMs(retentionMs)} after they finish (rbp serve --retention)`;
}

/** A duration in words: whole days, whole hours, else seconds. */
function describeMs(ms: number): string {
  if (ms % (24 * 3600_000) === 0) return `${ms / (24 * 3600_000)} day(s)`;
  if (ms % 3600_000 === 0) return `${ms / 3600_000} hour(s)`;
  return `${ms / 1000} s`;
}

/** A value (options) as JSON: Float64Arrays as `{ $float64: [...] }`, NaN as null; `decodeValue` reverses it. Shared by the PostgreSQL store. */
export function encodeValue(value: unknown): unknown {
  if (value instanceof Float64Array) return { $float64: Array.from(value, (v) => (Number.isFinite(v) ? v : null)) };
  if (Array.isArray(value)) return value.map(encodeValue);
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, encodeValue(v)]));
  }
  return value;
}

export function decodeValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(decodeValue);
  if (typeof value === "object" && value !== null) {
    const record = value as Record<string, unknown>;
    if (Array.isArray(record.$float64) && Object.keys(record).length === 1) {
      return Float64Array.from(record.$float64 as Array<number | null>, (v) => (v === null ? NaN : v));
    }
    return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, decodeValue(v)]));
  }
  return value;
}
