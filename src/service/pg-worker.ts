/**
 * A worker process of the team service (`rbp worker --database URL`): claims jobs from the
 * PostgreSQL store (postgres.ts) and runs them on its own worker_threads pool (pool.ts, the same
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
import { PoolJobError, PoolClosedError, WorkerPool, ERROR_PROCESS_JOB, STATUS_PROCESSING, type PoolSettings } from "./pool.js";
import { PgQueue, type ClaimedJob, type LoadedInput } from "./postgres.js";

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
  const pollMs = options.pollMs ?? 1000;
  const log = options.log ?? (() => {});
  const queue = await PgQueue.open(options.database, { leaseMs, poolSize: Math.min(10, size + 2) });
  const threads = new WorkerPool({ size, timeoutMs: options.jobTimeoutMs ?? 600_000, spawn: options.spawn });
  const running = new Set<number>();
  const inputs = new Map<number, Promise<LoadedInput | undefined>>();
  const counts = { completed: 0, failed: 0 };
  let closing = false;
  let pumping = false;
  let again = false;
  let listener: pg.Client | undefined;

  const input = (id: number): Promise<LoadedInput | undefined> => {
    let loaded = inputs.get(id);
    if (!loaded) {
      loaded = queue.loadInput(id);
      loaded.catch(() => inputs.delete(id));
      inputs.set(id, loaded);
      // A few inputs at most: the rows of one experiment share one.
      while (inputs.size > 8) inputs.delete(inputs.keys().next().value!);
    }
    return loaded;
  };

  /** Retries a write while the database is unreachable, for at most the lease. */
  const persist = async (what: string, write: () => Promise<boolean>): Promise<void> => {
    const until = Date.now() + leaseMs;
    for (let delay = 100; ; delay = Math.min(delay * 2, 2000)) {
      try {
        if (!(await write())) log(`${what}: lease lost, left to the worker that holds it now`);
        return;
      } catch (error) {
        if (closing || Date.now() > until) {
          log(`${what}: could not be written (${(error as Error).message}); it will run again elsewhere`);
          return;
        }
        await sleep(delay);
      }
    }
  };

  const runJob = async (claimed: ClaimedJob): Promise<void> => {
    const { job } = claimed;
    try {
      const loaded = await input(claimed.inputId);
      if (!loaded) {
        await persist(`job ${job.id}`, () =>
          queue.fail(job.id, { message: "its inputs were lost", error_code: ERROR_PROCESS_JOB, status_code: STATUS_PROCESSING }),
        );
        counts.failed++;
        return;
      }
      const { input: i, decimals } = loaded;
      const task = {
        id: job.id,
        analysis: i.analysis,
        y: i.data.y,
        X: i.data.X,
        rows: i.data.rows,
        cols: i.data.cols,
        theta: i.thetas[job.row],
        options: i.options,
        decimals,
        ...(job.variant ? { variant: job.variant } : {}),
      };
      try {
        const done = await threads.run(task);
        await persist(`job ${job.id}`, () => queue.complete(job.id, done.json, { yhat: done.yhat, fit: done.fit }));
        counts.completed++;
      } catch (error) {
        if (error instanceof PoolClosedError) return;
        const failure =
          error instanceof PoolJobError
            ? error.failure
            : { message: error instanceof Error ? error.message : String(error), error_code: ERROR_PROCESS_JOB, status_code: STATUS_PROCESSING };
        await persist(`job ${job.id}`, () => queue.fail(job.id, failure));
        counts.failed++;
      }
    } catch (error) {
      log(`job ${job.id}: ${(error as Error).message}`);
    } finally {
      running.delete(job.id);
      void pump();
    }
  };

  const pump = async (): Promise<void> => {
    if (pumping) {
      again = true;
      return;
    }
    pumping = true;
    try {
      do {
        again = false;
        while (!closing && running.size < size) {
          const claimed = await queue.claim();
          if (!claimed) break;
          running.add(claimed.job.id);
          void runJob(claimed);
        }
      } while (again && !closing);
    } catch (error) {
      log(`claiming: ${(error as Error).message} (retrying)`);
    } finally {
      pumping = false;
    }
  };

  const listen = async (): Promise<void> => {
    if (closing) return;
    const client = new pg.Client({ connectionString: options.database });
    const down = () => {
      if (listener === client) listener = undefined;
    };
    client.on("error", down);
    client.on("end", down);
    client.on("notification", () => void pump());
    try {
      await client.connect();
      await client.query("LISTEN rbp_jobs");
      listener = client;
    } catch {
      void client.end().catch(() => undefined);
    }
  };

  const poll = setInterval(() => {
    if (!listener) void listen();
    void pump();
  }, pollMs);
  const renew = setInterval(
    () => {
      void queue.renew([...running]).then(
        // A job that finished meanwhile is not lost; one still running here is.
        (lost) => lost.filter((id) => running.has(id)).forEach((id) => log(`job ${id}: lease lost to another worker`)),
        () => undefined,
      );
    },
    Math.max(50, Math.floor(leaseMs / 3)),
  );

  await listen();
  void pump();
  log(`worker ${queue.owner}: ${size} thread(s), lease ${leaseMs} ms`);

  return {
    owner: queue.owner,
    stats: () => ({ ...counts, running: running.size }),
    async close() {
      if (closing) return;
      closing = true;
      clearInterval(poll);
      clearInterval(renew);
      const held = [...running];
      await threads.close();
      await queue.release(held).catch(() => undefined);
      await listener?.end().catch(() => undefined);
      await queue.close();
    },
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
