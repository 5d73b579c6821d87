/**
 * `createClient(options)` -> RbpClient: the calls of the prediction API for notebooks and
 * scripts, the same for v3 and v2.
 *
 * ```ts
 * const client = createClient({ baseUrl: service.url });       // key and access id from CSA_API_KEY / CSA_ACCESS_ID
 * const result = await client.run("grid", { y, X, theta });     // submit, then wait
 * const receipt = await client.submit("psr", { y, X, theta, options: { threshold: [0, 0.5] } });
 * const r = await client.wait(receipt, { onProgress: (p) => console.log(p.status, p.elapsedMs) });
 * ```
 */
import { resolveConfig, type ResolvedConfig } from "./config.js";
import { JobFailedError, JobPendingError, ValidationError } from "./errors.js";
import { groupState } from "./group.js";
import { mapLimit, GROUP_CONCURRENCY } from "../internal/group.js";
import { Transport } from "./http.js";
import { pollUntil, type PollCheck } from "./polling.js";
import { prepareRequest, X_LIMIT_BYTES } from "./prepare.js";
import { HOLD_MS, InProcessWire } from "./in-process.js";
import { wantsColumns } from "../api/columns.js";
import type {
  Analysis,
  ApiVersion,
  CallOptions,
  ClientOptions,
  ExperimentProgress,
  ExperimentReceipt,
  ExperimentRow,
  ExperimentRun,
  ExperimentState,
  FieldValue,
  JobReceipt,
  JobSnapshot,
  PollOptions,
  QuotaStatus,
  Receipt,
  RequestFor,
  Result,
  RunOptions,
  WaitExperimentOptions,
  WaitOptions,
} from "./types.js";
import { V2Wire } from "./v2.js";
import { V3Wire } from "./v3.js";
import { isExperimentReceipt, jobRef, type Wire } from "./wire.js";

/** Creates a client; see ClientOptions for the settings and where their defaults come from. */
export function createClient(options: ClientOptions = {}): RbpClient {
  return new RbpClient(options);
}

export class RbpClient {
  /** The version root the client talks to, e.g. `http://127.0.0.1:8765/v3`. */
  readonly baseUrl: string;
  readonly apiVersion: ApiVersion;
  /** The largest X (bytes of JSON) a POST may carry. */
  readonly xLimitBytes: number = X_LIMIT_BYTES;
  readonly #config: ResolvedConfig;
  readonly #http: Transport;
  readonly #wire: Wire;

  constructor(options: ClientOptions = {}) {
    this.#config = resolveConfig(options);
    this.baseUrl = this.#config.baseUrl;
    this.apiVersion = this.#config.apiVersion;
    this.#http = new Transport(this.#config);
    this.#wire =
      this.#config.apiVersion !== "v3"
        ? new V2Wire(this.#http)
        : options.inProcess !== undefined
          ? new InProcessWire(this.#http, options.inProcess, this.#config.maxResponseBytes)
          : new V3Wire(this.#http);
  }

  /**
   * Validates the request locally (nothing is sent when it is invalid) and POSTs it: a job
   * receipt for one circumstance, an experiment receipt for several theta rows (v2: one job per
   * row, grouped by the client). Each job costs one quota unit. Never re-sent once it may have
   * reached the service.
   */
  submit<A extends Analysis>(analysis: A, request: RequestFor<A> & { theta?: number[] }, call?: CallOptions): Promise<JobReceipt>;
  submit<A extends Analysis>(analysis: A, request: RequestFor<A>, call?: CallOptions): Promise<Receipt>;
  async submit<A extends Analysis>(analysis: A, request: RequestFor<A>, call: CallOptions = {}): Promise<Receipt> {
    let receipt: Receipt;
    let warnings: string[];
    if (this.#wire instanceof InProcessWire) {
      ({ receipt, warnings } = await this.#wire.submitRequest(analysis, request, this.#config.accessId, call));
    } else {
      const prepared = prepareRequest(analysis, request, { version: this.apiVersion, accessId: this.#config.accessId });
      receipt = await this.#wire.submit(prepared, call);
      warnings = prepared.warnings;
    }
    // Notes of the local parse that the service does not report (v2 has no warnings channel).
    if (this.apiVersion === "v3" && receipt.warnings === undefined && warnings.length > 0) receipt.warnings = [...warnings];
    return receipt;
  }

  /** One read of a job: queued, running or completed (with its Result). Throws JobFailedError for a failed job. */
  status(receipt: JobReceipt, call: CallOptions = {}): Promise<JobSnapshot> {
    return this.#wire.status(jobRef(receipt), call);
  }

  /** The Result of a finished job; JobPendingError when it is still running, JobFailedError when it failed. */
  async result(receipt: JobReceipt, call: CallOptions = {}): Promise<Result> {
    const snap = await this.#wire.status(jobRef(receipt), { ...call, ...this.#columns(call) });
    if (snap.status !== "completed") {
      throw new JobPendingError(`job ${snap.job_id} is still ${snap.status}; use wait() to poll until it finishes`, {
        status: this.apiVersion === "v3" ? 202 : 200,
        jobId: snap.job_id,
        jobStatus: snap.status,
        code: "pending",
      });
    }
    return snap.result;
  }

  /**
   * Polls until the job is no longer running and returns its Result (see polling.ts for the
   * schedule and the Retry-After policy). An experiment receipt waits for every row
   * (waitExperiment).
   */
  wait(receipt: JobReceipt, options?: WaitOptions): Promise<Result>;
  wait(receipt: ExperimentReceipt, options?: WaitExperimentOptions): Promise<ExperimentState>;
  wait(receipt: Receipt, options?: WaitOptions | WaitExperimentOptions): Promise<Result | ExperimentState>;
  wait(receipt: Receipt, options: WaitOptions | WaitExperimentOptions = {}): Promise<Result | ExperimentState> {
    if (isExperimentReceipt(receipt)) return this.waitExperiment(receipt, options as WaitExperimentOptions);
    const job = jobRef(receipt);
    const opts = options as WaitOptions;
    return pollUntil<Result>({
      what: `job ${job.job_id}`,
      jobId: job.job_id,
      schedule: this.#schedule(opts),
      signal: opts.signal,
      timeoutMs: opts.timeoutMs,
      check: async (timeoutMs, signal): Promise<PollCheck<Result>> => {
        const snap = await this.#wire.status(job, { signal, timeoutMs: this.#requestBudget(timeoutMs), ...this.#hold, ...this.#columns(opts) });
        if (snap.status === "completed") return { done: true, value: snap.result, status: "completed" };
        return { done: false, status: snap.status, retryAfterMs: snap.retryAfterMs };
      },
      onPoll: opts.onProgress ? (status, elapsedMs, polls) => opts.onProgress!({ status, elapsedMs, polls }) : undefined,
    });
  }

  /** One value of a finished result, e.g. `yhat` or `insights/relevance` (v2: read from the flat result). */
  field(receipt: JobReceipt, path: string, call: CallOptions = {}): Promise<FieldValue> {
    if (typeof path !== "string" || path.split("/").every((s) => s === "")) {
      throw new ValidationError('path: expected a field path such as "yhat" or "insights/relevance"', { field: "path", local: true });
    }
    return this.#wire.field(jobRef(receipt), path, call);
  }

  /** The parent view of an experiment: each row's status and compact yhat and fit. */
  experiment(receipt: ExperimentReceipt, call: CallOptions = {}): Promise<ExperimentState> {
    return this.#experiment(checkExperiment(receipt), call);
  }

  /** Polls an experiment until every row has finished (completed or failed); per-row progress. */
  waitExperiment(receipt: ExperimentReceipt, options: WaitExperimentOptions = {}): Promise<ExperimentState> {
    const experiment = checkExperiment(receipt);
    const known = new Map<number, ExperimentRow>();
    let last: ExperimentState | undefined;
    return pollUntil<ExperimentState>({
      what: experiment.experiment_id !== null ? `experiment ${experiment.experiment_id}` : `the group of ${experiment.n_rows} jobs`,
      schedule: this.#schedule(options),
      signal: options.signal,
      timeoutMs: options.timeoutMs,
      check: async (timeoutMs, signal): Promise<PollCheck<ExperimentState>> => {
        last = await this.#experiment(experiment, { signal, timeoutMs: this.#requestBudget(timeoutMs), ...this.#hold }, known);
        if (last.status !== "running") return { done: true, value: last, status: "completed" };
        return { done: false, status: "running" };
      },
      onPoll: options.onProgress
        ? (_status, elapsedMs, polls) => {
            const s = last!;
            const progress: ExperimentProgress = { done: s.n_completed + s.n_failed, total: s.n_rows, failed: s.n_failed, rows: s.rows, elapsedMs, polls };
            options.onProgress!(progress);
          }
        : undefined,
    });
  }

  /**
   * Submit, then wait. One circumstance gives its Result; several give an ExperimentRun with
   * every row's full Result (null for a failed row).
   */
  run<A extends Analysis>(analysis: A, request: RequestFor<A> & { theta?: number[] }, options?: RunOptions): Promise<Result>;
  run<A extends Analysis>(analysis: A, request: RequestFor<A>, options?: RunOptions): Promise<Result | ExperimentRun>;
  async run<A extends Analysis>(analysis: A, request: RequestFor<A>, options: RunOptions = {}): Promise<Result | ExperimentRun> {
    const receipt = await this.submit(analysis, request, { signal: options.signal });
    if (!isExperimentReceipt(receipt)) return this.wait(receipt, options);
    const state = await this.waitExperiment(receipt, { ...options, onProgress: options.onExperimentProgress });
    const results = await mapLimit(state.rows, GROUP_CONCURRENCY, async (row) => {
      if (row.status !== "completed") return null;
      try {
        return await this.result({ job_id: row.job_id, job_code: row.job_code }, { signal: options.signal });
      } catch (error) {
        if (error instanceof JobFailedError) return null;
        throw error;
      }
    });
    return { receipt, state, results };
  }

  /** The plan's quota: units, used and remaining (reads cost nothing). */
  quota(call: CallOptions = {}): Promise<QuotaStatus> {
    return this.#wire.quota(call);
  }

  /** Closes the keep-alive connections. The client cannot be used afterwards. */
  close(): Promise<void> {
    return this.#http.close();
  }

  toJSON(): Record<string, unknown> {
    return { baseUrl: this.baseUrl, apiVersion: this.apiVersion };
  }
  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return `RbpClient { baseUrl: '${this.baseUrl}', apiVersion: '${this.apiVersion}' }`;
  }

  #experiment(receipt: ExperimentReceipt, call: CallOptions, known?: Map<number, ExperimentRow>): Promise<ExperimentState> {
    if (receipt.grouped_by === "client" || receipt.experiment_id === null) {
      return groupState((job, c) => this.#wire.status(job, c), receipt, call, known);
    }
    return this.#wire.experiment(receipt, call, known);
  }

  /** In process, for a caller that holds results compactly (`readsColumns` in src/api/columns.ts): a result may come with its long columns held. */
  #columns(options: object): { columns?: boolean } {
    return this.#wire instanceof InProcessWire && wantsColumns(options) ? { columns: true } : {};
  }

  /** What a poll of `wait` adds to its read: in process, the read itself waits for the job (up to HOLD_MS). */
  get #hold(): { holdMs?: number } {
    return this.#wire instanceof InProcessWire ? { holdMs: HOLD_MS } : {};
  }

  #schedule(options: PollOptions): Required<PollOptions> {
    // In process a read waits in the service until the job ends (or HOLD_MS): no delay between reads.
    const base = this.#wire instanceof InProcessWire ? { ...this.#config.poll, initialDelayMs: 0, factor: 1 } : this.#config.poll;
    return {
      initialDelayMs: options.initialDelayMs ?? base.initialDelayMs,
      factor: options.factor ?? base.factor,
      maxDelayMs: options.maxDelayMs ?? base.maxDelayMs,
    };
  }

  /** A poll's request budget: what is left of the wait, within the client's per-call budget. */
  #requestBudget(waitLeft: number | undefined): number {
    return waitLeft === undefined ? this.#config.timeoutMs : Math.min(this.#config.timeoutMs, waitLeft);
  }
}

function checkExperiment(receipt: unknown): ExperimentReceipt {
  if (!isExperimentReceipt(receipt) || receipt.jobs.length === 0) {
    throw new ValidationError("receipt: expected an experiment receipt {experiment_id, experiment_code, jobs} as submit() returns it", {
      field: "receipt",
      expected: "an experiment receipt",
      local: true,
    });
  }
  for (const job of receipt.jobs) jobRef(job);
  return receipt;
}
