/**
 * The PostgreSQL store's queue, as one process that runs jobs sees it (the front end's PgStore
 * with engine threads, and `rbp worker`, pg-worker.ts): claim a job with its inputs, renew the
 * leases held, finish a job (only while holding its lease), release held jobs at shutdown.
 */
import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import type pg from "pg";
import type { Analysis } from "../../../api/options.js";
import { decodeValue, PROCESS_JOB, type JobFailure, type JobInput, type JobRecord } from "../records.js";
import { checkSchema } from "./schema.js";
import { makePool } from "./connection.js";
import { bytesF64, JOB_COLUMNS, toJob, type JobRow } from "./rows.js";

/** Claims after which a job whose workers keep dying fails instead of being claimed again. */
export const MAX_ATTEMPTS = 3;

/** A job this queue's owner holds under a lease, with the inputs it runs on. */
export interface ClaimedJob {
  job: JobRecord;
  input: JobInput;
  /** Decimal places its results are rounded to (set by the front end that created it). */
  decimals: number | null;
  attempts: number;
}

export interface LoadedInput {
  input: JobInput;
  decimals: number | null;
}

/** What a worker process does with the database: claim, renew, load inputs, finish. */
export class PgQueue {
  readonly owner: string;
  private readonly inputs = new Map<number, Promise<LoadedInput | undefined>>();

  constructor(
    readonly pool: pg.Pool,
    readonly leaseMs: number,
  ) {
    this.owner = `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`;
  }

  static async open(url: string, settings: { leaseMs: number; poolSize?: number }): Promise<PgQueue> {
    const pool = makePool(url, settings.poolSize ?? 4);
    try {
      await checkSchema(pool);
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw error;
    }
    return new PgQueue(pool, settings.leaseMs);
  }

  /**
   * The one claim path of the PostgreSQL store (the front end's PgStore and `rbp worker` both call
   * it): a runnable job, queued or running under a lease that expired (its worker died), the
   * oldest of the organisation served longest ago (fair round robin), with its inputs loaded. A
   * job claimed more than MAX_ATTEMPTS times, or whose inputs are gone, is failed here instead,
   * and the next one taken.
   */
  async claim(): Promise<ClaimedJob | undefined> {
    for (;;) {
      const row = await this.claimRow();
      if (!row) return undefined;
      const job = toJob(row);
      if (row.attempts > MAX_ATTEMPTS || row.input_id === null) {
        await this.fail(job.id, {
          message: row.input_id === null ? "its inputs were lost" : `the workers running it stopped ${row.attempts - 1} times (crash or lost connection)`,
          ...PROCESS_JOB,
        });
        continue;
      }
      const loaded = await this.input(row.input_id);
      if (!loaded) {
        await this.fail(job.id, { message: "its inputs were lost", ...PROCESS_JOB });
        continue;
      }
      return { job, input: loaded.input, decimals: loaded.decimals, attempts: row.attempts };
    }
  }

  /** Marks the next runnable job running under this owner's lease (one statement), or undefined. */
  private async claimRow(): Promise<(JobRow & { attempts: number }) | undefined> {
    const r = await this.pool.query<JobRow & { attempts: number }>(
      `WITH claimed AS (UPDATE rbp_jobs SET status = 'running', started_at = now(), lease_owner = $1,
              lease_until = now() + make_interval(secs => $2::float8 / 1000), attempts = attempts + 1
       WHERE id = (SELECT j.id FROM rbp_orgs o
                   CROSS JOIN LATERAL (SELECT id FROM rbp_jobs
                                       WHERE org = o.name AND (status = 'queued' OR (status = 'running' AND lease_until < now()))
                                       ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) j
                   ORDER BY o.last_claim_at NULLS FIRST, j.id LIMIT 1)
       RETURNING ${JOB_COLUMNS}, attempts),
       served AS (UPDATE rbp_orgs SET last_claim_at = clock_timestamp() WHERE name = (SELECT org FROM claimed))
       SELECT * FROM claimed`,
      [this.owner, this.leaseMs],
    );
    return r.rows[0];
  }

  /** A request's inputs, loaded once for the rows of an experiment that share them (a few kept). */
  private input(id: number): Promise<LoadedInput | undefined> {
    let loaded = this.inputs.get(id);
    if (!loaded) {
      loaded = this.loadInput(id);
      loaded.catch(() => this.inputs.delete(id));
      this.inputs.set(id, loaded);
      // A few inputs at most: the rows of one experiment share one.
      while (this.inputs.size > 8) this.inputs.delete(this.inputs.keys().next().value!);
    }
    return loaded;
  }

  /** Extends the lease of the jobs this worker still holds; returns the ids it no longer holds. */
  async renew(ids: number[]): Promise<number[]> {
    if (ids.length === 0) return [];
    const r = await this.pool.query<{ id: number }>(
      `UPDATE rbp_jobs SET lease_until = now() + make_interval(secs => $3::float8 / 1000)
       WHERE id = ANY($1::bigint[]) AND lease_owner = $2 AND status = 'running' RETURNING id`,
      [ids, this.owner, this.leaseMs],
    );
    const held = new Set(r.rows.map((x) => x.id));
    return ids.filter((id) => !held.has(id));
  }

  private async loadInput(inputId: number): Promise<LoadedInput | undefined> {
    const r = await this.pool.query<{
      analysis: Analysis;
      n_rows: number;
      n_cols: number;
      y: Buffer;
      x: Buffer;
      thetas: Buffer;
      options: unknown;
      decimals: number | null;
    }>("SELECT analysis, n_rows, n_cols, y, x, thetas, options, decimals FROM rbp_inputs WHERE id = $1", [inputId]);
    const row = r.rows[0];
    if (!row) return undefined;
    const all = bytesF64(row.thetas);
    const thetas: Float64Array[] = [];
    for (let i = 0; i < all.length; i += row.n_cols) thetas.push(all.slice(i, i + row.n_cols));
    return {
      input: {
        analysis: row.analysis,
        data: { rows: row.n_rows, cols: row.n_cols, y: bytesF64(row.y), X: bytesF64(row.x) },
        thetas,
        options: decodeValue(row.options) as Record<string, unknown>,
      },
      decimals: row.decimals,
    };
  }

  /** Stores the result and marks the job completed, if this worker still holds its lease. */
  async complete(jobId: number, json: string, compact: JobRecord["compact"]): Promise<boolean> {
    return this.finish(jobId, "completed", { compact: JSON.stringify(compact), failure: null, result: json });
  }

  /** Marks the job failed, if this worker still holds its lease. */
  async fail(jobId: number, failure: JobFailure): Promise<boolean> {
    return this.finish(jobId, "failed", { compact: null, failure: JSON.stringify(failure), result: null });
  }

  /** Gives a held job back to the queue at once (a worker shutting down). */
  async release(ids: number[]): Promise<void> {
    if (ids.length === 0) return;
    await this.pool.query(
      "UPDATE rbp_jobs SET status = 'queued', lease_owner = NULL, lease_until = NULL, attempts = greatest(attempts - 1, 0) WHERE id = ANY($1::bigint[]) AND lease_owner = $2 AND status = 'running'",
      [ids, this.owner],
    );
    await this.pool.query("SELECT pg_notify('rbp_jobs', $1)", [String(ids.length)]);
  }

  async close(): Promise<void> {
    await this.pool.end().catch(() => undefined);
  }

  /**
   * The outcome, in ONE statement (one round trip, atomic): only while this worker holds the lease,
   * the result (when completed), the state, the input's pending count, the `rbp_done` notification.
   * The input row goes once its last job finished (jobs' input_id is set null by its foreign key).
   */
  private async finish(
    jobId: number,
    status: "completed" | "failed",
    outcome: { compact: string | null; failure: string | null; result: string | null },
  ): Promise<boolean> {
    const r = await this.pool.query<{ done: number; input_id: number | null; pending: number | null }>(
      `WITH held AS (
         SELECT id, input_id FROM rbp_jobs WHERE id = $1 AND lease_owner = $2 AND status = 'running' FOR UPDATE
       ), stored AS (
         INSERT INTO rbp_results (job_id, result) SELECT id, $6::json FROM held WHERE $6::text IS NOT NULL RETURNING job_id
       ), done AS (
         UPDATE rbp_jobs j SET status = $3, finished_at = now(), compact = $4, failure = $5, lease_owner = NULL, lease_until = NULL, ran_by = $2
         FROM held WHERE j.id = held.id RETURNING j.id
       ), input AS (
         UPDATE rbp_inputs i SET pending = pending - 1 FROM held WHERE i.id = held.input_id RETURNING i.id, i.pending
       ), notified AS (
         SELECT pg_notify('rbp_done', id::text) FROM done
       )
       SELECT (SELECT count(*) FROM done)::int AS done, (SELECT id FROM input) AS input_id, (SELECT pending FROM input) AS pending,
              (SELECT count(*) FROM notified)::int AS notified, (SELECT count(*) FROM stored)::int AS stored`,
      [jobId, this.owner, status, outcome.compact, outcome.failure, outcome.result],
    );
    const row = r.rows[0];
    if (row.done === 0) return false;
    if (row.input_id !== null && row.pending !== null && row.pending <= 0) {
      await this.pool.query("DELETE FROM rbp_inputs WHERE id = $1 AND pending <= 0", [row.input_id]).catch(() => undefined);
    }
    return true;
  }
}
