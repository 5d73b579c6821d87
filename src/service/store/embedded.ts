/**
 * The embedded store: the `Store` (contract.ts) of `rbp serve` and of every notebook's local
 * service, in memory or, with `--data-dir`, in a directory (persistence.ts).
 *
 * - job_id: integers from 1, increasing; job_code: 16 lower-case hex characters of 8 bytes from
 *   the system's CSPRNG (64 random bits, records.ts `newCode`), compared in constant time. Experiments have their own
 *   ids and codes of the same form. Ids drawn by a refused request are never handed out again.
 * - A job or experiment is found only with its organisation, its id and its code; anything else
 *   is "not found" (the caller cannot tell another organisation's job from a missing one).
 * - Quota: `createJobs` checks and takes the units synchronously (before its first await), so
 *   concurrent POSTs can never spend more than the plan has; if saving the request fails, the
 *   units are given back and every file it wrote is removed.
 * - Queue: one FIFO per organisation, served round robin (`FairQueue`), so a flood from one
 *   organisation delays another's job by at most one job per worker.
 * - States: queued -> running -> completed | failed, once: `complete` saves the result, then
 *   the outcome; a result that cannot be saved makes the job failed; `fail` on a finished job
 *   does nothing, so a job's inputs are released exactly once.
 * - Memory: without a data dir, results live in memory up to `maxResultMemoryBytes` (least
 *   recently used go first: a read then answers 410); with one, results live on disk and only a
 *   `resultCacheBytes` LRU stays in memory. Finished jobs are removed `retentionMs` after they
 *   finish, oldest request first (`expire`), on disk too; their ids then answer 410.
 */
import type { BatchRecord, Loaded, Outcome, Persistence, ServiceState } from "./persistence.js";
import {
  DEFAULT_RESULT_MEMORY_BYTES,
  DEFAULT_RETENTION_MS,
  expiredMessage,
  newCode,
  PROCESS_JOB,
  sameCode,
  type ExperimentRecord,
  type JobFailure,
  type JobInput,
  type JobRecord,
} from "./records.js";
import type { QuotaStatus } from "../quota.js";
import { QuotaLedger } from "../quota.js";
import type { StoreOutage } from "../outage.js";
import { UploadStore, type UploadSettings, type Uploads } from "../uploads.js";
import type { Claimed, CreateFailedJob, CreateJobs, Created, Store } from "./contract.js";
import { QuotaExceededError, storageError, storeErrorCode } from "./errors.js";
import { FairQueue } from "./queue.js";
import { LruCache } from "./lru.js";
import {
  PACK_AT_ONCE_CHARS,
  PACK_FROM_CHARS,
  PACK_QUIET_MS,
  PACK_WAITING_CHARS,
  packText,
  storedBytes,
  textChars,
  textOf,
  unpackText,
  type ResultText,
  type StoredText,
} from "./packed.js";

export interface EmbeddedSettings {
  /** Finished jobs and their results are removed this long after they finish. Default 7 days. */
  retentionMs?: number;
  /** Without a data dir: bytes of results kept in memory (least recently used go first). Default 256 MiB. */
  maxResultMemoryBytes?: number;
  /** With a data dir: bytes of results cached in memory. Default 64 MiB. */
  resultCacheBytes?: number;
  /**
   * With a data dir: job records of finished requests kept in memory (least recently read go
   * first; they are read again from the data dir when asked for). Default 100,000.
   */
  maxJobRecords?: number;
  /** Operational notes (never secrets). */
  log?: (line: string) => void;
}

const DEFAULT_RESULT_CACHE_BYTES = 64 * 1024 * 1024;
export const DEFAULT_JOB_RECORDS = 100_000;

interface InputEntry {
  input: JobInput | Promise<JobInput | undefined> | undefined;
  /** Unfinished jobs reading it. */
  pending: number;
  /** A job's outcome could not be saved: it runs again after a restart, so its input stays. */
  keep?: boolean;
}

/** One accepted request, always in memory: to find its jobs, for retention (oldest first). */
interface BatchMeta {
  first: number;
  count: number;
  org: string;
  created_at: string;
  experimentId?: number;
  inputRef: string;
  /** Jobs not finished yet (the records stay in memory while there are any). */
  unfinished: number;
  /** Latest finished_at of its jobs (ms). */
  lastFinished: number;
  /** A job's outcome could not be saved: its record is the only copy; kept in memory. */
  pinned?: boolean;
}

interface LoadedBatch {
  meta: BatchMeta;
  jobs: JobRecord[];
  experiment?: ExperimentRecord;
}

export class EmbeddedStore implements Store {
  readonly durable: boolean;
  private readonly inputs = new Map<string, InputEntry>();
  /** Every request still kept, in id order (a few numbers each, never its rows). */
  private readonly batches: BatchMeta[] = [];
  private readonly byExperiment = new Map<number, BatchMeta>();
  /** Records of requests in memory: all with unfinished jobs, and recently read ones (LRU). */
  private readonly loaded = new Map<number, LoadedBatch>();
  private loadedJobs = 0;
  private readonly maxJobRecords: number;
  private readonly loading = new Map<number, Promise<LoadedBatch | undefined>>();
  private readonly queue = new FairQueue();
  private readonly quota: QuotaLedger;
  /** Result texts; a large one deflated once stored (packed.ts). */
  private readonly results: LruCache<number, StoredText>;
  private readonly retentionMs: number;
  private readonly log: (line: string) => void;
  private nextJobId = 1;
  private nextExperimentId = 1;
  private expiredBelowJob = 1;
  private expiredBelowExperiment = 1;
  private readonly expiredUnits = new Map<string, number>();
  private expiring: Promise<number> | undefined;
  /** Settles once the result texts stored so far are deflated (or left as they are). */
  private packing: Promise<void> = Promise.resolve();
  /** Settles once the deferred texts being written for their deflate are (`written`). */
  private writing: Promise<void> = Promise.resolve();
  /** Texts waiting to be deflated (shorter than PACK_AT_ONCE_CHARS; at most PACK_WAITING_CHARS, the oldest dropped), their length, and the timer that deflates them once the store is quiet. */
  private readonly waiting: Array<[number, ResultText]> = [];
  private waitingChars = 0;
  private quiet: NodeJS.Timeout | undefined;
  /** Jobs whose terminal state is being saved. */
  private readonly finishing = new Set<number>();

  private constructor(
    private readonly persistence: Persistence,
    settings: EmbeddedSettings,
  ) {
    this.durable = persistence.durable;
    this.retentionMs = settings.retentionMs ?? DEFAULT_RETENTION_MS;
    this.log = settings.log ?? (() => {});
    this.quota = new QuotaLedger();
    // Without a data dir the records are the only copy: they stay until their retention.
    this.maxJobRecords = persistence.durable ? (settings.maxJobRecords ?? DEFAULT_JOB_RECORDS) : Infinity;
    this.results = new LruCache(
      persistence.durable ? (settings.resultCacheBytes ?? DEFAULT_RESULT_CACHE_BYTES) : (settings.maxResultMemoryBytes ?? DEFAULT_RESULT_MEMORY_BYTES),
      storedBytes,
    );
  }

  /** Why the store's files cannot be used (a data dir that is gone...), or undefined; contract.ts. */
  outage(error?: unknown): StoreOutage | undefined {
    return this.persistence.outage?.(error);
  }

  /**
   * Opens the store on what `persistence` holds: the requests, how their jobs ended, and the
   * quota they used (derived from them). Jobs that had not finished are queued again.
   *
   * @example
   * const store = await EmbeddedStore.open(await DirPersistence.open("./rbp-data"), { retentionMs: 24 * 3600_000 });
   */
  static async open(persistence: Persistence, settings: EmbeddedSettings = {}): Promise<EmbeddedStore> {
    const store = new EmbeddedStore(persistence, settings);
    store.restore(await persistence.load());
    return store;
  }

  /** Jobs queued again at open (unfinished when the service stopped). */
  requeued = 0;

  private restore(loaded: Loaded): void {
    const state = loaded.state;
    this.expiredBelowJob = state?.expired_below_job ?? 1;
    this.expiredBelowExperiment = state?.expired_below_experiment ?? 1;
    for (const [org, units] of Object.entries(state?.expired_units ?? {})) {
      this.expiredUnits.set(org, units);
      this.quota.add(org, units);
    }
    let maxJob = 0;
    let maxExperiment = 0;
    const stale: BatchRecord[] = [];
    for (const batch of loaded.batches) {
      if (batch.first_job_id < this.expiredBelowJob) {
        stale.push(batch); // its removal was interrupted: finish it below
        continue;
      }
      const { jobs, experiment } = this.records(batch);
      maxJob = Math.max(maxJob, batch.first_job_id + jobs.length - 1);
      if (experiment) maxExperiment = Math.max(maxExperiment, experiment.id);
      this.quota.add(batch.org, jobs.length);
      let pending = 0;
      for (const job of jobs) {
        const outcome = loaded.outcomes.get(job.id);
        if (outcome) applyOutcome(job, outcome);
        else if (job.status !== "failed") {
          pending++;
          this.queue.push(job.org, job.id);
        }
      }
      this.remember(batch, jobs, experiment);
      if (pending > 0) this.inputs.set(batch.input_ref, { input: undefined, pending });
      this.requeued += pending;
    }
    this.evict();
    this.nextJobId = Math.max(state?.next_job_id ?? 1, maxJob + 1, this.expiredBelowJob);
    this.nextExperimentId = Math.max(state?.next_experiment_id ?? 1, maxExperiment + 1, this.expiredBelowExperiment);
    for (const batch of stale)
      void this.removeFiles(
        batch.first_job_id,
        batch.jobs.map((j) => j.id),
        batch.input_ref,
      );
    // Inputs no unfinished job reads (a crash between writing a request's input and its batch).
    for (const ref of loaded.inputRefs) {
      if (!this.inputs.has(ref)) void this.persistence.deleteInput(ref).catch(() => undefined);
    }
  }

  /** The in-memory records of a stored request. */
  private records(batch: BatchRecord): { jobs: JobRecord[]; experiment?: ExperimentRecord } {
    const jobs = batch.jobs.map((j, row): JobRecord => ({
      id: j.id,
      code: j.code,
      org: batch.org,
      analysis: batch.analysis,
      status: batch.failure ? "failed" : "queued",
      created_at: batch.created_at,
      ...(batch.failure ? { finished_at: batch.created_at, failure: batch.failure } : {}),
      warnings: batch.warnings,
      ...(batch.theta_source ? { theta_source: batch.theta_source } : {}),
      ...(batch.experiment ? { experiment_id: batch.experiment.id } : {}),
      row,
      input_ref: batch.input_ref,
      ...(batch.censor_operator ? { censor_operator: batch.censor_operator } : {}),
      ...(batch.variant ? { variant: batch.variant } : {}),
    }));
    const experiment: ExperimentRecord | undefined = batch.experiment
      ? {
          id: batch.experiment.id,
          code: batch.experiment.code,
          org: batch.org,
          analysis: batch.analysis,
          job_ids: jobs.map((j) => j.id),
          created_at: batch.created_at,
        }
      : undefined;
    return { jobs, experiment };
  }

  /** Takes a new or restored request in: its meta (kept) and its records (loaded). */
  private remember(batch: BatchRecord, jobs: JobRecord[], experiment: ExperimentRecord | undefined): void {
    const meta: BatchMeta = {
      first: batch.first_job_id,
      count: jobs.length,
      org: batch.org,
      created_at: batch.created_at,
      experimentId: experiment?.id,
      inputRef: batch.input_ref,
      unfinished: 0,
      lastFinished: 0,
    };
    for (const job of jobs) {
      if (job.status === "completed" || job.status === "failed") meta.lastFinished = Math.max(meta.lastFinished, Date.parse(job.finished_at!));
      else meta.unfinished++;
    }
    // In id order (binary search, oldest first): concurrent POSTs may finish saving out of order.
    let at = this.batches.length;
    while (at > 0 && this.batches[at - 1].first > meta.first) at--;
    this.batches.splice(at, 0, meta);
    if (experiment) this.byExperiment.set(experiment.id, meta);
    this.loaded.set(meta.first, { meta, jobs, experiment });
    this.loadedJobs += jobs.length;
  }

  /** The request holding job `id` (binary search over the kept requests). */
  private metaOf(id: number): BatchMeta | undefined {
    let lo = 0;
    let hi = this.batches.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const meta = this.batches[mid];
      if (id < meta.first) hi = mid - 1;
      else if (id >= meta.first + meta.count) lo = mid + 1;
      else return meta;
    }
    return undefined;
  }

  /** The records of a request: from memory, else read again from the data dir. */
  private async batchRecords(meta: BatchMeta): Promise<LoadedBatch | undefined> {
    const hit = this.loaded.get(meta.first);
    if (hit) {
      this.loaded.delete(meta.first);
      this.loaded.set(meta.first, hit);
      return hit;
    }
    let pending = this.loading.get(meta.first);
    if (!pending) {
      pending = this.readBatch(meta).finally(() => this.loading.delete(meta.first));
      this.loading.set(meta.first, pending);
    }
    return pending;
  }

  private async readBatch(meta: BatchMeta): Promise<LoadedBatch | undefined> {
    const batch = await this.persistence.loadBatch(meta.first);
    if (!batch || this.metaOf(meta.first) !== meta) return undefined;
    const { jobs, experiment } = this.records(batch);
    const outcomes = await Promise.all(jobs.map((job) => (job.status === "failed" ? undefined : this.persistence.loadOutcome(job.id))));
    jobs.forEach((job, i) => {
      const outcome = outcomes[i];
      if (outcome) applyOutcome(job, outcome);
    });
    const again = this.loaded.get(meta.first);
    if (again) return again;
    const entry = { meta, jobs, experiment };
    this.loaded.set(meta.first, entry);
    this.loadedJobs += jobs.length;
    this.evict();
    return entry;
  }

  /** Drops the records of finished requests read least recently, down to `maxJobRecords`. */
  private evict(): void {
    if (this.loadedJobs <= this.maxJobRecords) return;
    for (const [first, entry] of this.loaded) {
      if (this.loadedJobs <= this.maxJobRecords) break;
      if (entry.meta.unfinished > 0 || entry.meta.pinned) continue;
      this.loaded.delete(first);
      this.loadedJobs -= entry.jobs.length;
    }
  }

  /** The record of job `id` (undefined when no request holds it). */
  private async jobRecord(id: number): Promise<JobRecord | undefined> {
    const meta = this.metaOf(id);
    if (!meta) return undefined;
    return (await this.batchRecords(meta))?.jobs[id - meta.first];
  }

  /** Records in memory (job records, requests kept): for tests and the operator. */
  stats(): { jobRecordsInMemory: number; requestsKept: number } {
    return { jobRecordsInMemory: this.loadedJobs, requestsKept: this.batches.length };
  }

  // -------------------------------------------------------------------------------------------
  // Quota and creation

  async quotaStatus(org: string, plan: number): Promise<QuotaStatus> {
    return this.quota.status(org, plan);
  }

  async createJobs(request: CreateJobs): Promise<Created> {
    const m = request.input.thetas.length;
    this.take(request.org, request.plan, m);
    const first = this.nextJobId;
    this.nextJobId += m;
    const experiment = m > 1 ? { id: this.nextExperimentId++, code: newCode() } : undefined;
    const batch: BatchRecord = {
      first_job_id: first,
      org: request.org,
      analysis: request.analysis,
      created_at: new Date().toISOString(),
      warnings: request.warnings,
      input_ref: experiment ? `e${experiment.id}` : `j${first}`,
      ...(request.thetaSource ? { theta_source: request.thetaSource } : {}),
      ...(request.censorOperator ? { censor_operator: request.censorOperator } : {}),
      ...(request.variant ? { variant: request.variant } : {}),
      ...(experiment ? { experiment } : {}),
      jobs: Array.from({ length: m }, (_, i) => ({ id: first + i, code: newCode() })),
    };
    await this.save(batch, request.input, m);
    const { jobs, experiment: record } = this.records(batch);
    this.remember(batch, jobs, record);
    this.inputs.set(batch.input_ref, { input: request.input, pending: m });
    for (const job of jobs) this.queue.push(job.org, job.id);
    return { jobs, experiment: record };
  }

  async createFailedJob(request: CreateFailedJob): Promise<JobRecord> {
    this.take(request.org, request.plan, 1);
    const id = this.nextJobId++;
    const batch: BatchRecord = {
      first_job_id: id,
      org: request.org,
      analysis: request.analysis,
      created_at: new Date().toISOString(),
      warnings: request.warnings,
      input_ref: `j${id}`,
      ...(request.variant ? { variant: request.variant } : {}),
      jobs: [{ id, code: newCode() }],
      failure: request.failure,
    };
    await this.save(batch, undefined, 1);
    const { jobs } = this.records(batch);
    this.remember(batch, jobs, undefined);
    return jobs[0];
  }

  /** Takes the units now (synchronously) or throws QuotaExceededError. */
  private take(org: string, plan: number, units: number): void {
    const taken = this.quota.reserve(org, plan, units);
    if (!taken.ok) throw new QuotaExceededError(taken.status, units);
  }

  /** Saves a request (input, then the batch that is its charge); on failure undoes everything. */
  private async save(batch: BatchRecord, input: JobInput | undefined, units: number): Promise<void> {
    if (!this.persistence.durable) return;
    try {
      if (input) await this.persistence.saveInput(batch.input_ref, input);
      await this.persistence.saveBatch(batch);
    } catch (error) {
      this.quota.refund(batch.org, units);
      // Best effort (the disk may be full): the ids this request drew are not handed out again after a restart.
      // Awaited with the clean-up, so that the refusal is answered only once nothing of it is left on disk.
      await Promise.all([
        this.persistence.saveState(this.state()).catch(() => undefined),
        input ? this.persistence.deleteInput(batch.input_ref).catch(() => undefined) : undefined,
        this.persistence.deleteBatch(batch.first_job_id).catch(() => undefined),
      ]);
      throw storageError(error);
    }
  }

  // -------------------------------------------------------------------------------------------
  // Lookups

  async findJob(org: string, id: number, code: string): Promise<JobRecord | undefined> {
    const job = await this.jobRecord(id);
    if (!job || !sameCode(job.code, code) || job.org !== org || this.pastRetention(job)) return undefined;
    return job;
  }

  async findExperiment(org: string, id: number, code: string): Promise<ExperimentRecord | undefined> {
    const meta = this.byExperiment.get(id);
    const entry = meta && (await this.batchRecords(meta));
    const experiment = entry?.experiment;
    if (!entry || !experiment || !sameCode(experiment.code, code) || experiment.org !== org) return undefined;
    if (entry.jobs.every((job) => this.pastRetention(job))) return undefined;
    return experiment;
  }

  async experimentJobs(experiment: ExperimentRecord): Promise<JobRecord[]> {
    const meta = this.byExperiment.get(experiment.id);
    return (meta && (await this.batchRecords(meta)))?.jobs ?? [];
  }

  async expiredReason(kind: "job" | "experiment", id: number): Promise<string | undefined> {
    const meta = kind === "job" ? this.metaOf(id) : this.byExperiment.get(id);
    let past: boolean;
    if (!meta) past = id < (kind === "job" ? this.expiredBelowJob : this.expiredBelowExperiment);
    else {
      const entry = await this.batchRecords(meta);
      const jobs = kind === "job" ? entry?.jobs.filter((j) => j.id === id) : entry?.jobs;
      past = jobs !== undefined && jobs.length > 0 && jobs.every((job) => this.pastRetention(job));
    }
    if (!past) return undefined;
    return expiredMessage(kind, id, this.retentionMs);
  }

  async firstJobTime(org: string): Promise<Date | undefined> {
    const meta = this.batches.find((b) => b.org === org);
    return meta ? new Date(meta.created_at) : undefined;
  }

  private pastRetention(job: JobRecord): boolean {
    return job.finished_at !== undefined && Date.parse(job.finished_at) + this.retentionMs <= Date.now();
  }

  // -------------------------------------------------------------------------------------------
  // Queue and states

  async claim(): Promise<Claimed | undefined> {
    for (;;) {
      const id = this.queue.shift();
      if (id === undefined) return undefined;
      const job = await this.jobRecord(id);
      if (!job || job.status !== "queued") continue;
      const claimed = await this.start(job);
      if (claimed) return claimed;
    }
  }

  /**
   * Claims this queued job out of its turn (contract.ts `claimJob`: an inline job, which needs no
   * worker); undefined when it is not queued here.
   */
  async claimJob(id: number): Promise<Claimed | undefined> {
    const job = await this.jobRecord(id);
    if (!job || job.status !== "queued" || !this.queue.remove(job.org, id)) return undefined;
    return this.start(job);
  }

  /** Marks a job taken off the queue running, with its inputs; one whose inputs were lost fails instead (undefined). */
  private async start(job: JobRecord): Promise<Claimed | undefined> {
    job.status = "running";
    job.started_at = new Date().toISOString();
    const input = await this.input(job).catch((error: unknown) => {
      this.log(`job ${job.id}: its inputs could not be read: ${error instanceof Error ? error.message : String(error)}`);
      return undefined;
    });
    if (input) return { job, input };
    await this.fail(job, { message: "interrupted by a restart, and its inputs were lost", ...PROCESS_JOB });
    return undefined;
  }

  async claimSiblings(claimed: Claimed, max: number): Promise<Claimed[]> {
    const { job: first, input } = claimed;
    const out: Claimed[] = [];
    while (out.length < max) {
      const id = this.queue.peek(first.org);
      if (id === undefined) break;
      const job = await this.jobRecord(id);
      if (job && job.status === "queued" && (job.input_ref !== first.input_ref || job.variant !== first.variant)) break;
      this.queue.dropNext(first.org);
      if (!job || job.status !== "queued") continue;
      job.status = "running";
      job.started_at = new Date().toISOString();
      out.push({ job, input });
    }
    return out;
  }

  /** Jobs waiting to be claimed. */
  queued(): number {
    return this.queue.size;
  }

  private async input(job: JobRecord): Promise<JobInput | undefined> {
    const entry = this.inputs.get(job.input_ref);
    if (!entry) return undefined;
    entry.input ??= this.persistence.loadInput(job.input_ref);
    return entry.input;
  }

  async complete(job: JobRecord, json: ResultText, compact: JobRecord["compact"], finishedAt?: string): Promise<"completed" | "failed"> {
    if (this.finished(job)) return job.status as "completed" | "failed";
    this.finishing.add(job.id);
    try {
      if (this.persistence.durable) await this.persistence.saveResult(job.id, textOf(json));
    } catch (error) {
      const e = storageError(error);
      this.log(`job ${job.id}: its result could not be saved: ${"detail" in e ? String(e.detail) : e.message}`);
      this.finishing.delete(job.id);
      await this.fail(job, {
        message: storeErrorCode(e) === "storage_full" ? "its result could not be stored: the service's storage is full" : "its result could not be stored",
        ...PROCESS_JOB,
      });
      return "failed";
    }
    this.keepText(job.id, json);
    await this.finish(job, { status: "completed", finished_at: finishedAt ?? new Date().toISOString(), compact });
    return "completed";
  }

  async fail(job: JobRecord, failure: JobFailure): Promise<void> {
    if (this.finished(job)) return;
    this.finishing.add(job.id);
    await this.finish(job, { status: "failed", finished_at: new Date().toISOString(), failure });
  }

  /** Terminal, or becoming so: a second complete/fail does nothing. */
  private finished(job: JobRecord): boolean {
    return job.status === "completed" || job.status === "failed" || this.finishing.has(job.id);
  }

  /**
   * Runs once per job: saves its outcome, releases its input (the last job of a request removes
   * the input file), THEN shows the outcome (a reader never sees a terminal state that a restart
   * would not).
   */
  private async finish(job: JobRecord, outcome: Outcome): Promise<void> {
    if (job.started_at) outcome.started_at = job.started_at;
    let saved = true;
    if (this.persistence.durable) {
      try {
        await this.persistence.saveOutcome(job.id, outcome);
      } catch (error) {
        // Shown as finished now; without its outcome it runs again after a restart (paid once).
        saved = false;
        this.log(`job ${job.id}: its outcome could not be saved (${error instanceof Error ? error.message : String(error)}); it runs again after a restart`);
      }
    }
    const entry = this.inputs.get(job.input_ref);
    if (entry) {
      if (!saved) entry.keep = true;
      if (--entry.pending <= 0) {
        this.inputs.delete(job.input_ref);
        if (!entry.keep && this.persistence.durable) await this.persistence.deleteInput(job.input_ref).catch(() => undefined);
      }
    }
    applyOutcome(job, outcome);
    this.finishing.delete(job.id);
    const meta = this.metaOf(job.id);
    if (meta) {
      meta.unfinished = Math.max(0, meta.unfinished - 1);
      meta.lastFinished = Math.max(meta.lastFinished, Date.parse(outcome.finished_at));
      if (!saved) meta.pinned = true;
      this.evict();
    }
  }

  // -------------------------------------------------------------------------------------------
  // Results

  async readResult(job: JobRecord): Promise<string | undefined> {
    const cached = this.results.get(job.id);
    if (cached !== undefined) return unpackText(cached);
    if (!this.persistence.durable || this.pastRetention(job)) return undefined;
    const json = await this.persistence.loadResult(job.id);
    if (json !== undefined) this.keepText(job.id, json);
    return json;
  }

  /** @internal Resolves once every result text stored so far has been deflated or left as it is (packed.ts); deflates the waiting ones now. */
  whenPacked(): Promise<void> {
    this.packWaiting();
    return this.packing;
  }

  /**
   * Keeps a result's text in memory; a long one is deflated in the thread pool (at once, or once
   * the store is quiet: packed.ts), then kept so in its place. A deferred text (packed.ts) is
   * written when first read, or when it is deflated.
   */
  private keepText(jobId: number, json: ResultText): void {
    this.results.set(jobId, json);
    const chars = textChars(json);
    if (chars < PACK_FROM_CHARS) return;
    if (chars >= PACK_AT_ONCE_CHARS) return this.pack(jobId, json);
    this.waiting.push([jobId, json]);
    this.waitingChars += storedBytes(json);
    while (this.waitingChars > PACK_WAITING_CHARS) this.waitingChars -= storedBytes(this.waiting.shift()![1]);
    clearTimeout(this.quiet);
    this.quiet = setTimeout(() => this.packWaiting(), PACK_QUIET_MS);
    this.quiet.unref();
  }

  private packWaiting(): void {
    clearTimeout(this.quiet);
    this.quiet = undefined;
    for (const [jobId, json] of this.waiting.splice(0)) this.pack(jobId, json);
    this.waitingChars = 0;
  }

  /**
   * Deflates a stored text (a deferred one written first), and keeps the deflated bytes in its
   * place (or the written text, when deflating saves nothing) unless it was removed or replaced
   * meanwhile.
   */
  private pack(jobId: number, stored: ResultText): void {
    const packing = this.written(stored)
      .then((json) => packText(json))
      .then(
        (packed) => {
          if (packed !== undefined) this.results.swap(jobId, stored, packed);
          else if (typeof stored !== "string") this.results.swap(jobId, stored, stored.text);
        },
        (error: unknown) =>
          this.log(`job ${jobId}: its result text stays as it is (deflate failed: ${error instanceof Error ? error.message : String(error)})`),
      );
    this.packing = Promise.all([this.packing, packing]).then(() => undefined);
  }

  /**
   * The text; a deferred one written on a turn of its own, one after the other (~0.4 ms each for a
   * warm N=1,000 Grid's), so that the quiet time's writing of a burst's texts never holds the
   * event loop for long.
   */
  private written(stored: ResultText): Promise<string> {
    if (typeof stored === "string") return Promise.resolve(stored);
    const text = this.writing.then(() => new Promise<void>((resolve) => setImmediate(resolve))).then(() => stored.text);
    this.writing = text.then(
      () => undefined,
      () => undefined,
    );
    return text;
  }

  // -------------------------------------------------------------------------------------------
  // Retention

  expire(now: Date): Promise<number> {
    this.expiring ??= this.expireOnce(now.getTime()).finally(() => (this.expiring = undefined));
    return this.expiring;
  }

  /** Removes requests, oldest first, whose jobs all finished `retentionMs` before `now`. */
  private async expireOnce(now: number): Promise<number> {
    let removed = 0;
    while (this.batches.length > 0) {
      const batch = this.batches[0];
      if (batch.unfinished > 0 || batch.lastFinished + this.retentionMs > now) break;
      const jobIds = Array.from({ length: batch.count }, (_, i) => batch.first + i);
      const last = batch.first + batch.count - 1;
      const before = { job: this.expiredBelowJob, experiment: this.expiredBelowExperiment };
      this.expiredBelowJob = Math.max(this.expiredBelowJob, last + 1);
      if (batch.experimentId !== undefined) this.expiredBelowExperiment = Math.max(this.expiredBelowExperiment, batch.experimentId + 1);
      this.expiredUnits.set(batch.org, (this.expiredUnits.get(batch.org) ?? 0) + batch.count);
      if (this.persistence.durable) {
        try {
          // The watermark first: a crash before the files go leaves them to be removed at the next open.
          await this.persistence.saveState(this.state());
        } catch (error) {
          this.log(`retention: state.json could not be saved (${error instanceof Error ? error.message : String(error)}); will try again`);
          this.expiredUnits.set(batch.org, (this.expiredUnits.get(batch.org) ?? 0) - batch.count);
          this.expiredBelowJob = before.job;
          this.expiredBelowExperiment = before.experiment;
          break;
        }
      }
      this.batches.shift();
      const entry = this.loaded.get(batch.first);
      if (entry) {
        this.loaded.delete(batch.first);
        this.loadedJobs -= entry.jobs.length;
      }
      for (const id of jobIds) this.results.delete(id);
      if (batch.experimentId !== undefined) this.byExperiment.delete(batch.experimentId);
      this.inputs.delete(batch.inputRef);
      await this.removeFiles(batch.first, jobIds, batch.inputRef);
      removed += batch.count;
    }
    return removed;
  }

  private async removeFiles(first: number, jobIds: number[], inputRef: string): Promise<void> {
    if (!this.persistence.durable) return;
    try {
      for (const id of jobIds) await this.persistence.deleteJob(id);
      await this.persistence.deleteInput(inputRef);
      await this.persistence.deleteBatch(first);
    } catch (error) {
      this.log(
        `retention: files of request ${first} could not be removed (${error instanceof Error ? error.message : String(error)}); removed at the next start`,
      );
    }
  }

  private state(): ServiceState {
    return {
      version: 2,
      next_job_id: this.nextJobId,
      next_experiment_id: this.nextExperimentId,
      expired_below_job: this.expiredBelowJob,
      expired_below_experiment: this.expiredBelowExperiment,
      expired_units: Object.fromEntries(this.expiredUnits),
    };
  }

  /**
   * Uploaded X matrices (v2) in files: in the data dir's `uploads/` (emptied at start: a restart
   * forgets uploads), else in a temporary directory removed at close (uploads.ts).
   */
  uploads(settings: UploadSettings): Uploads {
    this.uploadStore ??= new UploadStore({ ...settings, dir: this.persistence.uploadsDir });
    return this.uploadStore;
  }

  private uploadStore: UploadStore | undefined;

  async close(): Promise<void> {
    clearTimeout(this.quiet);
    this.waiting.length = 0;
    this.waitingChars = 0;
    await this.uploadStore?.close().catch(() => undefined);
    await this.expiring?.catch(() => undefined);
    if (this.persistence.durable) await this.persistence.saveState(this.state()).catch(() => undefined);
    await this.persistence.flush();
  }
}

function applyOutcome(job: JobRecord, outcome: Outcome): void {
  job.status = outcome.status;
  if (outcome.started_at) job.started_at = outcome.started_at;
  job.finished_at = outcome.finished_at;
  if (outcome.failure) job.failure = outcome.failure;
  if (outcome.compact) job.compact = outcome.compact;
}
