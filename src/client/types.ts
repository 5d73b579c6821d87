/**
 * The client's public types: plain TypeScript interfaces only (no zod, no undici types), so the
 * declarations type-check in tslab's TypeScript 5.0.
 */
import type { Result } from "../api/result.js";
import type { Settings } from "./settings.js";

export type { Num, Result, ResultGridInsights, ResultGridSearch, ResultSoloStatistics } from "../api/result.js";

export type Analysis = "psr" | "maxfit" | "grid";
export type ApiVersion = "v3" | "v2";

// ---------------------------------------------------------------------------------------------
// Requests (v3 option names; the client writes v2 names itself in v2 mode)

// The option inputs are generated from the option table (src/api/options.ts) into option-types.ts.
import type { GridOptionsInput, MaxFitOptionsInput, PsrOptionsInput } from "./option-types.js";
export type { CommonOptionsInput, GridOptionsInput, MaxFitOptionsInput, PsrOptionsInput, RetainKey } from "./option-types.js";

export interface OptionsInputFor {
  psr: PsrOptionsInput;
  maxfit: MaxFitOptionsInput;
  grid: GridOptionsInput;
}

/** A prediction request: outcomes, attributes, circumstances and options. */
export interface PredictionRequest<O> {
  /** N outcomes (finite numbers). */
  y: number[];
  /** N rows of K attributes; null (or NaN) is a missing value. N must be greater than K. */
  X: Array<Array<number | null>>;
  /**
   * One circumstance (K numbers), or several rows of K numbers: several rows make an
   * experiment, one job per row (one quota unit each). Grid may leave it out (last row of X).
   */
  theta?: number[] | number[][];
  options?: O;
  /** The user access id for this request; default: the client's (CSA_ACCESS_ID). */
  accessId?: string;
}

export type PsrRequest = PredictionRequest<PsrOptionsInput>;
export type MaxFitRequest = PredictionRequest<MaxFitOptionsInput>;
export type GridRequest = PredictionRequest<GridOptionsInput>;
export type RequestFor<A extends Analysis> = PredictionRequest<OptionsInputFor[A]>;

// ---------------------------------------------------------------------------------------------
// Receipts and states

/** A job: what a POST with one circumstance returns. */
export interface JobReceipt {
  job_id: number;
  job_code: string;
  /** Notes from the service (and, in v2 mode, from the client's option mapping). */
  warnings?: string[];
  /** `last_row_of_X` when theta was left out (Grid). */
  theta_source?: string;
}

export interface ExperimentJob {
  row: number;
  job_id: number;
  job_code: string;
}

/** Several circumstances: one job per row. */
export interface ExperimentReceipt {
  /** null for a v2 group (v2 has no experiments: the client posts one job per row). */
  experiment_id: number | null;
  experiment_code: string | null;
  n_rows: number;
  jobs: ExperimentJob[];
  warnings?: string[];
  /** `service` (a v3 experiment) or `client` (v2: rows posted one by one and grouped here). */
  grouped_by: "service" | "client";
}

export type Receipt = JobReceipt | ExperimentReceipt;

export type JobStatus = "queued" | "running" | "completed" | "failed";

/** One read of a job. A failed job is thrown as JobFailedError instead. */
export type JobSnapshot =
  | { status: "queued" | "running"; job_id: number; job_code: string; retryAfterMs?: number }
  | { status: "completed"; job_id: number; job_code: string; result: Result; raw: unknown };

/** `field(receipt, path)`: one value of a finished result. */
export interface FieldValue {
  /** The path asked for, e.g. `insights/relevance`. */
  field: string;
  /** Where it is in the result object, e.g. `$.results.insights.relevance`. */
  json_path: string;
  /** Dimensions: [] for a scalar, [N], [N, T], ...; null for an object (a group of fields). */
  shape: number[] | null;
  values: unknown;
}

export interface ExperimentRow {
  row: number;
  job_id: number;
  job_code: string;
  status: JobStatus;
  /** Compact results of a completed row (null otherwise). */
  yhat: Array<number | null> | null;
  fit: Array<number | null> | null;
  /** A failed row: the service's reason and LambdaError code. */
  message?: string;
  error_code?: number;
}

export type ExperimentStatus = "running" | "completed" | "partial_failed" | "failed";

/** The parent view of an experiment (or of a v2 group). */
export interface ExperimentState {
  experiment_id: number | null;
  experiment_code: string | null;
  status: ExperimentStatus;
  n_rows: number;
  n_completed: number;
  n_failed: number;
  rows: ExperimentRow[];
}

/** `run` on several circumstances: the final parent view and every row's full result. */
export interface ExperimentRun {
  receipt: ExperimentReceipt;
  state: ExperimentState;
  /** By row; null for a failed row (its reason is in `state.rows[i].message`). */
  results: Array<Result | null>;
}

export interface QuotaStatus {
  /** Units of the plan (one per job; an experiment costs one per row). */
  quota: number;
  used: number;
  remaining: number;
  unit?: string;
  period_start?: string;
  period_end?: string;
}

// ---------------------------------------------------------------------------------------------
// Call options

export interface CallOptions {
  /** Aborts the call (and any request in flight) with AbortError. */
  signal?: AbortSignal;
  /** Time budget of the call, retries included; default: the client's timeoutMs. */
  timeoutMs?: number;
  /** Retries of a read; default: the client's maxRetries. */
  maxRetries?: number;
}

export interface PollOptions {
  /** First delay after an unfinished read (ms); default 10. */
  initialDelayMs?: number;
  /** Growth of the delay per poll; default 1.5. */
  factor?: number;
  /** Longest delay between two polls (ms); default 2000. */
  maxDelayMs?: number;
}

export interface WaitProgress {
  status: JobStatus;
  elapsedMs: number;
  polls: number;
}

export interface ExperimentProgress {
  done: number;
  total: number;
  failed: number;
  rows: ExperimentRow[];
  elapsedMs: number;
  polls: number;
}

export interface WaitOptions extends PollOptions {
  signal?: AbortSignal;
  /** Give up waiting after this long (TimeoutError, phase "wait"); the job goes on. Default: none. */
  timeoutMs?: number;
  onProgress?: (progress: WaitProgress) => void;
}

export interface WaitExperimentOptions extends PollOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  onProgress?: (progress: ExperimentProgress) => void;
}

export interface RunOptions extends WaitOptions {
  /** Per-row progress when the request makes an experiment. */
  onExperimentProgress?: (progress: ExperimentProgress) => void;
}

// ---------------------------------------------------------------------------------------------
// Client options

export interface ClientOptions {
  /**
   * The service root (`http://127.0.0.1:8765`) or a version root (`.../v3`,
   * `.../v3/prediction-engine`, `.../v2/prediction-engine`). Default: RBP_BASE_URL or
   * CSA_BASE_URL (environment, then .env).
   */
  baseUrl?: string;
  /** Organisation API key, sent as x-api-key. Default: CSA_API_KEY. */
  apiKey?: string;
  /** User access id, sent in POST bodies. Default: CSA_ACCESS_ID. */
  accessId?: string;
  /** Default: RBP_API_VERSION, else taken from a version root in baseUrl, else v3. */
  apiVersion?: ApiVersion;
  /** Time budget of one call (retries included), in ms; default 60000. */
  timeoutMs?: number;
  /** Retries of a read (GET) on connection errors, 5xx and 429; default 2. POSTs: see README. */
  maxRetries?: number;
  /** First backoff delay of a retry (ms, before jitter); default 500. */
  retryBaseDelayMs?: number;
  /** Largest backoff delay (ms); default 8000. */
  retryMaxDelayMs?: number;
  /** A Retry-After longer than this (ms) is not waited for: the error is thrown; default 60000. */
  maxRetryAfterMs?: number;
  /**
   * Largest response body read, in bytes; default 128 MiB. A larger answer is not read (nothing
   * beyond the limit is buffered) and the call throws ApiError with code "response_too_large",
   * saying what to fetch instead (a single field of the result).
   */
  maxResponseBytes?: number;
  /** Default polling schedule of wait(). */
  poll?: PollOptions;
  /** Environment to read defaults from; default process.env. */
  env?: Record<string, string | undefined>;
  /** The .env file to read; default `.env` in the working directory; false: none. */
  envFile?: string | false;
  /**
   * Settings already read by `readSettings` (key, access id, base URL, version): nothing is read
   * again, and apiKey, accessId, baseUrl, apiVersion, env and envFile must then be left out.
   */
  settings?: Settings;
  /** One line per request and retry (no secrets); default: none. */
  log?: (line: string) => void;
  /**
   * v3 only: the service runs in this process (the notebook's embedded service), and this reaches
   * its routes without HTTP (in-process.ts). What the calls answer and throw is unchanged; a request
   * JSON would not carry unchanged, and a field read, still go over HTTP to `baseUrl`.
   */
  inProcess?: InProcessEndpoint;
}

/** One reply of the service's v3 route, in process: the HTTP status, the JSON body, its headers. */
export interface InProcessReply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** GET a completed job: the stored `results` JSON text (the body then holds the envelope's other members). */
  results?: string;
  /**
   * With `results`, when the service has it: the value JSON.parse reads from `results` (a fresh
   * value, the caller's). Without `results`: the result as JSON.parse will read its text, which the
   * service has not written yet (it then answers `resultsBytesAtMost` and `scan`).
   */
  readonly parsed?: unknown;
  /**
   * With `parsed`: the same value with its long columns held (`HeldColumn`), for a reader that
   * holds results compactly (read instead of `parsed`, not beside it).
   */
  columns?: () => unknown;
  /** With `parsed` but no `results`: at least the length of the text `results` will be. */
  resultsBytesAtMost?: number;
  /** With `parsed` but no `results`: the JSON of every string and key of the result (what a scrub of secrets reads). */
  scan?: string;
}

/**
 * The v3 routes of a service that runs in this process, as the in-process wire calls them. Every
 * method answers what the route would (a refusal as its status and error body), never throws a
 * refusal.
 */
export interface InProcessEndpoint {
  /** The service's largest POST body in bytes: a request that could be larger goes over HTTP. */
  readonly maxBodyBytes: number;
  /**
   * POST /v3/{analysis} of a request already parsed by the service's parser (`ParsedRequest` of
   * src/api, from values JSON keeps unchanged; typed `object` so that the public declarations
   * stay free of the parser's types).
   */
  submit(request: object): Promise<InProcessReply>;
  /** GET /v3/results/{id}/{code}, first waiting up to `holdMs` for the job to end. */
  job(jobId: number, jobCode: string, holdMs: number, signal?: AbortSignal): Promise<InProcessReply>;
  /** GET /v3/experiments/{id}/{code}, first waiting up to `holdMs` for its first unfinished row to end. */
  experiment(experimentId: number, experimentCode: string, holdMs: number, signal?: AbortSignal): Promise<InProcessReply>;
  /** GET /v3/quota. */
  quota(): Promise<InProcessReply>;
}
