/**
 * The prediction service without HTTP: credentials, the store it is given (store/contract.ts:
 * jobs, results, quota; which store is in use is not known here) and the worker pool, and the two things every API
 * version does with them: `submit` (a validated request becomes paid-for, saved, queued jobs)
 * and reading a job's result. Queued jobs go to the pool as it has free workers, in the order
 * the store's `claim` gives (fair across organisations).
 *
 * A large Grid spreads over the workers that are free when it starts (worker.ts: a "lead" part and
 * "draw" parts drawing chunks from one shared counter, threads/chunk-share.ts; the lead merges them
 * in chunk order: the result is bit-identical whatever the number of workers). The borrowed workers go back to the
 * queue as soon as another job is waiting: the pump claims that job and asks the Grid's helpers
 * to stop after their current chunk, so others still get their turn. An experiment's Grid rows
 * go to a worker several at a time (up to `experimentRowsPerTask` and about a second of work,
 * taken as one turn of the organisation: store/contract.ts `claimSiblings`), sharing what does not
 * depend on theta.
 * A small Grid that a client in this process submits (the lane's endpoint, `inline`) runs its lead
 * part on this thread instead, one worker helping (inline.ts): the same job, two wake-ups fewer.
 * Such a job is claimed by id when submitted (`startInline`), whether or not a worker is free.
 * Route tables (v3.ts, and v2.ts) translate HTTP to these calls.
 */
import type { ParsedRequest } from "../api/request.js";
import { Authenticator } from "./auth.js";
import type { Credentials, Org } from "./credentials.js";
import type { Analysis } from "../api/options.js";
import { DEFAULT_RESULT_MEMORY_BYTES, DEFAULT_RETENTION_MS, type Experiment, type Job, type JobFailure, type JobVariant } from "./store/records.js";
import { jobFailureOf, poolFailure, taskOfClaimed, WorkerPool, type PoolSettings } from "./pool.js";
import { helperParts, runInline, type InlineDone } from "./inline.js";
import type { WorkerDecoded, WorkerDone, WorkerRows, WorkerTask } from "./worker.js";
import { decodedOutline, readDecoded, type Decoded } from "./encode.js";
import { SHARE } from "../threads/chunk-share.js";
import type { QuotaStatus } from "./quota.js";
import type { ResolvedField } from "./fields.js";
import type { Claimed, Created, Store } from "./store/contract.js";
import { storageError, storeErrorCode, type QuotaExceededError, type StorageBusyError, type StorageFullError } from "./store/errors.js";
import { ServiceRefusal } from "./refusals.js";
import { publicFailure } from "./reasons.js";
import { outageReply } from "./outage.js";
import { DEFAULT_LIMITS, jobWork, MiB, type ServiceLimits } from "./limits.js";

/** A Grid spreads over free workers from this much work on: rows x 2^min(attributes, 14) (14: the sampled default's scale). */
export const SPREAD_GRID_MIN_WORK = 500_000;

/** Default most rows of an experiment's Grid in one worker task (ServiceConfig.experimentRowsPerTask). */
export const EXPERIMENT_ROWS_PER_TASK = 64;

/**
 * An experiment's task holds rows up to this many rows x cells x N in all (at least one row):
 * about a second of one core at the engine's 4 to 6 ns per cell and row on a 2-core laptop, so a
 * turn of the organisation stays short while the rows still share most of their work.
 */
export const EXPERIMENT_TASK_WORK = 200_000_000;

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
   * v2 GET /results holds a running job's request this long, at most (docs/api.md section 3). The
   * official client reads a job with three GETs, 1 s and 5 s apart, then gives up: it sees a job
   * finish that takes up to 3 x this + 6 s. Default 240000: every job that ends within the default
   * time limit (600 s) is seen, and one GET stays under the client's 300 s request timeout.
   */
  v2LongPollMs: number;
  /** How long an uploaded X is kept (v2 upload flow, docs/api.md section 3). Default 24 h. */
  uploadTtlMs: number;
  /** How long a signed upload URL stays valid. Default 1 h. */
  uploadUrlTtlMs: number;
  /** Largest uploaded X in bytes. Default 256 MiB. */
  maxUploadBytes: number;
  /** Total bytes of uploaded matrices kept in memory (least recently used go first). Default 1 GiB. */
  maxUploadStoreBytes: number;
  /** Absolute root URL the upload URLs point at (e.g. behind a proxy); default: the listening address. */
  publicUrl: string | undefined;
  /** Finished jobs and their results are removed this long after they finish. Default 7 days. */
  retentionMs: number;
  /** Without a data dir: bytes of results kept in memory (least recently used go first). Default 256 MiB. */
  maxResultMemoryBytes: number;
  /** Limits on the work of one request, checked at POST (limits.ts, docs/limits.md). */
  limits: ServiceLimits;
  /**
   * Most Grid rows of one experiment run together in one worker task, sharing what does not
   * depend on theta (engine `gridExperiment`), taken as one turn of the organisation. A task holds
   * fewer when its rows would exceed `experimentTaskWork` (rows x N x cells; about a second of one
   * core), so another organisation's job waits at most about that long per worker, and fewer
   * toward the end of an experiment so that every worker gets a share. Default
   * EXPERIMENT_ROWS_PER_TASK; 1: one row per task (no sharing).
   */
  experimentRowsPerTask: number;
  /** The work bound of an experiment's task above: rows x N x cells. Default EXPERIMENT_TASK_WORK. */
  experimentTaskWork: number;
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
  retentionMs: DEFAULT_RETENTION_MS,
  maxResultMemoryBytes: DEFAULT_RESULT_MEMORY_BYTES,
  limits: DEFAULT_LIMITS,
  experimentRowsPerTask: EXPERIMENT_ROWS_PER_TASK,
  experimentTaskWork: EXPERIMENT_TASK_WORK,
};

export interface ServiceSettings {
  credentials: Credentials;
  /** Where jobs, results and quota live (the composition root opens it: index.ts, or a test). */
  store: Store;
  config?: Partial<ServiceConfig>;
  /** Starts a pool worker (tests); default worker.ts. */
  spawn?: PoolSettings["spawn"];
  /** Operational messages (never secrets). */
  log?: (line: string) => void;
}

export interface Submission extends Created {
  warnings: string[];
}

export interface SubmitSettings {
  /** Run a variant of the analysis (v2 `/grid-singularity`). */
  variant?: JobVariant;
  /**
   * Keep each job's result decoded as well, for one `takeDecoded` (a reader in this process: the
   * lane's endpoint), so that it need not parse the JSON the worker wrote in its own thread.
   */
  decoded?: boolean;
  /**
   * Run each job on this thread when it is a small Grid (inline.ts `runsInline` decided so): for a
   * client in this process only (the lane's endpoint), never for a server's clients.
   */
  inline?: boolean;
}

/** At most this many decoded results wait for their reader (`takeDecoded`); the oldest goes first. */
const DECODED_KEPT = 8;

export class PredictionService {
  readonly auth: Authenticator;
  readonly config: ServiceConfig;
  readonly store: Store;
  private readonly pool: WorkerPool;
  private readonly log: (line: string) => void;
  private closing: Promise<void> | undefined;
  private readonly waiters = new Map<number, Set<() => void>>();
  /** Waits that also end when the job's result is ahead of its text (`waitForJob` with `orAhead`). */
  private readonly aheadWaiters = new Map<number, Set<() => void>>();
  private pumping = false;
  private pumpAgain = false;
  /**
   * The last pump stopped for want of a worker, not of a job: it runs again when any pool task
   * ends (`onTaskEnd`), not only a job's. A worker can be freed by a task that is no job: the
   * warm-up's Grid, or a helper that ends its chunk after its Grid is done. Pumped only at a job's
   * end, a job submitted meanwhile waited for the next job's end: none when it was the only one
   * (an inline Grid submitted while the warm-up held every worker, in Deno's kernel).
   */
  private starved = false;
  /** Counters of running Grids whose helpers can be asked back (Int32 1 set to 1). */
  private readonly lending = new Set<Int32Array>();
  /** Rows x cells of a job of each stored input seen by `siblings`. */
  private readonly jobWorks = new WeakMap<Claimed["input"], number>();
  /** Jobs whose result is to be kept decoded (SubmitSettings.decoded), until they run. */
  private readonly decodeFor = new Set<number>();
  /** Small Grids to run on this thread (SubmitSettings.inline), until they run. */
  private readonly inlineFor = new Set<number>();
  /** Decoded results of finished jobs, until `takeDecoded` (at most DECODED_KEPT). */
  private readonly decoded = new Map<number, Decoded>();
  /**
   * Jobs whose result reached this process decoded while their worker still writes its text
   * (worker.ts `WorkerDecoded`): when they ended, and the store's completion. Only the lane's
   * endpoint reads such a job before the store has it (`takeAhead`); every other read waits.
   */
  private readonly ahead = new Map<number, { finishedAt: string; stored: Promise<void> }>();
  private readonly retention: NodeJS.Timeout | undefined;
  /** A job was handed to the pool: warm() stops after its current round. */
  private jobsStarted = false;

  private constructor(settings: ServiceSettings, store: Store) {
    this.config = { ...DEFAULT_CONFIG, ...definedOnly(settings.config ?? {}) };
    this.store = store;
    this.log = settings.log ?? (() => {});
    this.auth = new Authenticator(settings.credentials);
    this.pool = new WorkerPool({
      size: this.config.workers,
      timeoutMs: this.config.jobTimeoutMs,
      spawn: settings.spawn,
      onTaskEnd: () => {
        if (this.starved) this.pump();
      },
    });
    const every = Math.min(60_000, Math.max(50, Math.floor(this.config.retentionMs / 4)));
    this.retention = setInterval(() => void this.expire(), every);
    this.retention.unref();
    store.onClaimable?.(() => this.pump());
  }

  /**
   * Opens the service on the store it is given and runs the jobs it holds queued.
   *
   * @example
   * const store = await EmbeddedStore.open(new MemoryPersistence());
   * const service = await PredictionService.open({ credentials: localCredentials({}).credentials, store });
   */
  static async open(settings: ServiceSettings): Promise<PredictionService> {
    const service = new PredictionService(settings, settings.store);
    service.pump();
    return service;
  }

  /**
   * Pays for and creates the jobs of a validated request (one per theta row), saved in one step,
   * and schedules them. Refuses (refusals.ts) `quota_exceeded` when the quota cannot pay,
   * `insufficient_storage` when the storage is full, `service_busy` when it is busy,
   * `store_unavailable` when it cannot be reached; then nothing is created or spent.
   */
  async submit(org: Org, request: ParsedRequest, settings: SubmitSettings = {}): Promise<Submission> {
    const created = await this.storeCall(
      () =>
        this.store.createJobs({
          org: org.name,
          plan: org.quota,
          analysis: request.analysis,
          input: { analysis: request.analysis, data: request.data, thetas: request.thetas, options: request.options as Record<string, unknown> },
          warnings: request.warnings,
          thetaSource: request.thetaGiven ? undefined : "last_row_of_X",
          censorOperator: request.resolved.censor_operator,
          variant: settings.variant,
        }),
      request.thetas.length,
    );
    if (settings.decoded === true) for (const job of created.jobs) this.decodeFor.add(job.id);
    if (settings.inline === true) {
      for (const job of created.jobs) this.inlineFor.add(job.id);
      await this.startInline(created.jobs);
    }
    this.pump();
    // The same keys as `{ ...created, warnings }`, without V8's new shape for a spread object extended (docs/architecture.md).
    return Object.assign({}, created, { warnings: request.warnings });
  }

  /**
   * Pays for one job that failed before it could run and records it as failed (v2: a POST whose
   * uploaded X is not there answers a receipt, and the job reads as failed with error_code 5,
   * docs/api.md section 3). Refuses like `submit` when the quota cannot pay.
   */
  async submitFailed(org: Org, analysis: Analysis, failure: JobFailure, settings: SubmitSettings & { warnings?: string[] } = {}): Promise<Job> {
    return this.storeCall(
      () => this.store.createFailedJob({ org: org.name, plan: org.quota, analysis, failure, warnings: settings.warnings ?? [], variant: settings.variant }),
      1,
    );
  }

  /**
   * The `store_unavailable` refusal (outage.ts) when `error` says the store cannot be reached, or,
   * without `error`, when its quick check says so (the file store's directory is gone); undefined
   * otherwise. The detail goes to the log, once a minute per cause.
   *
   * @example
   * const down = service.outageError(error); if (down) throw down;
   */
  outageError(error?: unknown): ServiceRefusal | undefined {
    const outage = this.store.outage?.(error);
    if (outage === undefined) return undefined;
    const now = Date.now();
    const key = `${outage.store}: ${outage.cause}`;
    if ((this.outagesLogged.get(key) ?? -Infinity) < now - 60_000) {
      this.outagesLogged.set(key, now);
      const detail = storeErrorCode(error) === "storage_busy" ? (error as StorageBusyError).detail : error instanceof Error ? error.message : undefined;
      this.log(`store unavailable: ${key}${detail !== undefined ? ` (${detail})` : ""}; answering 503 until it is back`);
    }
    return outageReply(outage);
  }

  private readonly outagesLogged = new Map<string, number>();

  /** Runs a store write of a POST; its errors become the refusals `quota_exceeded`, `insufficient_storage`, `service_busy`. */
  private async storeCall<T>(call: () => Promise<T>, units: number): Promise<T> {
    try {
      return await call();
    } catch (error) {
      throw this.outageError(error) ?? this.writeRefusal(error, units) ?? error;
    }
  }

  /** The refusal a store write's error is answered with (the detail goes to the log), or undefined. */
  private writeRefusal(error: unknown, units: number): ServiceRefusal | undefined {
    switch (storeErrorCode(error)) {
      case "quota_exceeded": {
        const { quota, used, remaining } = (error as QuotaExceededError).status;
        return new ServiceRefusal(
          "quota_exceeded",
          `Limit Exceeded: this request costs ${units} unit${units === 1 ? "" : "s"} and the plan has ${remaining} left (quota ${quota}, used ${used})`,
          { extra: { quota, used, remaining, required: units, unit: "prediction_task" } },
        );
      }
      case "storage_full":
        this.log(`storage full: ${(error as StorageFullError).detail}`);
        return new ServiceRefusal(
          "insufficient_storage",
          "the service's storage is full, so the request was not accepted and nothing was charged; try again once space is freed (the service's operator can remove old results or shorten --retention)",
        );
      case "storage_busy":
        this.log(`storage busy: ${(error as StorageBusyError).detail}`);
        return new ServiceRefusal(
          "service_busy",
          "the service cannot store the request right now (too many open files), so nothing was charged; try again in a moment",
          { retryAfterS: 1 },
        );
      default:
        return undefined;
    }
  }

  /** Units of the organisation's plan (free). */
  quotaStatus(org: Org): Promise<QuotaStatus> {
    return this.store.quotaStatus(org.name, org.quota);
  }

  /** The organisation's job with this id and code; refuses `gone` when it was removed by retention; undefined when unknown. */
  async findJob(org: Org, id: number, code: string): Promise<Job | undefined> {
    // A result that reached this process ahead of its text: read once the store has it.
    await this.ahead.get(id)?.stored;
    return this.findJobNow(org, id, code);
  }

  /** `findJob` without waiting for a result that is ahead of its text (the lane's endpoint: `takeAhead`). */
  async findJobNow(org: Org, id: number, code: string): Promise<Job | undefined> {
    const job = await this.store.findJob(org.name, id, code);
    if (job) return job;
    const gone = await this.store.expiredReason("job", id);
    if (gone) throw new ServiceRefusal("gone", gone);
    return undefined;
  }

  /** The organisation's experiment with this id and code; refuses `gone` when removed by retention. */
  async findExperiment(org: Org, id: number, code: string): Promise<Experiment | undefined> {
    const experiment = await this.store.findExperiment(org.name, id, code);
    if (experiment) return experiment;
    const gone = await this.store.expiredReason("experiment", id);
    if (gone) throw new ServiceRefusal("gone", gone);
    return undefined;
  }

  /** When the organisation's oldest job still kept was created. */
  firstJobTime(org: Org): Promise<Date | undefined> {
    return this.store.firstJobTime(org.name);
  }

  /** The `results` JSON of a completed job; refuses `gone` when it is no longer kept. */
  async resultJson(job: Job): Promise<string> {
    let json: string | undefined;
    try {
      json = await this.store.readResult(job);
    } catch (error) {
      const down = this.outageError(error);
      if (down) throw down;
      const e = storageError(error);
      if (storeErrorCode(e) === "storage_busy") {
        this.log(`storage busy: ${(e as StorageBusyError).detail}`);
        throw new ServiceRefusal("service_busy", "the service cannot read the result right now (too many open files); try again in a moment", {
          retryAfterS: 1,
        });
      }
      throw error;
    }
    if (json === undefined) {
      const kept = this.store.durable
        ? `results are removed ${this.config.retentionMs / 3600_000} h after they finish (rbp serve --retention)`
        : `results are kept in memory up to ${Math.round(this.config.maxResultMemoryBytes / MiB)} MiB, least recently used first out (rbp serve --result-memory, or --data-dir to keep them on disk)`;
      throw new ServiceRefusal("gone", `the result of job ${job.id} is no longer kept: ${kept}`);
    }
    return json;
  }

  /**
   * One field of a completed job's results (`segments` from the URL): read by the store alone
   * where it can (a database), else resolved in the parsed result; 410 when it is no longer kept.
   */
  /** One field as the store reads it without loading the whole result (PostgreSQL), if it can. */
  async storedField(job: Job, segments: string[]): Promise<ResolvedField | undefined> {
    return this.store.readResultField ? await this.store.readResultField(job, segments) : undefined;
  }

  /**
   * Resolves once the job is completed or failed, or after `timeoutMs`, whichever is first: for
   * reads that hold a request open while a job runs (the v2 GET /results long-poll). An aborted
   * `signal` (the caller went away) ends the wait at once. `orAhead`: also once its result is
   * ahead of its text (`takeAhead`: the lane's endpoint only).
   */
  waitForJob(job: Job, timeoutMs: number, signal?: AbortSignal, settings: { orAhead?: boolean } = {}): Promise<void> {
    const orAhead = settings.orAhead === true;
    if (job.status === "completed" || job.status === "failed" || timeoutMs <= 0 || signal?.aborted || (orAhead && this.ahead.has(job.id))) {
      return Promise.resolve();
    }
    if (this.store.waitForJob) return this.store.waitForJob(job.id, timeoutMs, signal);
    return new Promise((resolve) => {
      const sets = orAhead ? [this.waiters, this.aheadWaiters] : [this.waiters];
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        for (const waiters of sets) {
          const waiting = waiters.get(job.id);
          waiting?.delete(done);
          if (waiting?.size === 0) waiters.delete(job.id);
        }
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      signal?.addEventListener("abort", done, { once: true });
      for (const waiters of sets) {
        const waiting = waiters.get(job.id) ?? new Set<() => void>();
        waiters.set(job.id, waiting);
        waiting.add(done);
      }
    });
  }

  experimentJobs(experiment: Experiment): Promise<Job[]> {
    return this.store.experimentJobs(experiment);
  }

  /**
   * Starts every worker and runs a small Grid spread over all of them a few times (up to four) (no job, no
   * store, no quota), so that the first real job finds the workers started and the engine's code
   * compiled. A job that arrives meanwhile waits at most for one small Grid, and ends the warm-up. Never fails: a worker
   * that cannot start is the first job's problem, reported as ever.
   *
   * @example
   * void service.warm(); // in the background, after opening the service
   */
  async warm(rounds = 4): Promise<void> {
    const task = warmTask(this.config.decimals);
    for (let r = 0; r < rounds && !this.closing && !this.jobsStarted; r++) {
      try {
        await this.runSpread({ ...task, id: -1 - r });
      } catch {
        return;
      }
    }
  }

  /** Stops the workers and waits for pending writes. Unfinished jobs stay queued in a data dir. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      clearInterval(this.retention);
      await this.pool.close();
      for (const waiting of this.waiters.values()) for (const wake of [...waiting]) wake();
      await this.store.close();
    })();
    return this.closing;
  }

  /**
   * A finished job's result decoded (`readDecoded` reads it as `JSON.parse` reads `resultJson`),
   * once, when it was submitted with `decoded` and is still kept; undefined otherwise (then parse
   * the JSON).
   *
   * @example
   * const decoded = service.takeDecoded(job.id);
   * const results = decoded !== undefined ? readDecoded(decoded) : JSON.parse(await service.resultJson(job));
   */
  takeDecoded(jobId: number): Decoded | undefined {
    const decoded = this.decoded.get(jobId);
    if (decoded === undefined) return undefined;
    this.decoded.delete(jobId);
    return decoded;
  }

  /** Whether the job's result reached this process before the store has its text (see `takeAhead`). */
  isAhead(jobId: number): boolean {
    return this.ahead.has(jobId);
  }

  /**
   * For the lane's endpoint, once: a job whose result reached this process decoded before its
   * worker wrote the text, as it reads once the store has it (completed, ended when the result
   * arrived: the store records that time), with the result decoded (`readDecoded` reads it as
   * `JSON.parse` will read the text), a bound on the text's length and the JSON of its strings and keys (what a scrub of secrets
   * reads). Undefined when the job is not ahead or its result was taken (then `findJob` waits).
   *
   * @example
   * const early = service.isAhead(job.id) ? service.takeAhead(job) : undefined;
   */
  takeAhead(job: Job): { job: Job; decoded: Decoded; bytesAtMost: number; scan: string } | undefined {
    const ahead = this.ahead.get(job.id);
    const decoded = this.decoded.get(job.id);
    if (ahead === undefined || decoded === undefined || (job.status !== "queued" && job.status !== "running")) return undefined;
    this.decoded.delete(job.id);
    const { bytesAtMost, strings } = decodedOutline(decoded);
    // `job` with its status and end, as `{ ...job, status, finished_at }` has them, by Object.assign (docs/architecture.md).
    const finished = Object.assign({}, job, { status: "completed" as const, finished_at: ahead.finishedAt });
    return { job: finished, decoded, bytesAtMost, scan: JSON.stringify(strings) };
  }

  /** Removes what is past its retention now (also run on a timer). */
  async expire(): Promise<number> {
    try {
      return await this.store.expire(new Date());
    } catch (error) {
      this.log(`retention: ${error instanceof Error ? error.message : String(error)}`);
      return 0;
    }
  }

  /** Hands queued jobs to the pool while it has free workers (the store picks them, fairly). */
  private pump(): void {
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = true;
    void (async () => {
      try {
        do {
          this.pumpAgain = false;
          while (!this.closing) {
            // A free worker, or one lent to a Grid that can be asked back for a waiting job.
            const lender = this.pool.capacity() > 0 ? undefined : this.lending.values().next().value;
            this.starved = this.pool.capacity() === 0 && !lender;
            if (this.starved) break;
            const claimed = await this.store.claim();
            if (!claimed) break;
            if (lender) {
              Atomics.store(lender, SHARE.stop, 1);
              this.lending.delete(lender);
            }
            this.schedule(claimed, await this.siblings(claimed));
          }
        } while (this.pumpAgain && !this.closing);
      } catch (error) {
        this.log(`the queue could not be read: ${error instanceof Error ? error.message : String(error)}`);
      } finally {
        this.pumping = false;
      }
    })();
  }

  /**
   * Starts an inline Grid at once, claimed by id (store `claimJob`), whether or not a worker is
   * free: it runs on this thread and takes a helper only if one is free (`helpersInline`). Left to
   * the pump, it waited for a free worker it does not need: under Deno's kernel the warm-up holds
   * the workers for ~1 s while they start, and in any kernel a Grid run while an experiment keeps
   * every worker busy waited for a worker's task to end. Jobs that need workers keep their fair
   * order: this one takes no worker and no turn from them. A store without `claimJob`
   * (PostgreSQL: `rbp serve`, which never runs inline) leaves it to the pump.
   */
  private async startInline(jobs: Job[]): Promise<void> {
    if (!this.store.claimJob || this.closing) return;
    for (const job of jobs) {
      if (job.analysis !== "grid" || job.variant || !this.inlineFor.has(job.id)) continue;
      try {
        const claimed = await this.store.claimJob(job.id);
        if (claimed) this.schedule(claimed);
      } catch (error) {
        // Still queued: the pump claims it as any other job.
        this.log(`job ${job.id}: could not be claimed at once: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }

  /** More queued rows of the same experiment's Grid request, claimed to run in one task with `claimed`. */
  private async siblings(claimed: Claimed): Promise<Claimed[]> {
    const { job, input } = claimed;
    const cap = Math.floor(this.config.experimentRowsPerTask);
    if (cap < 2 || job.analysis !== "grid" || job.variant || input.thetas.length < 2 || !this.store.claimSiblings) return [];
    // The rows from this one on (queued in row order), shared out so that every worker gets some.
    const left = input.thetas.length - job.row;
    const byShare = this.pool.size > 1 ? Math.ceil(left / (2 * this.pool.size)) : left;
    const byWork = Math.floor(this.config.experimentTaskWork / Math.max(1, this.workOf(input)));
    const more = Math.min(cap, byWork, byShare) - 1;
    return more < 1 ? [] : this.store.claimSiblings(claimed, more);
  }

  /** Rows x cells of one job of a request (kept per stored input). */
  private workOf(input: Claimed["input"]): number {
    let work = this.jobWorks.get(input);
    if (work === undefined) {
      work = jobWork(input);
      this.jobWorks.set(input, work);
    }
    return work;
  }

  private schedule(claimed: Claimed, siblings: Claimed[] = []): void {
    this.jobsStarted = true;
    const all = [claimed, ...siblings];
    void (siblings.length > 0 ? this.executeRows(all) : this.execute(claimed))
      .catch((error: unknown) => {
        this.log(`job ${claimed.job.id}: bookkeeping failed: ${error instanceof Error ? error.message : String(error)}`);
      })
      .finally(() => {
        for (const { job } of all) {
          if (job.status === "completed" || job.status === "failed") for (const wake of [...(this.waiters.get(job.id) ?? [])]) wake();
        }
        this.pump();
      });
  }

  private taskOf(claimed: Claimed): WorkerTask {
    return taskOfClaimed(claimed, this.config.decimals);
  }

  /** Records a failure as clients may see it (reasons.ts); the internal text goes to the log. */
  private async failJob(job: Job, failure: JobFailure): Promise<void> {
    const shown = publicFailure(failure);
    if (shown.detail !== undefined) this.log(`job ${job.id} failed: ${shown.detail}`);
    await this.store.fail(job, shown.failure);
  }

  private async execute(claimed: Claimed): Promise<void> {
    const { job } = claimed;
    const task = this.taskOf(claimed);
    if (this.decodeFor.delete(job.id)) task.decode = true;
    const inline = this.inlineFor.delete(job.id) && job.analysis === "grid" && !job.variant;
    // The decoded result ahead of its text (a store that keeps no other readers' clocks: in memory, this process only).
    let early: { decoded: Decoded; finishedAt: string; stored: () => void } | undefined;
    const onDecoded =
      task.decode === true && !this.store.durable && this.store.waitForJob === undefined
        ? ({ decoded }: WorkerDecoded) => {
            const finishedAt = new Date().toISOString();
            let stored!: () => void;
            this.ahead.set(job.id, { finishedAt, stored: new Promise<void>((resolve) => (stored = resolve)) });
            early = { decoded, finishedAt, stored };
            this.keepDecoded(job.id, decoded);
            for (const wake of [...(this.aheadWaiters.get(job.id) ?? [])]) wake();
          }
        : undefined;
    try {
      let done: InlineDone;
      try {
        done = inline
          ? await runInline(this.pool, task, { helpers: this.helpersInline(claimed), deadline: Date.now() + this.config.jobTimeoutMs, onDecoded })
          : this.spreads(claimed)
            ? await this.runSpread(task, onDecoded)
            : await this.pool.run<WorkerDone>(task, { onDecoded });
      } catch (error) {
        // Its reader has the result already: the text is written here (JSON writes the parsed value back as the same text).
        if (early !== undefined && !this.closing) {
          const parsed = readDecoded(early.decoded) as { yhat?: Array<number | null>; fit?: Array<number | null> };
          await this.store.complete(job, JSON.stringify(parsed), { yhat: parsed.yhat ?? [], fit: parsed.fit ?? [] }, early.finishedAt);
          return;
        }
        const failure = poolFailure(error);
        if (failure) await this.failJob(job, failure);
        return;
      }
      if (done.decoded !== undefined) this.keepDecoded(job.id, done.decoded);
      await this.store.complete(job, done.json, { yhat: done.yhat, fit: done.fit }, early?.finishedAt);
    } finally {
      if (early !== undefined) {
        this.ahead.delete(job.id);
        early.stored();
      }
    }
  }

  /** Keeps a decoded result for `takeDecoded` (at most DECODED_KEPT, the oldest out first). */
  private keepDecoded(jobId: number, decoded: Decoded): void {
    if (this.decoded.size >= DECODED_KEPT) this.decoded.delete(this.decoded.keys().next().value!);
    this.decoded.set(jobId, decoded);
  }

  /**
   * Workers that could help a Grid starting now: the free ones besides its own, and those only
   * writing the text of a result that is ahead of it (`ahead`: free in a moment; a helper queued
   * for one starts when it is, or is withdrawn when the Grid is done without it).
   */
  private helpersFree(): number {
    return Math.min(this.pool.size - 1, this.pool.capacity() - 1 + this.ahead.size);
  }

  /**
   * Pool workers to help an inline Grid: one when it is worth spreading and a worker is free (the
   * calling thread and one worker: the engine's `gridParallel` on two cores).
   */
  private helpersInline(claimed: Claimed): number {
    return worthSpreading(claimed) && this.pool.capacity() > 0 ? 1 : 0;
  }

  /** Whether a job is a Grid worth spreading and there is a worker to help it (`helpersFree`). */
  private spreads(claimed: Claimed): boolean {
    const { job } = claimed;
    return job.analysis === "grid" && !job.variant && worthSpreading(claimed) && this.helpersFree() > 0;
  }

  /**
   * One Grid on its own worker (the lead) plus the free ones (helpers), all drawing chunks from one
   * shared counter; each helper posts its chunks' partials straight to the lead on a port of its
   * own, and the lead merges every chunk in chunk order and encodes (threads/chunk-share.ts). The
   * job's result is the lead's: a helper that fails, or is stopped, or has not started by the time
   * the lead is done (it is then withdrawn), only leaves the lead more chunks to compute.
   */
  private async runSpread(task: WorkerTask, onDecoded?: (early: WorkerDecoded) => void): Promise<WorkerDone> {
    // Every part, and the merge, ends by the job's own time limit counted from now.
    const deadline = Date.now() + this.config.jobTimeoutMs;
    const helpers = helperParts(this.pool, task, Math.max(0, this.helpersFree()), { deadline });
    const { counter, ports } = helpers;
    const lead = this.pool.run<WorkerDone>(
      { ...task, part: { kind: "lead", counter: counter.buffer as SharedArrayBuffer, ports } },
      { deadline, transfer: ports, onDecoded },
    );
    helpers.post();
    this.lending.add(counter);
    try {
      return await lead;
    } finally {
      this.lending.delete(counter);
      helpers.release();
    }
  }

  /** Several rows of one experiment's Grid in one task; each row completes or fails on its own. */
  private async executeRows(claimed: Claimed[]): Promise<void> {
    for (const { job } of claimed) {
      this.decodeFor.delete(job.id);
      this.inlineFor.delete(job.id);
    }
    const task = { ...this.taskOf(claimed[0]), thetas: claimed.map(({ job, input }) => input.thetas[job.row]) };
    let reply: WorkerRows;
    try {
      reply = await this.pool.run<WorkerRows>(task);
    } catch (error) {
      const failure = poolFailure(error);
      if (failure) for (const { job } of claimed) await this.failJob(job, failure);
      return;
    }
    for (let r = 0; r < claimed.length; r++) {
      const { job } = claimed[r];
      const row = reply.rows[r];
      if (row.type === "done") await this.store.complete(job, row.json, { yhat: row.yhat, fit: row.fit });
      else await this.failJob(job, jobFailureOf(row));
    }
  }
}

/**
 * The warm-up Grid: 256 rows of 10 attributes (1,023 combinations: the shapes of a default Grid,
 * a few milliseconds once compiled), fixed pseudo-random data, theta the last row.
 */
function warmTask(decimals: number | null): WorkerTask {
  const rows = 256;
  const cols = 10;
  let seed = 12345;
  const next = () => (seed = (seed * 16807) % 2147483647) / 2147483647 - 0.5;
  const X = Float64Array.from({ length: rows * cols }, next);
  const y = Float64Array.from({ length: rows }, (_, i) => X[i * cols] + X[i * cols + 1] + next());
  return { id: -1, analysis: "grid", y, X, rows, cols, theta: X.slice((rows - 1) * cols), options: {}, decimals };
}

/** Whether a Grid's work (rows x 2^min(attributes, 14)) is worth sharing between threads: SPREAD_GRID_MIN_WORK. */
function worthSpreading({ input }: Claimed): boolean {
  return input.data.rows * 2 ** Math.min(input.data.cols, 14) >= SPREAD_GRID_MIN_WORK;
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
