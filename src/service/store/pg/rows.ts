/**
 * Rows of the PostgreSQL store as records (records.ts): the job columns every query selects, and
 * inputs' typed arrays as little-endian float64 bytes.
 */
import type { Analysis } from "../../../api/options.js";
import type { CensorOperator } from "../../../engine/options.js";
import type { JobFailure, JobRecord, JobStatus, JobVariant } from "../records.js";

// Inputs: typed arrays as little-endian float64 bytes, options as JSON with Float64Arrays tagged.

export function f64Bytes(values: Float64Array): Buffer {
  const out = Buffer.alloc(values.length * 8);
  for (let i = 0; i < values.length; i++) out.writeDoubleLE(values[i], i * 8);
  return out;
}

export function bytesF64(bytes: Buffer): Float64Array {
  const out = new Float64Array(bytes.length / 8);
  for (let i = 0; i < out.length; i++) out[i] = bytes.readDoubleLE(i * 8);
  return out;
}

export const JOB_COLUMNS = `id, code, org, analysis, status, rbp_iso(created_at) AS created_at, rbp_iso(started_at) AS started_at,
  rbp_iso(finished_at) AS finished_at, warnings, theta_source, experiment_id, row_index, input_id, failure, censor_operator, variant, compact`;

export interface JobRow {
  id: number;
  code: string;
  org: string;
  analysis: Analysis;
  status: JobStatus;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  warnings: string[];
  theta_source: "last_row_of_X" | null;
  experiment_id: number | null;
  row_index: number;
  input_id: number | null;
  failure: JobFailure | null;
  censor_operator: CensorOperator | null;
  variant: JobVariant | null;
  compact: JobRecord["compact"] | null;
}

export function toJob(r: JobRow): JobRecord {
  return {
    id: r.id,
    code: r.code,
    org: r.org,
    analysis: r.analysis,
    status: r.status,
    created_at: r.created_at,
    ...(r.started_at !== null ? { started_at: r.started_at } : {}),
    ...(r.finished_at !== null ? { finished_at: r.finished_at } : {}),
    warnings: r.warnings,
    ...(r.theta_source !== null ? { theta_source: r.theta_source } : {}),
    ...(r.experiment_id !== null ? { experiment_id: r.experiment_id } : {}),
    row: r.row_index,
    input_ref: r.input_id === null ? "" : `i${r.input_id}`,
    ...(r.failure !== null ? { failure: r.failure } : {}),
    ...(r.censor_operator !== null ? { censor_operator: r.censor_operator } : {}),
    ...(r.variant !== null ? { variant: r.variant } : {}),
    ...(r.compact !== null ? { compact: r.compact } : {}),
  };
}
