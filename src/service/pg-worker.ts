/**
 * A worker process of the team service (`rbp worker --database URL`): claims jobs from the
 * PostgreSQL store (store/pg/) and runs them on its own worker_threads pool (pool.ts, the same
 * engine threads as the embedded service), as many at a time as it has threads.
 *
 * - Wakes on `rbp_jobs` notifications and polls every `pollMs` as well (a missed notification, a
 *   lease that expired because another worker died, a database that came back).
 * - Renews the leases of the jobs it runs every `leaseMs / 3`; a job whose lease it lost (it was
 *   cut off longer than the lease) is finished by whoever holds it now, never by this worker.
 * - A completion that cannot be written (the database is restarting) is retried until the lease
 *   would have expired; after that the job is left to be re-run elsewhere, and is charged once
 *   either way (quota is taken when jobs are created, never when they run).
 * - `close()` (SIGINT/SIGTERM in `rbp worker`) stops claiming, stops the threads, and hands the
 *   jobs it held back to the queue at once, so nothing waits for a lease to expire.
 *
 * @example
 * const worker = await startPgWorker({ database: "postgres://rbp@127.0.0.1/rbp", workers: 2 });
 * // ... later
 * await worker.close();
 */
import pg from "pg";
import { poolFailure, taskOfClaimed, WorkerPool, type PoolSettings } from "./pool.js";
import { PgQueue, type ClaimedJob } from "./store/pg/queue.js";

export interface PgWorkerOptions {
  /** postgres:// URL of the team service's database. */
  database: string;
  /** Worker threads, i.e. jobs run at once. Default 1. */
  workers?: number;
  /** Lease of a claimed job in ms; a dead worker's job runs again this long after it stopped renewing. Default 30000. */
  leaseMs?: number;
  /** Poll interval in ms. Default 1000. */
  pollMs?: number;
  /** Time limit of one job in ms. Default 600000. */
  jobTimeoutMs?: number;
  /** Operational notes (never secrets). */
  log?: (line: string) => void;
  /** Starts one engine thread (tests). */
  spawn?: PoolSettings["spawn"];
}

export interface PgWorker {
  /** This process's lease owner name (host:pid:random), as stored in rbp_jobs.ran_by. */
  owner: string;
  /** Jobs finished by this process: completed and failed. */
  stats(): { completed: number; failed: number; running: number };
  close(): Promise<void>;
}

export async function startPgWorker(options: PgWorkerOptions): Promise<PgWorker> {
  const size = Math.max(1, options.workers ?? 1);
  const leaseMs = options.leaseMs ?? 30_000;
  const queue = await PgQueue.open(options.database, { leaseMs, poolSize: Math.min(10, size + 2) });
  const threads = new WorkerPool({ size, timeoutMs: options.jobTimeoutMs ?? 600_000, spawn: options.spawn });
  const loop = new WorkerLoop(queue, threads, size, leaseMs, options.log ?? (() => {}));
  await loop.start(options.database, options.pollMs ?? 1000);
  return {
    owner: queue.owner,
    stats: () => loop.stats(),
    close: () => loop.close(),
  };
}

/** One worker process's loop: claim while threads are free, run, write the outcome, renew leases. */
class WorkerLoop {
  private readonly running = new Set<number>();
  private readonly counts = { completed: 0, failed: 0 };
  private closing = false;
  private pumping = false;
  private again = false;
  private listener: pg.Client | undefined;
  private poll: NodeJS.Timeout | undefined;
  private renewer: NodeJS.Timeout | undefined;
  private closed: Promise<void> | undefined;

  constructor(
    private readonly queue: PgQueue,
    private readonly threads: WorkerPool,
    private readonly size: number,
    private readonly leaseMs: number,
    private readonly log: (line: string) => void,
  ) {}

  /** Listens for `rbp_jobs`, polls every `pollMs`, renews leases every `leaseMs / 3`, and claims. */
  async start(database: string, pollMs: number): Promise<void> {
    this.poll = setInterval(() => {
      if (!this.listener) void this.listen(database);
      void this.pump();
    }, pollMs);
    this.renewer = setInterval(() => this.renew(), Math.max(50, Math.floor(this.leaseMs / 3)));
    await this.listen(database);
    void this.pump();
    this.log(`worker ${this.queue.owner}: ${this.size} thread(s), lease ${this.leaseMs} ms`);
  }

  stats(): { completed: number; failed: number; running: number } {
    return { ...this.counts, running: this.running.size };
  }

  /** Stops claiming and the threads, and hands the jobs it held back to the queue at once. */
  close(): Promise<void> {
    this.closed ??= (async () => {
      this.closing = true;
      clearInterval(this.poll);
      clearInterval(this.renewer);
      const held = [...this.running];
      await this.threads.close();
      await this.queue.release(held).catch(() => undefined);
      await this.listener?.end().catch(() => undefined);
      await this.queue.close();
    })();
    return this.closed;
  }

  /** Claims jobs while threads are free (once at a time; a call meanwhile makes it look again). */
  private async pump(): Promise<void> {
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    try {
      do {
        this.again = false;
        while (!this.closing && this.running.size < this.size) {
          const claimed = await this.queue.claim();
          if (!claimed) break;
          this.running.add(claimed.job.id);
          void this.runJob(claimed);
        }
      } while (this.again && !this.closing);
    } catch (error) {
      this.log(`claiming: ${(error as Error).message} (retrying)`);
    } finally {
      this.pumping = false;
    }
  }

  private async runJob(claimed: ClaimedJob): Promise<void> {
    const { job } = claimed;
    const task = taskOfClaimed(claimed, claimed.decimals);
    try {
      const done = await this.threads.run(task);
      await this.persist(`job ${job.id}`, () => this.queue.complete(job.id, done.json, { yhat: done.yhat, fit: done.fit }));
      this.counts.completed++;
    } catch (error) {
      const failure = poolFailure(error);
      if (failure === undefined) return; // the threads were closed: the job goes back to the queue
      await this.persist(`job ${job.id}`, () => this.queue.fail(job.id, failure));
      this.counts.failed++;
    } finally {
      this.running.delete(job.id);
      void this.pump();
    }
  }

  /** Retries a write while the database is unreachable, for at most the lease. */
  private async persist(what: string, write: () => Promise<boolean>): Promise<void> {
    const until = Date.now() + this.leaseMs;
    for (let delay = 100; ; delay = Math.min(delay * 2, 2000)) {
      try {
        if (!(await write())) this.log(`${what}: lease lost, left to the worker that holds it now`);
        return;
      } catch (error) {
        if (this.closing || Date.now() > until) {
          this.log(`${what}: could not be written (${(error as Error).message}); it will run again elsewhere`);
          return;
        }
        await sleep(delay);
      }
    }
  }

  private renew(): void {
    void this.queue.renew([...this.running]).then(
      // A job that finished meanwhile is not lost; one still running here is.
      (lost) => lost.filter((id) => this.running.has(id)).forEach((id) => this.log(`job ${id}: lease lost to another worker`)),
      () => undefined,
    );
  }

  /** A connection that LISTENs for `rbp_jobs` and claims on each; dropped when it fails (the poll connects again). */
  private async listen(database: string): Promise<void> {
    if (this.closing) return;
    const client = new pg.Client({ connectionString: database });
    const down = () => {
      if (this.listener === client) this.listener = undefined;
    };
    client.on("error", down);
    client.on("end", down);
    client.on("notification", () => void this.pump());
    try {
      await client.connect();
      await client.query("LISTEN rbp_jobs");
      this.listener = client;
    } catch {
      void client.end().catch(() => undefined);
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
