/**
 * The worker_threads pool that runs jobs, so the HTTP thread stays responsive while Grids run.
 *
 * - At most `size` workers (default: the machine's available parallelism), started when work
 *   arrives; one job per worker at a time; jobs wait in FIFO order.
 * - A job's clock starts when it is handed to a ready worker. Past `timeoutMs` the worker is
 *   terminated and the job fails with "the job exceeded its time limit of N s".
 * - A job whose analysis throws fails with the error's message (the worker lives on).
 * - A worker that crashes or exits fails its job with the reason and is replaced when work waits.
 * - A worker that cannot start (out of file descriptors or memory, for a moment) fails no job:
 *   the pool tries again after a growing pause (0.05 s doubling up to 1 s) while jobs wait. Only
 *   a pool none of whose workers ever started (a broken installation) fails the waiting jobs
 *   after three tries, so nothing hangs there.
 *
 * Workers run `worker.ts` beside this file: the compiled `worker.js` from dist/, or, when the
 * TypeScript sources run (vitest, tsx), `worker.ts` through tsx's loader (threads/worker-script.ts;
 * a plain `--import tsx` in a worker's execArgv does not reach its entry module on Node 20).
 */
import { availableParallelism } from "node:os";
import type { Transferable, Worker } from "node:worker_threads";
import { startWorker } from "../threads/worker-script.js";
import { WORKER_MARK, type WorkerDecoded, type WorkerDone, type WorkerFailed, type WorkerReply, type WorkerResult, type WorkerTask } from "./worker.js";
import { brand, RbpBaseError } from "../errors/index.js";
import { PROCESS_JOB, type JobFailure } from "./store/records.js";
import type { Claimed } from "./store/contract.js";

/** LambdaError codes (docs/api.md section 3). */
export const ERROR_PROCESS_JOB = PROCESS_JOB.error_code;
export const ERROR_PREDICTION_FAILED = 3;
/** LambdaStatus "processing": the stage where a running job fails. */
export const STATUS_PROCESSING = PROCESS_JOB.status_code;

/** The job failed (code `pool_job_failed`); `failure` is what its readers are told. */
export class PoolJobError extends RbpBaseError {
  static {
    brand(this, "PoolJobError");
  }
  override readonly name = "PoolJobError";
  constructor(readonly failure: JobFailure) {
    super(failure.message, "pool_job_failed");
  }
}

/** The pool was closed before the job finished (code `pool_closed`; the job is not failed: a data dir re-queues it). */
export class PoolClosedError extends RbpBaseError {
  static {
    brand(this, "PoolClosedError");
  }
  override readonly name = "PoolClosedError";
  constructor() {
    super("the service is shutting down", "pool_closed");
  }
}

/** A queued task taken back by its caller before it started (`withdraw`; code `pool_withdrawn`). */
export class PoolWithdrawnError extends RbpBaseError {
  static {
    brand(this, "PoolWithdrawnError");
  }
  override readonly name = "PoolWithdrawnError";
  constructor() {
    super("the task was withdrawn before it started", "pool_withdrawn");
  }
}

/**
 * What a job that `run` rejected records: the pool's failure (PoolJobError), or the error's
 * message as a process-job failure; undefined when the pool was closed (the job is not failed).
 *
 * @example
 * const failure = poolFailure(error); if (failure) await store.fail(job, failure);
 */
export function poolFailure(error: unknown): JobFailure | undefined {
  const code = error instanceof RbpBaseError ? error.code : undefined;
  if (code === "pool_closed") return undefined;
  if (code === "pool_job_failed") return (error as PoolJobError).failure;
  return { message: error instanceof Error ? error.message : String(error), ...PROCESS_JOB };
}

/**
 * What a job whose analysis threw records: the engine's own errors by their message, any other
 * with its class name (the pool's failed job, an experiment's failed row, an inline run).
 *
 * @example
 * await store.fail(job, jobFailureOf({ type: "failed", id: job.id, name: "ComputationError", message: "singular" }));
 */
export function jobFailureOf(reply: WorkerFailed): JobFailure {
  const known = reply.name === "ComputationError" || reply.name === "InvalidInputError";
  return { message: known ? reply.message : `${reply.name}: ${reply.message}`, error_code: ERROR_PREDICTION_FAILED, status_code: STATUS_PROCESSING };
}

export interface PoolSettings {
  size?: number;
  /** Time limit of one job in milliseconds. */
  timeoutMs: number;
  /** Starts one worker; default: worker.ts beside this module. */
  spawn?: () => Worker;
  /**
   * Called after any task has left the pool (done, failed, withdrawn, stopped, or refused at
   * close): `capacity` may have grown. The service's core claims queued jobs then (core.ts `pump`).
   */
  onTaskEnd?: () => void;
}

/** How a task is run: see `WorkerPool.run`. */
export interface RunSettings {
  onStart?: () => void;
  /** Absolute time (ms) by which the task must end: the rest of its job's time limit (a part of a spread Grid). */
  deadline?: number;
  /** Moved, not copied, to the worker with the task (a spread Grid's port). */
  transfer?: readonly Transferable[];
  /** Asked when a worker is free for the task: false withdraws it unstarted (a spread Grid's helper no longer needed). */
  wanted?: () => boolean;
  /** The task's result decoded, posted before its text (worker.ts `WorkerDecoded`); the task runs on until its reply. */
  onDecoded?: (early: WorkerDecoded) => void;
}

interface Pending extends RunSettings {
  task: WorkerTask;
  resolve: (done: WorkerResult) => void;
  reject: (error: Error) => void;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  retired: boolean;
  current?: Pending;
  timer?: NodeJS.Timeout;
}

export function defaultSpawn(): Worker {
  return startWorker("worker", import.meta.url, { workerData: { mark: WORKER_MARK } });
}

export class WorkerPool {
  readonly size: number;
  private readonly timeoutMs: number;
  private readonly spawn: () => Worker;
  private readonly onTaskEnd: () => void;
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private closed = false;
  private startFailures = 0;
  /** A worker of this pool has been ready once: start failures are then transient. */
  private everReady = false;
  private retryTimer: NodeJS.Timeout | undefined;
  /** Pauses taken since a worker last became ready. */
  private retries = 0;

  constructor(settings: PoolSettings) {
    this.size = Math.max(1, Math.floor(settings.size ?? availableParallelism()));
    // setTimeout cannot wait longer than 2^31 - 1 ms (it would fire at once).
    this.timeoutMs = Math.min(Math.max(1, settings.timeoutMs), 2 ** 31 - 1);
    this.spawn = settings.spawn ?? defaultSpawn;
    this.onTaskEnd = settings.onTaskEnd ?? (() => {});
  }

  /**
   * Runs a task; resolves with its result or rejects with PoolJobError (or PoolClosedError).
   * - `onStart`: called when a worker takes the task.
   * - `deadline`: a task that is one part of a job gives the job's deadline (absolute ms); it then
   *   fails with the job's time-limit reason at the deadline, or at its own limit if that is first.
   * - `transfer`: what the task moves to the worker instead of copying (a MessagePort).
   * - `wanted`: asked when a worker is free for the task; false rejects it with
   *   PoolWithdrawnError instead of running it.
   */
  run<R extends WorkerResult = WorkerDone>(task: WorkerTask, settings: RunSettings = {}): Promise<R> {
    if (this.closed) return Promise.reject(new PoolClosedError());
    return new Promise<R>((resolve, reject) => {
      const ended =
        <A>(settle: (a: A) => void) =>
        (a: A) => {
          settle(a);
          this.onTaskEnd();
        };
      // Extended by Object.assign, not `{ ...settings, task }`: see definedOnly.
      this.queue.push(Object.assign(definedOnly(settings), { task, resolve: ended(resolve as (done: WorkerResult) => void), reject: ended(reject) }));
      this.pump();
    });
  }

  /**
   * Takes a task that no worker has started yet out of the queue (true), rejecting it with
   * PoolWithdrawnError; false when it has started or is unknown.
   */
  withdraw(task: WorkerTask): boolean {
    const index = this.queue.findIndex((p) => p.task === task);
    if (index < 0) return false;
    const [pending] = this.queue.splice(index, 1);
    pending.reject(new PoolWithdrawnError());
    return true;
  }

  /** How many more tasks `run` can take now without waiting (free workers, started or not). */
  capacity(): number {
    if (this.closed) return 0;
    const busy = this.slots.filter((s) => s.current).length;
    return Math.max(0, this.size - busy - this.queue.length);
  }

  /** Whether `close` was called (a task `run` now rejects with PoolClosedError). */
  isClosed(): boolean {
    return this.closed;
  }

  /** Jobs waiting for a worker, and jobs running. */
  stats(): { queued: number; running: number; workers: number } {
    return { queued: this.queue.length, running: this.slots.filter((s) => s.current).length, workers: this.slots.length };
  }

  /** Stops every worker; unfinished jobs reject with PoolClosedError. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.retryTimer);
    const waiting = this.queue.splice(0);
    for (const p of waiting) p.reject(new PoolClosedError());
    const slots = this.slots.splice(0);
    await Promise.all(
      slots.map((slot) => {
        slot.retired = true;
        clearTimeout(slot.timer);
        slot.current?.reject(new PoolClosedError());
        slot.current = undefined;
        return slot.worker.terminate().catch(() => undefined);
      }),
    );
  }

  private pump(): void {
    if (this.closed) return;
    for (const slot of this.slots) {
      if (!(slot.ready && !slot.current && !slot.retired)) continue;
      let next = this.queue.shift();
      while (next?.wanted && !next.wanted()) {
        next.reject(new PoolWithdrawnError());
        next = this.queue.shift();
      }
      if (!next) break;
      this.assign(slot, next);
    }
    const starting = this.slots.filter((s) => !s.ready).length;
    let needed = Math.min(this.queue.length - starting, this.size - this.slots.length);
    while (needed-- > 0) this.startSlot();
  }

  private startSlot(): void {
    let worker: Worker;
    try {
      worker = this.spawn();
    } catch (error) {
      this.startFailed(`a worker could not be started: ${(error as Error).message}`);
      return;
    }
    const slot: Slot = { worker, ready: false, retired: false };
    this.slots.push(slot);
    worker.on("message", (reply: WorkerReply) => this.onMessage(slot, reply));
    worker.on("error", (error: Error) => this.retire(slot, `the worker running it crashed: ${error.message}`));
    worker.on("exit", (code) => this.retire(slot, `the worker running it exited unexpectedly (exit code ${code})`));
  }

  private onMessage(slot: Slot, reply: WorkerReply): void {
    if (slot.retired) return;
    if (reply.type === "ready") {
      slot.ready = true;
      this.startFailures = 0;
      this.retries = 0;
      this.everReady = true;
      this.pump();
      return;
    }
    const current = slot.current;
    if (!current || current.task.id !== reply.id) return;
    if (reply.type === "decoded") {
      try {
        current.onDecoded?.(reply);
      } catch {
        // a bookkeeping hook must not stop the job
      }
      return;
    }
    clearTimeout(slot.timer);
    slot.current = undefined;
    if (reply.type !== "failed") current.resolve(reply);
    else {
      current.reject(new PoolJobError(jobFailureOf(reply)));
    }
    this.pump();
  }

  private assign(slot: Slot, pending: Pending): void {
    slot.current = pending;
    try {
      pending.onStart?.();
    } catch {
      // a bookkeeping hook must not stop the job
    }
    const limitMs = pending.deadline !== undefined ? Math.max(1, Math.min(this.timeoutMs, pending.deadline - Date.now())) : this.timeoutMs;
    slot.timer = setTimeout(() => this.retire(slot, `the job exceeded its time limit of ${seconds(this.timeoutMs)} s`), limitMs);
    try {
      slot.worker.postMessage(pending.task, pending.transfer);
    } catch (error) {
      this.retire(slot, `the job could not be sent to a worker: ${(error as Error).message}`);
    }
  }

  /** Takes a worker out of service (crash, exit, time limit); fails its job; replaces it if needed. */
  private retire(slot: Slot, reason: string): void {
    if (slot.retired || this.closed) return;
    slot.retired = true;
    clearTimeout(slot.timer);
    const index = this.slots.indexOf(slot);
    if (index >= 0) this.slots.splice(index, 1);
    void slot.worker.terminate().catch(() => undefined);
    const current = slot.current;
    slot.current = undefined;
    if (current) {
      current.reject(new PoolJobError({ message: reason, error_code: ERROR_PROCESS_JOB, status_code: STATUS_PROCESSING }));
    } else if (!slot.ready) {
      this.startFailed(reason.replace("the worker running it", "a new worker"));
      return;
    }
    this.pump();
  }

  private startFailed(reason: string): void {
    this.startFailures++;
    if (!this.everReady && this.startFailures >= 3) {
      // No worker of this pool ever started: a broken installation. Fail what waits (later jobs try again).
      this.startFailures = 0;
      for (const p of this.queue.splice(0)) {
        p.reject(new PoolJobError({ message: `no worker could be started: ${reason}`, error_code: ERROR_PROCESS_JOB, status_code: STATUS_PROCESSING }));
      }
      return;
    }
    if (this.startFailures < 2) {
      this.pump();
      return;
    }
    // A passing shortage (EMFILE, ENOMEM): the jobs wait; try again after a pause.
    if (this.retryTimer) return;
    const delay = Math.min(1000, 50 * 2 ** this.retries++);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.pump();
    }, delay);
    this.retryTimer.unref();
  }
}

function seconds(ms: number): string {
  return String(Math.round(ms) / 1000);
}

/**
 * `value`'s defined entries, as a new object to extend (`Object.assign`): V8 gave an object made by
 * a spread and then extended a new shape each time (a few us to make, and slower reads after;
 * docs/architecture.md).
 */
function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * The worker thread's task for a claimed job: its row's theta, the batch's data and options, and
 * results rounded to `decimals` (the embedded core and `rbp worker` alike).
 *
 * @example
 * const done = await pool.run(taskOfClaimed(claimed, 6));
 */
export function taskOfClaimed({ job, input }: Claimed, decimals: number | null): WorkerTask {
  return {
    id: job.id,
    analysis: input.analysis,
    y: input.data.y,
    X: input.data.X,
    rows: input.data.rows,
    cols: input.data.cols,
    theta: input.thetas[job.row],
    options: input.options,
    decimals,
    ...(job.variant ? { variant: job.variant } : {}),
  };
}
