/**
 * The PostgreSQL store: jobs, experiments, inputs, results and quota of a team service in one
 * PostgreSQL database, shared by any number of front ends (`rbp serve --database URL`) and workers
 * (`rbp worker --database URL`, pg-worker.ts). See docs/team-service.md.
 *
 * Contract (each point is a transaction or a single statement):
 * - Schema: versioned migrations (MIGRATIONS, recorded in `rbp_schema`), applied by `migrate()`
 *   under an advisory lock so front ends starting together apply each one once. `open()` refuses a
 *   database whose schema is older or newer than this code, naming the command that migrates it.
 * - Quota is reserved in the transaction that creates the jobs: `UPDATE rbp_orgs SET used = used + n
 *   WHERE quota - used >= n` locks the organisation's row, so concurrent POSTs on any number of front
 *   ends spend exactly the plan, and a crash either keeps both the charge and the jobs or neither.
 *   Charging happens only there: running a job again never charges again.
 * - Claiming: a worker takes a runnable job (queued, or running with an expired lease) with
 *   `FOR UPDATE SKIP LOCKED`, fairly across organisations: the oldest job of the organisation whose
 *   last claim is the longest ago (round robin over those with work waiting), so a flood from one
 *   organisation does not hold back another's job. It holds the job under a lease it renews while it runs. A worker that
 *   dies stops renewing; once the lease expires another worker claims the job again (after
 *   MAX_ATTEMPTS claims the job fails instead, so one poison job cannot kill every worker forever).
 *   A completion or failure is written only by the current lease holder, in one transaction with the
 *   result, so a late, superseded worker changes nothing.
 * - Experiments are one job per theta row, so their rows fan out over every worker.
 * - Results are stored as PostgreSQL `json` (the exact text served, key order kept): the whole
 *   result is read as text for `GET /jobs/{id}/{code}`, while one field is resolved and cut out
 *   by the server (`result #> path`), so a front end never loads a large result to serve a field.
 * - v2 uploads live in `rbp_uploads`, and their tokens are signed with one key kept in the
 *   database (`rbp_settings`), so an upload URL from one front end is accepted by any other.
 * - Notifications: `rbp_jobs` when jobs are queued (workers wake at once; they also poll), `rbp_done`
 *   with the job id when one finishes (v2 long-poll).
 *
 * @example
 * const store = await PgStore.open("postgres://rbp@127.0.0.1/rbp", { migrate: true });
 * await store.syncPlans([{ name: "acme", quota: 1000 }]);
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import type { Analysis } from "../../../api/options.js";
import { resolveField, type PathPart, type ResolvedField } from "../../fields.js";
import {
  DEFAULT_RETENTION_MS,
  encodeValue,
  expiredMessage,
  newCode,
  PROCESS_JOB,
  sameCode,
  type ExperimentRecord,
  type JobFailure,
  type JobRecord,
} from "../records.js";
import type { QuotaStatus } from "../../quota.js";
import { databaseOutageCause, type StoreOutage } from "../../outage.js";
import type { UploadSettings, Uploads } from "../../uploads.js";
import type { Claimed, CreateFailedJob, CreateJobs, Created, Store } from "../contract.js";
import { QuotaExceededError, StorageBusyError } from "../errors.js";
import { databaseError, databaseLabel, inTransaction, makePool, TYPES } from "./connection.js";
import { checkSchema, migrate } from "./schema.js";
import { PgQueue } from "./queue.js";
import { PgUploads } from "./uploads.js";
import { textOf, type ResultText } from "../packed.js";
import { f64Bytes, JOB_COLUMNS, toJob, type JobRow } from "./rows.js";

export interface PgStoreSettings {
  /** Apply pending migrations first (`rbp serve --database URL --migrate`). Default false. */
  migrate?: boolean;
  /** Connections in the pool. Default 10. */
  poolSize?: number;
  /** This front end also runs jobs on its own engine threads (claim). Default true; `rbp serve --workers 0` sets false. */
  runJobs?: boolean;
  /** Lease of a job this front end runs, in ms. Default 30000. */
  leaseMs?: number;
  /** Decimal places of the results of the jobs it creates (any worker runs them so); null = full precision. Default 6. */
  decimals?: number | null;
  /** Finished jobs and results are removed this long after they finish (ms). Default 7 days. */
  retentionMs?: number;
  log?: (line: string) => void;
}

/** A node in a result being resolved field by field inside PostgreSQL. */
interface Probe {
  type: "object" | "array" | "string" | "number" | "boolean" | "null";
  keys: string[] | null;
  length: number | null;
}

// The front end's side

export class PgStore implements Store {
  readonly durable = true;
  /** Queue operations of this front end's own engine threads (undefined: this front end runs no jobs). */
  private readonly queue: PgQueue | undefined;
  private readonly held = new Set<number>();
  private readonly renewer: NodeJS.Timeout | undefined;
  private listener: pg.Client | undefined;
  private listenerDown = false;
  /** The listener's connection while it is being made: every caller meanwhile shares it (`ensureListener`). */
  private listening: Promise<void> | undefined;
  private readonly doneWaiters = new Map<number, Set<() => void>>();
  private closed = false;
  private wake: (() => void) | undefined;
  private poller: NodeJS.Timeout | undefined;

  private constructor(
    readonly pool: pg.Pool,
    private readonly url: string,
    private readonly uploadSecret: Buffer,
    private readonly settings: Required<Omit<PgStoreSettings, "migrate" | "poolSize" | "log">> & { log: (line: string) => void },
  ) {
    if (settings.runJobs) {
      this.queue = new PgQueue(pool, settings.leaseMs);
      this.renewer = setInterval(
        () => {
          void this.queue!.renew([...this.held]).catch(() => undefined);
        },
        Math.max(50, Math.floor(settings.leaseMs / 3)),
      );
      this.renewer.unref();
    }
  }

  /**
   * Opens the store on a database whose schema is current (`migrate: true` applies what is
   * missing first); refuses with SchemaError otherwise.
   *
   * @example
   * const store = await PgStore.open("postgres://rbp@127.0.0.1/rbp", { migrate: true, runJobs: false });
   */
  static async open(url: string, settings: PgStoreSettings = {}): Promise<PgStore> {
    const pool = makePool(url, settings.poolSize ?? 10);
    try {
      if (settings.migrate === true) await migrate(pool);
      await checkSchema(pool);
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw error;
    }
    // One key signs upload tokens for every front end: made by the first to open, read by the rest.
    await pool.query("INSERT INTO rbp_settings (key, value) VALUES ('upload_secret', $1) ON CONFLICT (key) DO NOTHING", [randomBytes(32)]);
    const secret = (await pool.query<{ value: Buffer }>("SELECT value FROM rbp_settings WHERE key = 'upload_secret'")).rows[0].value;
    return new PgStore(pool, url, secret, {
      runJobs: settings.runJobs ?? true,
      leaseMs: settings.leaseMs ?? 30_000,
      decimals: settings.decimals === undefined ? 6 : settings.decimals,
      retentionMs: settings.retentionMs ?? DEFAULT_RETENTION_MS,
      log: settings.log ?? (() => {}),
    });
  }

  /** An error that says the database cannot be reached (outage.ts), naming the server (never its password). */
  outage(error?: unknown): StoreOutage | undefined {
    if (error === undefined) return undefined;
    const found = databaseOutageCause(error instanceof StorageBusyError ? Object.assign(new Error(error.detail), { code: error.reason }) : error);
    return found && { store: `the PostgreSQL store (${databaseLabel(this.url)})`, ...found };
  }

  async quotaStatus(org: string, plan: number): Promise<QuotaStatus> {
    const r = await this.pool.query<{ used: number }>("SELECT used FROM rbp_orgs WHERE name = $1", [org]);
    const used = r.rows[0]?.used ?? 0;
    return { quota: plan, used, remaining: Math.max(0, plan - used) };
  }

  /**
   * Reserves one unit per theta row and creates the jobs (and the experiment when there are
   * several rows) in one transaction; workers are notified on commit. QuotaExceededError when
   * the plan cannot pay: then nothing is taken or created.
   */
  async createJobs(request: CreateJobs): Promise<Created> {
    const { org, plan, input } = request;
    const m = input.thetas.length;
    return this.write(async (c) => {
      await reserve(c, org, plan, m);
      const thetas = new Float64Array(m * input.data.cols);
      input.thetas.forEach((t, i) => thetas.set(t, i * input.data.cols));
      const inputRow = await c.query<{ id: number }>(
        `INSERT INTO rbp_inputs (analysis, n_rows, n_cols, y, x, thetas, options, decimals, pending)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`,
        [
          input.analysis,
          input.data.rows,
          input.data.cols,
          f64Bytes(input.data.y),
          f64Bytes(input.data.X),
          f64Bytes(thetas),
          JSON.stringify(encodeValue(input.options)),
          this.settings.decimals,
          m,
        ],
      );
      const inputId = inputRow.rows[0].id;
      let experiment: ExperimentRecord | undefined;
      if (m > 1) {
        const e = await c.query<{ id: number; code: string; created_at: string }>(
          "INSERT INTO rbp_experiments (code, org, analysis, n_rows) VALUES ($1, $2, $3, $4) RETURNING id, code, rbp_iso(created_at) AS created_at",
          [newCode(), org, request.analysis, m],
        );
        experiment = { id: e.rows[0].id, code: e.rows[0].code, org, analysis: request.analysis, job_ids: [], created_at: e.rows[0].created_at };
      }
      const codes = Array.from({ length: m }, () => newCode());
      const jobs = await c.query<JobRow>(
        `INSERT INTO rbp_jobs (code, org, analysis, status, warnings, theta_source, experiment_id, row_index, input_id, censor_operator, variant)
         SELECT code, $2, $3, 'queued', $4, $5, $6, ord - 1, $7, $8, $9 FROM unnest($1::text[]) WITH ORDINALITY AS t(code, ord)
         ORDER BY ord RETURNING ${JOB_COLUMNS}`,
        [
          codes,
          org,
          request.analysis,
          JSON.stringify(request.warnings),
          request.thetaSource ?? null,
          experiment?.id ?? null,
          inputId,
          request.censorOperator ?? null,
          request.variant ?? null,
        ],
      );
      await c.query("SELECT pg_notify('rbp_jobs', $1)", [String(m)]);
      const records = jobs.rows.map(toJob).sort((a, b) => a.row - b.row);
      if (experiment) experiment.job_ids = records.map((j) => j.id);
      return { jobs: records, ...(experiment ? { experiment } : {}) };
    });
  }

  /** Pays for one job that failed before it could run and records it failed (v2 missing upload). */
  async createFailedJob(request: CreateFailedJob): Promise<JobRecord> {
    return this.write(async (c) => {
      await reserve(c, request.org, request.plan, 1);
      const r = await c.query<JobRow>(
        `INSERT INTO rbp_jobs (code, org, analysis, status, finished_at, warnings, row_index, failure, variant)
         VALUES ($1, $2, $3, 'failed', now(), $4, 0, $5, $6) RETURNING ${JOB_COLUMNS}`,
        [newCode(), request.org, request.analysis, JSON.stringify(request.warnings), JSON.stringify(request.failure), request.variant ?? null],
      );
      return toJob(r.rows[0]);
    });
  }

  /** The job with this id and code belonging to `org` (codes compared in constant time), else undefined. */
  async findJob(org: string, id: number, code: string): Promise<JobRecord | undefined> {
    if (!Number.isSafeInteger(id) || id < 1) return undefined;
    const r = await this.pool.query<JobRow>(`SELECT ${JOB_COLUMNS} FROM rbp_jobs WHERE id = $1`, [id]);
    const row = r.rows[0];
    if (!row || !sameCode(row.code, code) || row.org !== org) return undefined;
    return toJob(row);
  }

  async findExperiment(org: string, id: number, code: string): Promise<ExperimentRecord | undefined> {
    if (!Number.isSafeInteger(id) || id < 1) return undefined;
    const r = await this.pool.query<{ id: number; code: string; org: string; analysis: Analysis; created_at: string }>(
      "SELECT id, code, org, analysis, rbp_iso(created_at) AS created_at FROM rbp_experiments WHERE id = $1",
      [id],
    );
    const row = r.rows[0];
    if (!row || !sameCode(row.code, code) || row.org !== org) return undefined;
    const ids = await this.pool.query<{ id: number }>("SELECT id FROM rbp_jobs WHERE experiment_id = $1 ORDER BY row_index", [id]);
    if (ids.rows.length === 0) return undefined;
    return { ...row, job_ids: ids.rows.map((x) => x.id) };
  }

  /** The jobs of an experiment, in row order. */
  async experimentJobs(experiment: ExperimentRecord): Promise<JobRecord[]> {
    const r = await this.pool.query<JobRow>(`SELECT ${JOB_COLUMNS} FROM rbp_jobs WHERE experiment_id = $1 ORDER BY row_index`, [experiment.id]);
    return r.rows.map(toJob);
  }

  async expiredReason(kind: "job" | "experiment", id: number): Promise<string | undefined> {
    if (!Number.isSafeInteger(id) || id < 1) return undefined;
    const r = await this.pool.query("SELECT 1 FROM rbp_gone WHERE kind = $1 AND id = $2", [kind, id]);
    if (r.rowCount === 0) return undefined;
    return expiredMessage(kind, id, this.settings.retentionMs);
  }

  /** When the organisation's first job still kept was created (v2 quota period start). */
  async firstJobTime(org: string): Promise<Date | undefined> {
    const r = await this.pool.query<{ t: string | null }>("SELECT rbp_iso(min(created_at)) AS t FROM rbp_jobs WHERE org = $1", [org]);
    return r.rows[0].t === null ? undefined : new Date(r.rows[0].t);
  }

  /** v2 uploads in the database, signed with the shared key (any front end accepts any other's URL). */
  uploads(settings: UploadSettings): Uploads {
    return new PgUploads(this.pool, { ...settings, secret: this.uploadSecret });
  }

  /**
   * Wakes this front end's engine threads when another process queued jobs (`rbp_jobs`), and every
   * second (a missed notification, a lease that expired). Nothing when it runs no jobs.
   */
  onClaimable(wake: () => void): void {
    if (!this.queue) return;
    this.wake = wake;
    void this.ensureListener().catch(() => undefined);
    this.poller = setInterval(() => {
      if (this.listenerDown || !this.listener) void this.ensureListener().catch(() => undefined);
      wake();
    }, 1000);
    this.poller.unref();
  }

  /** A job for this front end's own engine threads (PgQueue's claim), under a lease renewed until it finishes. */
  async claim(): Promise<Claimed | undefined> {
    if (!this.queue || this.closed) return undefined;
    const claimed = await this.queue.claim();
    if (!claimed) return undefined;
    this.held.add(claimed.job.id);
    return { job: claimed.job, input: claimed.input };
  }

  async complete(job: JobRecord, json: ResultText, compact: JobRecord["compact"]): Promise<"completed" | "failed"> {
    if (!this.queue) throw new Error("this store runs no jobs (opened with runJobs: false)");
    try {
      if (await this.queue.complete(job.id, textOf(json), compact)) {
        Object.assign(job, { status: "completed", compact });
        return "completed";
      }
    } catch (error) {
      this.settings.log(`job ${job.id}: its result could not be stored: ${(error as Error).message}`);
      await this.fail(job, { message: "its result could not be stored", ...PROCESS_JOB }).catch(() => undefined);
      return "failed";
    } finally {
      this.held.delete(job.id);
    }
    // The lease went to another worker (this one was cut off): that one records the outcome.
    const now = await this.getJob(job.id);
    return now?.status === "failed" ? "failed" : "completed";
  }

  async fail(job: JobRecord, failure: JobFailure): Promise<void> {
    if (!this.queue) throw new Error("this store runs no jobs (opened with runJobs: false)");
    try {
      if (await this.queue.fail(job.id, failure)) Object.assign(job, { status: "failed", failure });
    } finally {
      this.held.delete(job.id);
    }
  }

  /** The whole `results` JSON of a completed job, exactly as the worker encoded it. */
  async readResult(job: JobRecord): Promise<string | undefined> {
    const r = await this.pool.query<{ result: string }>("SELECT result::text AS result FROM rbp_results WHERE job_id = $1", [job.id]);
    return r.rows[0]?.result;
  }

  /**
   * One field of a completed job's results, resolved like fields.ts (same aliases, same 404s) but
   * inside PostgreSQL: only the keys along the path and the field itself leave the database.
   */
  async readResultField(job: JobRecord, segments: string[]): Promise<ResolvedField | undefined> {
    const root = await this.probe(job.id, []);
    if (root === undefined) return undefined;
    // A skeleton of the result along the path: the real keys and lengths, placeholder values.
    const top = { value: skeleton(root) };
    let node = top.value;
    let path: PathPart[] = [];
    for (let i = 0; i < segments.length; i++) {
      path = resolveField(top.value, segments.slice(0, i + 1)).path; // throws the 404 of fields.ts
      const probe = await this.probe(job.id, path);
      if (probe === undefined) return undefined;
      const child = skeleton(probe);
      setAt(node, path[path.length - 1], child);
      node = child;
    }
    const r = await this.pool.query<{ text: string }>("SELECT (result #> $2::text[])::text AS text FROM rbp_results WHERE job_id = $1", [
      job.id,
      path.map(String),
    ]);
    if (!r.rows[0]) return undefined;
    return { path, value: JSON.parse(r.rows[0].text) as unknown };
  }

  private async probe(jobId: number, path: PathPart[]): Promise<Probe | undefined> {
    const r = await this.pool.query<Probe>(
      `SELECT json_typeof(v) AS type,
              CASE WHEN json_typeof(v) = 'object' THEN ARRAY(SELECT json_object_keys(v)) END AS keys,
              CASE WHEN json_typeof(v) = 'array' THEN json_array_length(v) END AS length
       FROM (SELECT result #> $2::text[] AS v FROM rbp_results WHERE job_id = $1) s`,
      [jobId, path.map(String)],
    );
    return r.rows[0];
  }

  /**
   * Removes finished jobs past the retention, their results and inputs, and experiments left
   * without jobs; keeps their ids (rbp_gone) so a reader is told 410, not 404.
   */
  async expire(now: Date): Promise<number> {
    const cutoff = new Date(now.getTime() - this.settings.retentionMs);
    return this.write(async (c) => {
      const gone = await c.query<{ id: number; experiment_id: number | null }>(
        `DELETE FROM rbp_jobs WHERE id IN (SELECT id FROM rbp_jobs WHERE status IN ('completed', 'failed') AND finished_at < $1 LIMIT 10000 FOR UPDATE SKIP LOCKED)
         RETURNING id, experiment_id`,
        [cutoff],
      );
      if (gone.rows.length === 0) return 0;
      const ids = gone.rows.map((g) => g.id);
      await c.query("INSERT INTO rbp_gone (kind, id) SELECT 'job', unnest($1::bigint[]) ON CONFLICT DO NOTHING", [ids]);
      const experiments = [...new Set(gone.rows.map((g) => g.experiment_id).filter((e): e is number => e !== null))];
      if (experiments.length > 0) {
        const empty = await c.query<{ id: number }>(
          "DELETE FROM rbp_experiments e WHERE e.id = ANY($1::bigint[]) AND NOT EXISTS (SELECT 1 FROM rbp_jobs j WHERE j.experiment_id = e.id) RETURNING id",
          [experiments],
        );
        if (empty.rows.length > 0)
          await c.query("INSERT INTO rbp_gone (kind, id) SELECT 'experiment', unnest($1::bigint[]) ON CONFLICT DO NOTHING", [empty.rows.map((e) => e.id)]);
      }
      return ids.length;
    });
  }

  /**
   * Resolves once the job is completed or failed (by any worker, anywhere), or after `timeoutMs`
   * (v2 long-poll): woken by `rbp_done` notifications, and looking at the job every second in case
   * one was missed.
   */
  async waitForJob(jobId: number, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (timeoutMs <= 0 || signal?.aborted || this.closed) return;
    // Not awaited: a listener still connecting (or never: a connection has no timeout of its own)
    // would hold the wait past its deadline; the look every second covers the time until it listens.
    void this.ensureListener().catch(() => undefined);
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline && !signal?.aborted && !this.closed) {
      const job = await this.getJob(jobId).catch(() => undefined);
      if (job && (job.status === "completed" || job.status === "failed")) return;
      await new Promise<void>((resolve) => {
        const waiting = this.doneWaiters.get(jobId) ?? new Set<() => void>();
        this.doneWaiters.set(jobId, waiting);
        const wake = () => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", wake);
          waiting.delete(wake);
          if (waiting.size === 0) this.doneWaiters.delete(jobId);
          resolve();
        };
        const timer = setTimeout(wake, Math.min(1000, Math.max(0, deadline - Date.now())));
        signal?.addEventListener("abort", wake, { once: true });
        waiting.add(wake);
      });
    }
  }

  async getJob(id: number): Promise<JobRecord | undefined> {
    const r = await this.pool.query<JobRow>(`SELECT ${JOB_COLUMNS} FROM rbp_jobs WHERE id = $1`, [id]);
    return r.rows[0] ? toJob(r.rows[0]) : undefined;
  }

  /**
   * Connects the LISTEN client unless it is up; one connection at a time, which every caller
   * meanwhile shares. (Each of 64 held v2 reads used to open its own at once: 64 server processes
   * forked together on a loaded machine.)
   */
  private ensureListener(): Promise<void> {
    if (this.listener && !this.listenerDown) return Promise.resolve();
    this.listening ??= this.connectListener().finally(() => {
      this.listening = undefined;
    });
    return this.listening;
  }

  private async connectListener(): Promise<void> {
    // A connection that never comes fails (as the pool's do), so a later caller tries again.
    const client = new pg.Client({ connectionString: this.url, types: TYPES, connectionTimeoutMillis: 10_000 });
    client.on("error", () => {
      this.listenerDown = true;
    });
    client.on("end", () => {
      this.listenerDown = true;
    });
    client.on("notification", (n) => {
      if (n.channel === "rbp_jobs") this.wake?.();
      if (n.channel !== "rbp_done") return;
      const id = Number(n.payload);
      for (const wake of [...(this.doneWaiters.get(id) ?? [])]) wake();
    });
    try {
      await client.connect();
      await client.query("LISTEN rbp_done");
      if (this.queue) await client.query("LISTEN rbp_jobs");
    } catch (error) {
      void client.end().catch(() => undefined);
      throw error;
    }
    if (this.closed) {
      // Closed while it connected: close() has ended the listener it knew of.
      void client.end().catch(() => undefined);
      return;
    }
    const old = this.listener;
    this.listener = client;
    this.listenerDown = false;
    void old?.end().catch(() => undefined);
  }

  /** Hands the jobs this front end held back to the queue, and closes the connections. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.renewer);
    clearInterval(this.poller);
    this.wake = undefined;
    await this.queue?.release([...this.held]).catch(() => undefined);
    for (const waiting of this.doneWaiters.values()) for (const wake of [...waiting]) wake();
    await this.listener?.end().catch(() => undefined);
    await this.pool.end().catch(() => undefined);
  }

  /** A write transaction; a database that cannot be reached or is overloaded answers StorageBusyError, a full disk StorageFullError. */
  private async write<T>(body: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    try {
      return await inTransaction(this.pool, body);
    } catch (error) {
      throw databaseError(error);
    }
  }
}

/** Takes `units` of the organisation's plan in the caller's transaction, or throws QuotaExceededError. */
async function reserve(c: pg.PoolClient, org: string, plan: number, units: number): Promise<void> {
  await c.query("INSERT INTO rbp_orgs (name, quota) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET quota = excluded.quota", [org, plan]);
  const r = await c.query<{ used: number }>("UPDATE rbp_orgs SET used = used + $3 WHERE name = $1 AND $2 - used >= $3 RETURNING used", [org, plan, units]);
  if (r.rowCount === 0) {
    const used = (await c.query<{ used: number }>("SELECT used FROM rbp_orgs WHERE name = $1", [org])).rows[0]?.used ?? 0;
    throw new QuotaExceededError({ quota: plan, used, remaining: Math.max(0, plan - used) }, units);
  }
}

function skeleton(p: Probe): unknown {
  if (p.type === "object") return Object.fromEntries((p.keys ?? []).map((k) => [k, null]));
  if (p.type === "array") return new Array<unknown>(p.length ?? 0).fill(null);
  return p.type === "null" ? null : p.type === "number" ? 0 : p.type === "boolean" ? false : "";
}

function setAt(container: unknown, key: PathPart, value: unknown): void {
  if (Array.isArray(container) && typeof key === "number") container[key] = value;
  else if (typeof container === "object" && container !== null) (container as Record<string, unknown>)[String(key)] = value;
}
