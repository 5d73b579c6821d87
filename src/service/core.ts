/**
 * The prediction service without HTTP: credentials, quota, the job store, persistence and the
 * worker pool, and the two things every API version does with them: `submit` (a validated
 * request becomes paid-for, saved, scheduled jobs) and reading a job's result.
 * Route tables (v3.ts, and v2.ts) translate HTTP to these calls.
 */
import type { ParsedRequest } from "../api/request.js";
import { Authenticator } from "./auth.js";
import type { Credentials, Org } from "./credentials.js";
import { MiB, ServiceError } from "./http.js";
import type { Analysis } from "../api/options.js";
import { JobStore, type Experiment, type Job, type JobFailure, type JobVariant, type NewJobs } from "./jobs.js";
import { MemoryPersistence, type Persistence } from "./persistence.js";
import { ERROR_PROCESS_JOB, PoolJobError, PoolClosedError, STATUS_PROCESSING, WorkerPool, type PoolSettings } from "./pool.js";
import { QuotaLedger } from "./quota.js";

export interface ServiceConfig {
  /** Decimal places of result numbers; null = full precision. Default 6. */
  decimals: number | null;
  /** Largest POST body in bytes. Default 10 MiB. */
  maxBodyBytes: number;
  /** Largest single-field value in bytes. Default 4 MiB. */
  maxFieldBytes: number;
  /** Time limit of one job in milliseconds. Default 600000. */
  jobTimeoutMs: number;
  /** Worker threads. Default: available parallelism. */
  workers: number | undefined;
  /**
   * v2 GET /results holds a running job's request this long, at most (api-compat.md 2.2). The
   * official client reads a job with three GETs, 1 s and 5 s apart, then gives up: it sees a job
   * finish that takes up to 3 x this + 6 s. Default 240000: every job that ends within the default
   * time limit (600 s) is seen, and one GET stays under the client's 300 s request timeout.
   */
  v2LongPollMs: number;
  /** How long an uploaded X is kept (v2 upload flow, api-compat.md 2.3). Default 24 h. */
  uploadTtlMs: number;
  /** How long a signed upload URL stays valid. Default 1 h. */
  uploadUrlTtlMs: number;
  /** Largest uploaded X in bytes. Default 256 MiB. */
  maxUploadBytes: number;
  /** Total bytes of uploaded matrices kept in memory (least recently used go first). Default 1 GiB. */
  maxUploadStoreBytes: number;
  /** Absolute root URL the upload URLs point at (e.g. behind a proxy); default: the request's Host. */
  publicUrl: string | undefined;
}

export const DEFAULT_CONFIG: ServiceConfig = {
  decimals: 6,
  maxBodyBytes: 10 * MiB,
  maxFieldBytes: 4 * MiB,
  jobTimeoutMs: 600_000,
  workers: undefined,
  v2LongPollMs: 240_000,
  uploadTtlMs: 24 * 3600_000,
  uploadUrlTtlMs: 3600_000,
  maxUploadBytes: 256 * MiB,
  maxUploadStoreBytes: 1024 * MiB,
  publicUrl: undefined,
};

export interface ServiceSettings {
  credentials: Credentials;
  persistence?: Persistence;
  config?: Partial<ServiceConfig>;
  /** Starts a pool worker (tests); default worker.ts. */
  spawn?: PoolSettings["spawn"];
  /** Operational messages (never secrets). */
  log?: (line: string) => void;
}

export interface Submission extends NewJobs {
  warnings: string[];
}

export interface SubmitSettings {
  /** Run a variant of the analysis (v2 `/grid-singularity`). */
  variant?: JobVariant;
}

export class PredictionService {
  readonly auth: Authenticator;
  readonly quota: QuotaLedger;
  readonly jobs: JobStore;
  readonly config: ServiceConfig;
  private readonly persistence: Persistence;
  private readonly pool: WorkerPool;
  private readonly log: (line: string) => void;
  private readonly resultCache = new LruCache<number, string>(64 * MiB, (s) => s.length);
  private readonly parsedCache = new LruCache<number, unknown>(4, () => 1);
  private closing: Promise<void> | undefined;
  private readonly waiters = new Map<number, Set<() => void>>();

  private constructor(settings: ServiceSettings, persistence: Persistence, usedQuota: Record<string, number>) {
    this.config = { ...DEFAULT_CONFIG, ...definedOnly(settings.config ?? {}) };
    this.persistence = persistence;
    this.log = settings.log ?? (() => {});
    this.auth = new Authenticator(settings.credentials);
    this.quota = new QuotaLedger(new Map(settings.credentials.orgs.map((o) => [o.name, o.quota])), usedQuota);
    this.jobs = new JobStore(persistence);
    this.pool = new WorkerPool({ size: this.config.workers, timeoutMs: this.config.jobTimeoutMs, spawn: settings.spawn });
  }

  /** Opens the service: loads what the persistence holds and queues unfinished jobs again. */
  static async open(settings: ServiceSettings): Promise<PredictionService> {
    const persistence = settings.persistence ?? new MemoryPersistence();
    const loaded = await persistence.load();
    const service = new PredictionService(settings, persistence, loaded.state?.quota_used ?? {});
    const unfinished = service.jobs.restore(loaded);
    if (unfinished.length > 0) service.log(`re-queueing ${unfinished.length} job(s) interrupted by the last stop`);
    for (const job of unfinished) service.schedule(job);
    return service;
  }

  /**
   * Pays for and creates the jobs of a validated request (one per theta row), saves them, and
   * schedules them. Throws 429 when the quota cannot pay; then nothing is created or spent.
   */
  async submit(org: Org, request: ParsedRequest, settings: SubmitSettings = {}): Promise<Submission> {
    const units = request.thetas.length;
    this.reserve(org, units);
    let created: NewJobs | undefined;
    try {
      created = this.jobs.create(
        org.name,
        request.analysis,
        { analysis: request.analysis, data: request.data, thetas: request.thetas, options: request.options as Record<string, unknown> },
        {
          warnings: request.warnings,
          thetaSource: request.thetaGiven ? undefined : "last_row_of_X",
          censorOperator: request.resolved.censor_operator,
          variant: settings.variant,
        },
      );
      await this.jobs.persistCreated(created);
      await this.saveState();
    } catch (error) {
      this.quota.refund(org.name, units);
      if (created) this.jobs.discard(created);
      void this.saveState().catch(() => undefined);
      throw error;
    }
    for (const job of created.jobs) this.schedule(job);
    return { ...created, warnings: request.warnings };
  }

  /**
   * Pays for one job that failed before it could run and records it as failed (v2: a POST whose
   * uploaded X is not there answers a receipt, and the job reads as failed with error_code 5,
   * api-compat.md 2.3). Throws 429 like `submit` when the quota cannot pay.
   */
  async submitFailed(org: Org, analysis: Analysis, failure: JobFailure, settings: SubmitSettings & { warnings?: string[] } = {}): Promise<Job> {
    this.reserve(org, 1);
    const job = this.jobs.createFailed(org.name, analysis, failure, { warnings: settings.warnings, variant: settings.variant });
    try {
      await this.jobs.persistJob(job);
      await this.saveState();
    } catch (error) {
      this.quota.refund(org.name, 1);
      this.jobs.discardJob(job);
      void this.saveState().catch(() => undefined);
      throw error;
    }
    return job;
  }

  /** Takes `units` of the organisation's quota or throws the 429 (nothing taken). */
  private reserve(org: Org, units: number): void {
    const reservation = this.quota.reserve(org.name, units);
    if (!reservation.ok) {
      const { quota, used, remaining } = reservation.status;
      throw new ServiceError(
        429,
        "quota_exceeded",
        `Limit Exceeded: this request costs ${units} unit${units === 1 ? "" : "s"} and the plan has ${remaining} left (quota ${quota}, used ${used})`,
        { extra: { quota, used, remaining, required: units, unit: "prediction_task" } },
      );
    }
  }

  /** The `results` JSON of a completed job. */
  async resultJson(job: Job): Promise<string> {
    const cached = this.resultCache.get(job.id);
    if (cached !== undefined) return cached;
    const json = await this.persistence.loadResult(job.id);
    if (json === undefined) {
      throw new ServiceError(500, "result_missing", `the result of job ${job.id} is missing from the service's storage`);
    }
    this.resultCache.set(job.id, json);
    return json;
  }

  /** The `results` object of a completed job (parsed; the last few are kept). */
  async resultObject(job: Job): Promise<unknown> {
    const cached = this.parsedCache.get(job.id);
    if (cached !== undefined) return cached;
    const value: unknown = JSON.parse(await this.resultJson(job));
    this.parsedCache.set(job.id, value);
    return value;
  }

  /**
   * Resolves once the job is completed or failed, or after `timeoutMs`, whichever is first: for
   * reads that hold a request open while a job runs (the v2 GET /results long-poll). An aborted
   * `signal` (the caller went away) ends the wait at once.
   */
  waitForJob(job: Job, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (job.status === "completed" || job.status === "failed" || timeoutMs <= 0 || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const waiting = this.waiters.get(job.id) ?? new Set<() => void>();
      this.waiters.set(job.id, waiting);
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        waiting.delete(done);
        if (waiting.size === 0 && this.waiters.get(job.id) === waiting) this.waiters.delete(job.id);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      signal?.addEventListener("abort", done, { once: true });
      waiting.add(done);
    });
  }

  experimentJobs(experiment: Experiment): Job[] {
    return experiment.job_ids.map((id) => this.jobs.get(id)).filter((j): j is Job => j !== undefined);
  }

  /** Stops the workers and waits for pending writes. Unfinished jobs stay queued in a data dir. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.pool.close();
      for (const waiting of this.waiters.values()) for (const wake of [...waiting]) wake();
      await this.saveState().catch(() => undefined);
      await this.persistence.flush();
    })();
    return this.closing;
  }

  private saveState(): Promise<void> {
    return this.persistence.saveState(() => ({ version: 1, ...this.jobs.counters(), quota_used: this.quota.snapshot() }));
  }

  private schedule(job: Job): void {
    void this.execute(job).catch((error: unknown) => {
      this.log(`job ${job.id}: bookkeeping failed: ${error instanceof Error ? error.message : String(error)}`);
    });
  }

  private async execute(job: Job): Promise<void> {
    try {
      await this.executeOnce(job);
    } finally {
      if (job.status === "completed" || job.status === "failed") for (const wake of [...(this.waiters.get(job.id) ?? [])]) wake();
    }
  }

  private async executeOnce(job: Job): Promise<void> {
    const input = await this.jobs.input(job).catch((error: unknown) => {
      this.log(`job ${job.id}: its inputs could not be read: ${error instanceof Error ? error.message : String(error)}`);
      return undefined;
    });
    if (!input) {
      await this.jobs.fail(job, { message: "interrupted by a restart, and its inputs were lost", error_code: ERROR_PROCESS_JOB, status_code: STATUS_PROCESSING });
      return;
    }
    const task = {
      id: job.id,
      analysis: input.analysis,
      y: input.data.y,
      X: input.data.X,
      rows: input.data.rows,
      cols: input.data.cols,
      theta: input.thetas[job.row],
      options: input.options,
      decimals: this.config.decimals,
      ...(job.variant ? { variant: job.variant } : {}),
    };
    try {
      const done = await this.pool.run(task, () => this.jobs.markRunning(job));
      this.resultCache.set(job.id, done.json);
      await this.jobs.complete(job, done.json, { yhat: done.yhat, fit: done.fit });
    } catch (error) {
      if (error instanceof PoolClosedError) return;
      const failure =
        error instanceof PoolJobError
          ? error.failure
          : { message: error instanceof Error ? error.message : String(error), error_code: ERROR_PROCESS_JOB, status_code: STATUS_PROCESSING };
      await this.jobs.fail(job, failure);
    }
  }
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** A small least-recently-used cache bounded by a total weight. */
class LruCache<K, V> {
  private readonly map = new Map<K, V>();
  private total = 0;

  constructor(
    private readonly capacity: number,
    private readonly weigh: (value: V) => number,
  ) {}

  get(key: K): V | undefined {
    const value = this.map.get(key);
    if (value === undefined) return undefined;
    this.map.delete(key);
    this.map.set(key, value);
    return value;
  }

  set(key: K, value: V): void {
    const old = this.map.get(key);
    if (old !== undefined) {
      this.total -= this.weigh(old);
      this.map.delete(key);
    }
    const weight = this.weigh(value);
    if (weight > this.capacity) return;
    this.map.set(key, value);
    this.total += weight;
    for (const [k, v] of this.map) {
      if (this.total <= this.capacity) break;
      this.map.delete(k);
      this.total -= this.weigh(v);
    }
  }
}
