/**
 * The one interface between the service (core.ts, the routes) and where its jobs, results and
 * quota live. Nothing above it knows which store is in use: the embedded store (embedded.ts, in
 * memory or in a `--data-dir`) and a database store implement the same contract.
 *
 * ## Contract (every implementation keeps all of it)
 *
 * **Money.** `createJobs` / `createFailedJob` reserve the quota units and create the jobs in ONE
 * atomic step: either both happen and are durable before the promise resolves, or neither
 * happens (the promise rejects and nothing is charged, nothing is left behind: no job, no
 * input, no temporary file). A request of M theta rows costs M units; it fails with
 * `QuotaExceededError` (carrying the status) when fewer than M remain. After any crash, the
 * units used by an organisation equal the units of its jobs that exist (plus those of jobs
 * removed by retention): never a charge without a job, never a job without a charge.
 *
 * **Ids.** Job and experiment ids are positive integers, increasing, never reused, even for a
 * request that was refused after its ids were drawn. (The embedded store records its counters at
 * a refusal and at close, best effort: after a crash it may hand out again the ids of a refused
 * request, under which nothing was ever stored.) Codes are 16 hex characters of
 * crypto.randomBytes; a lookup needs the organisation, the id and the code (compared in constant
 * time); anything else is "not found" (another organisation's job looks like a missing one).
 *
 * **Storage.** A request is stored once (its X, y, options, warnings), not once per theta row.
 * A store bounds the resources it takes (open files, memory) whatever one request asks for.
 *
 * **Queue.** `claim()` hands out queued jobs, each to exactly one claimer, fairly across
 * organisations (round robin over the organisations that have queued jobs, oldest job first
 * within one), marking it `running` with `started_at`. A claimed job that never reaches
 * `complete`/`fail` (the process stopped) is queued again: at the next open (embedded), or when
 * its lease expires (database). It is never charged twice.
 *
 * **Terminal state.** queued -> running -> completed | failed, once. `complete` stores the result
 * and then the state; if the result cannot be stored, the job is recorded as failed instead (and
 * resolves "failed"). `fail` on a job already terminal does nothing. The terminal state recorded
 * is the one served after any restart. A reader never sees "completed" without a result (unless
 * the result was later removed by retention: then `readResult` resolves undefined and the caller
 * answers 410).
 *
 * **Retention.** Finished jobs, their results and their experiments are removed after the
 * retention the store was opened with (`expire`); a result may also be evicted earlier to keep
 * memory bounded (memory store). `expiredReason` tells a caller that an id it asks for existed
 * and is gone (410), as opposed to never existing (404).
 *
 * **Errors.** Writes that fail for lack of space reject with `StorageFullError`; for lack of
 * file descriptors or a busy database with `StorageBusyError` (the caller answers 507 / 503 with
 * a readable message; the detail goes to the log, never to a client). Opening a store whose
 * saved state is damaged rejects with `DamagedStoreError` saying what to do; a store never
 * silently resets quota.
 *
 * **Records.** Records returned are snapshots for reading; callers never mutate them.
 *
 * Async everywhere a database needs a round trip. `quotaStatus`, `findJob` etc. may answer from
 * memory in the embedded store.
 */
import type { Analysis } from "../../api/options.js";
import type { CensorOperator } from "../../engine/options.js";
import type { ExperimentRecord, JobFailure, JobInput, JobRecord, JobVariant } from "./records.js";
import type { QuotaStatus } from "../quota.js";
import type { ResolvedField } from "../fields.js";
import type { UploadSettings, Uploads } from "../uploads.js";
import type { StoreOutage } from "../outage.js";
import type { ResultText } from "./packed.js";

export type { ExperimentRecord, JobFailure, JobInput, JobRecord, JobStatus, JobVariant } from "./records.js";
export type { QuotaStatus } from "../quota.js";

/** What `createJobs` needs: who pays (and their plan), and the request, stored once. */
export interface CreateJobs {
  org: string;
  /** The organisation's plan size in units (from the credentials); the store checks used + units <= plan. */
  plan: number;
  analysis: Analysis;
  /** X, y, theta rows (one job per row; an experiment when there are several) and options. */
  input: JobInput;
  /** Notes from parsing the request, shown on each receipt (stored once per request). */
  warnings: string[];
  thetaSource?: "last_row_of_X";
  /** The resolved censor operator (v2 `most_eval`). */
  censorOperator?: CensorOperator;
  variant?: JobVariant;
}

/** What `createFailedJob` needs: one paid job that failed before it could run (v2 upload missing). */
export interface CreateFailedJob {
  org: string;
  plan: number;
  analysis: Analysis;
  failure: JobFailure;
  warnings: string[];
  variant?: JobVariant;
}

export interface Created {
  jobs: JobRecord[];
  experiment?: ExperimentRecord;
}

/** A job handed to one claimer, with the inputs it runs on. */
export interface Claimed {
  job: JobRecord;
  input: JobInput;
}

export interface Store {
  /** True when jobs, results and quota survive a restart. */
  readonly durable: boolean;

  /** Units of this organisation: `plan` from the credentials, used from the store. */
  quotaStatus(org: string, plan: number): Promise<QuotaStatus>;

  /** Reserves `input.thetas.length` units and creates the jobs, atomically (see the contract). */
  createJobs(request: CreateJobs): Promise<Created>;

  /** Reserves one unit and records one job already failed, atomically. */
  createFailedJob(request: CreateFailedJob): Promise<JobRecord>;

  findJob(org: string, id: number, code: string): Promise<JobRecord | undefined>;
  findExperiment(org: string, id: number, code: string): Promise<ExperimentRecord | undefined>;
  /** The jobs of an experiment, in row order. */
  experimentJobs(experiment: ExperimentRecord): Promise<JobRecord[]>;
  /**
   * Why a job or experiment with this id is gone (removed by retention), or undefined when the
   * store has no record that it ever existed.
   */
  expiredReason(kind: "job" | "experiment", id: number): Promise<string | undefined>;
  /** When the organisation's oldest job still kept was created (v2 quota period). */
  firstJobTime(org: string): Promise<Date | undefined>;

  /** The next queued job (fair across organisations), now running; undefined when none waits. */
  claim(): Promise<Claimed | undefined>;
  /**
   * Optional: up to `max` more queued jobs of the same request as `claimed` (an experiment's next
   * rows, same inputs and variant), now running, as part of the same turn of its organisation.
   * The service runs them in one worker task so they share what does not depend on theta.
   */
  claimSiblings?(claimed: Claimed, max: number): Promise<Claimed[]>;
  /**
   * Optional: this queued job, now running, out of the queue's order; undefined when it is not
   * queued (any more). For a job that needs no worker (the embedded service's inline Grid, run on
   * the calling thread): it takes nothing from the jobs waiting for workers, so their fair order
   * is unchanged. A store shared by processes (PostgreSQL) need not have it: its jobs never run inline.
   */
  claimJob?(id: number): Promise<Claimed | undefined>;
  /**
   * Stores the result, then marks the job completed; resolves with the terminal state recorded.
   * `finishedAt` (ISO time): when the job ended, if earlier than now (the service answered its
   * reader in process before the text was written; a store may keep its own clock instead).
   * `json` may be a text written when first needed (packed.ts `DeferredText`).
   */
  complete(job: JobRecord, json: ResultText, compact: JobRecord["compact"], finishedAt?: string): Promise<"completed" | "failed">;
  /** Marks the job failed (nothing when it is already completed or failed). */
  fail(job: JobRecord, failure: JobFailure): Promise<void>;

  /** The `results` JSON of a completed job; undefined when it is gone (retention, eviction). */
  readResult(job: JobRecord): Promise<string | undefined>;
  /**
   * Optional: one field of a completed job's results without loading the whole result into this
   * process (a database reads `results #> path`). `segments` are the URL's field segments,
   * resolved exactly as fields.ts `resolveField` does (snake_case aliases, array indexes; a 404
   * ServiceError for an unknown field). Resolves undefined when the result is gone. Without this
   * method the caller reads the whole result with `readResult` and resolves the field itself.
   */
  readResultField?(job: JobRecord, segments: string[]): Promise<ResolvedField | undefined>;

  /**
   * Optional: resolves once the job is completed or failed by any process sharing the store (a
   * database's workers), or after `timeoutMs`, or when `signal` aborts. Without it, the service
   * wakes waiters when its own pool finishes a job (the embedded store: the only runner).
   */
  waitForJob?(jobId: number, timeoutMs: number, signal?: AbortSignal): Promise<void>;

  /**
   * Optional: calls `wake` whenever jobs may have become claimable without this process creating
   * them (another front end's POST, a lease that expired), so the service asks `claim()` again.
   * A store shared by several processes needs it; the embedded store does not.
   */
  onClaimable?(wake: () => void): void;

  /**
   * Optional: uploaded X matrices (v2) kept in the store, so that every front end sharing it
   * signs, accepts and finds the same uploads. Without it, each process keeps its own in memory.
   */
  uploads?(settings: UploadSettings): Uploads;

  /**
   * Optional: why the store cannot be used right now (outage.ts), or undefined. With `error` (one a
   * store operation threw): whether it says the store is unreachable (a refused connection, a data
   * dir that is gone). Without: a quick check before a request is served (the file store: is its
   * directory there?), synchronous and cheap.
   */
  outage?(error?: unknown): StoreOutage | undefined;

  /** Removes what is past its retention at `now`; resolves with the number of jobs removed. */
  expire(now: Date): Promise<number>;
  /** Waits for writes in flight and releases files / connections. Unfinished jobs stay queued. */
  close(): Promise<void>;
}
