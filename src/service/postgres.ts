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
import { hostname } from "node:os";
import { randomBytes, randomUUID } from "node:crypto";
import pg from "pg";
import type { Analysis } from "../api/options.js";
import type { CensorOperator } from "../engine/options.js";
import { resolveField, type PathPart, type ResolvedField } from "./fields.js";
import { newCode, sameCode } from "./jobs.js";
import {
  decodeValue,
  encodeValue,
  type ExperimentRecord,
  type JobFailure,
  type JobInput,
  type JobRecord,
  type JobStatus,
  type JobVariant,
} from "./persistence.js";
import type { QuotaStatus } from "./quota.js";
import { databaseOutageCause, type StoreOutage } from "./outage.js";
import { SignedUploads, storeFull, type StoredUpload, type UploadSettings, type Uploads, type UploadWriter } from "./uploads.js";
import {
  QuotaExceededError,
  StorageBusyError,
  StorageFullError,
  type Claimed,
  type CreateFailedJob,
  type CreateJobs,
  type Created,
  type Store,
} from "./store.js";

// ---------------------------------------------------------------------------------------------
// Schema

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** Applied in order; never edit one that has shipped, add the next. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "jobs, experiments, inputs, results, quota",
    sql: `
CREATE FUNCTION rbp_iso(t timestamptz) RETURNS text LANGUAGE sql IMMUTABLE AS
  $$ SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') $$;
CREATE TABLE rbp_orgs (
  name text PRIMARY KEY,
  quota bigint NOT NULL CHECK (quota >= 0),
  used bigint NOT NULL DEFAULT 0 CHECK (used >= 0),
  last_claim_at timestamptz
);
CREATE TABLE rbp_inputs (
  id bigserial PRIMARY KEY,
  analysis text NOT NULL,
  n_rows integer NOT NULL,
  n_cols integer NOT NULL,
  y bytea NOT NULL,
  x bytea NOT NULL,
  thetas bytea NOT NULL,
  options jsonb NOT NULL,
  decimals integer,
  pending integer NOT NULL
);
CREATE TABLE rbp_experiments (
  id bigserial PRIMARY KEY,
  code text NOT NULL,
  org text NOT NULL REFERENCES rbp_orgs(name),
  analysis text NOT NULL,
  n_rows integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE rbp_jobs (
  id bigserial PRIMARY KEY,
  code text NOT NULL,
  org text NOT NULL REFERENCES rbp_orgs(name),
  analysis text NOT NULL,
  status text NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'failed')),
  created_at timestamptz NOT NULL DEFAULT now(),
  started_at timestamptz,
  finished_at timestamptz,
  warnings jsonb NOT NULL DEFAULT '[]',
  theta_source text,
  experiment_id bigint REFERENCES rbp_experiments(id),
  row_index integer NOT NULL,
  input_id bigint REFERENCES rbp_inputs(id) ON DELETE SET NULL,
  failure jsonb,
  censor_operator text,
  variant text,
  compact jsonb,
  lease_owner text,
  lease_until timestamptz,
  attempts integer NOT NULL DEFAULT 0,
  ran_by text
);
CREATE INDEX rbp_jobs_runnable ON rbp_jobs (org, id) WHERE status IN ('queued', 'running');
CREATE INDEX rbp_jobs_experiment ON rbp_jobs (experiment_id, row_index) WHERE experiment_id IS NOT NULL;
CREATE INDEX rbp_jobs_org_created ON rbp_jobs (org, created_at);
CREATE TABLE rbp_settings (
  key text PRIMARY KEY,
  value bytea NOT NULL
);
CREATE TABLE rbp_uploads (
  org text NOT NULL,
  name text NOT NULL,
  n_rows integer NOT NULL,
  n_cols integer NOT NULL,
  x bytea NOT NULL,
  digest text NOT NULL,
  bytes bigint NOT NULL,
  expires bigint NOT NULL,
  PRIMARY KEY (org, name)
);
CREATE TABLE rbp_gone (
  kind text NOT NULL,
  id bigint NOT NULL,
  PRIMARY KEY (kind, id)
);
CREATE TABLE rbp_results (
  job_id bigint PRIMARY KEY REFERENCES rbp_jobs(id) ON DELETE CASCADE,
  result json NOT NULL
);
ALTER TABLE rbp_results ALTER COLUMN result SET STORAGE EXTENDED;
`,
  },
  {
    version: 2,
    name: "uploads streamed in chunks",
    sql: `
CREATE TABLE rbp_upload_chunks (
  part text NOT NULL,
  seq integer NOT NULL,
  data bytea NOT NULL,
  created bigint NOT NULL,
  PRIMARY KEY (part, seq)
);
ALTER TABLE rbp_upload_chunks ALTER COLUMN data SET STORAGE EXTERNAL;
ALTER TABLE rbp_uploads ALTER COLUMN x DROP NOT NULL;
ALTER TABLE rbp_uploads ADD COLUMN part text;
`,
  },
];

export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1].version;

/** Thrown by `open()` when the database's schema is not this code's. */
export class SchemaError extends Error {
  override readonly name = "SchemaError";
}

/** Integers as numbers (ids stay far below 2^53), everything else as pg parses it. */
const TYPES = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === 20 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as "text")) as typeof pg.types.getTypeParser,
};

export function makePool(url: string, max = 10): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max, types: TYPES, connectionTimeoutMillis: 10_000 });
  // An idle client whose server went away (restart, failover) must not crash the process: the
  // pool drops it and the next query connects again.
  pool.on("error", () => undefined);
  return pool;
}

/**
 * Runs `body` in a transaction on a client of the pool. While a client is checked out, pg-pool
 * listens for none of its errors, so a server that goes away between two statements would throw
 * an uncaught 'error' and end the process: listen for the length of the transaction, and discard
 * the client (release with the error) when anything failed.
 */
export async function inTransaction<T>(pool: pg.Pool, body: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  const c = await pool.connect();
  let broken: Error | undefined;
  const onError = (error: Error) => {
    broken ??= error;
  };
  c.on("error", onError);
  try {
    await c.query("BEGIN");
    const out = await body(c);
    await c.query("COMMIT");
    return out;
  } catch (error) {
    broken ??= error as Error;
    await c.query("ROLLBACK").catch(() => undefined);
    throw error;
  } finally {
    c.off("error", onError);
    c.release(broken);
  }
}

/** Applies the migrations the database lacks; returns the versions applied now. */
export async function migrate(pool: pg.Pool): Promise<number[]> {
  return inTransaction(pool, async (client) => {
    await client.query("SELECT pg_advisory_xact_lock(7419522)");
    await client.query(
      "CREATE TABLE IF NOT EXISTS rbp_schema (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
    );
    const done = new Set((await client.query<{ version: number }>("SELECT version FROM rbp_schema")).rows.map((r) => r.version));
    const applied: number[] = [];
    for (const m of MIGRATIONS) {
      if (done.has(m.version)) continue;
      await client.query(m.sql);
      await client.query("INSERT INTO rbp_schema (version, name) VALUES ($1, $2)", [m.version, m.name]);
      applied.push(m.version);
    }
    return applied;
  });
}

/** The schema version the database has (0 = none). */
export async function schemaVersion(pool: pg.Pool): Promise<number> {
  const exists = await pool.query<{ t: string | null }>("SELECT to_regclass('rbp_schema')::text AS t");
  if (exists.rows[0].t === null) return 0;
  const r = await pool.query<{ v: number | null }>("SELECT max(version) AS v FROM rbp_schema");
  return r.rows[0].v ?? 0;
}

async function checkSchema(pool: pg.Pool): Promise<void> {
  const version = await schemaVersion(pool);
  if (version < SCHEMA_VERSION) {
    throw new SchemaError(
      `the database's rbp schema is at version ${version}, this rbp needs ${SCHEMA_VERSION}: run \`rbp serve --database URL --migrate\` once (docs/team-service.md)`,
    );
  }
  if (version > SCHEMA_VERSION) {
    throw new SchemaError(`the database's rbp schema is at version ${version}, newer than this rbp (${SCHEMA_VERSION}): upgrade rbp on this machine`);
  }
}

// ---------------------------------------------------------------------------------------------
// Inputs: typed arrays as little-endian float64 bytes, options as JSON with Float64Arrays tagged.

function f64Bytes(values: Float64Array): Buffer {
  const out = Buffer.alloc(values.length * 8);
  for (let i = 0; i < values.length; i++) out.writeDoubleLE(values[i], i * 8);
  return out;
}

function bytesF64(bytes: Buffer): Float64Array {
  const out = new Float64Array(bytes.length / 8);
  for (let i = 0; i < out.length; i++) out[i] = bytes.readDoubleLE(i * 8);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Rows

const JOB_COLUMNS = `id, code, org, analysis, status, rbp_iso(created_at) AS created_at, rbp_iso(started_at) AS started_at,
  rbp_iso(finished_at) AS finished_at, warnings, theta_source, experiment_id, row_index, input_id, failure, censor_operator, variant, compact`;

interface JobRow {
  id: number;
  code: string;
  org: string;
  analysis: Analysis;
  status: JobStatus;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  warnings: string[];
  theta_source: "last_row_of_X" | null;
  experiment_id: number | null;
  row_index: number;
  input_id: number | null;
  failure: JobFailure | null;
  censor_operator: CensorOperator | null;
  variant: JobVariant | null;
  compact: JobRecord["compact"] | null;
}

function toJob(r: JobRow): JobRecord {
  return {
    id: r.id,
    code: r.code,
    org: r.org,
    analysis: r.analysis,
    status: r.status,
    created_at: r.created_at,
    ...(r.started_at !== null ? { started_at: r.started_at } : {}),
    ...(r.finished_at !== null ? { finished_at: r.finished_at } : {}),
    warnings: r.warnings,
    ...(r.theta_source !== null ? { theta_source: r.theta_source } : {}),
    ...(r.experiment_id !== null ? { experiment_id: r.experiment_id } : {}),
    row: r.row_index,
    input_ref: r.input_id === null ? "" : `i${r.input_id}`,
    ...(r.failure !== null ? { failure: r.failure } : {}),
    ...(r.censor_operator !== null ? { censor_operator: r.censor_operator } : {}),
    ...(r.variant !== null ? { variant: r.variant } : {}),
    ...(r.compact !== null ? { compact: r.compact } : {}),
  };
}

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

// ---------------------------------------------------------------------------------------------
// The front end's side

export class PgStore implements Store {
  readonly durable = true;
  /** Queue operations of this front end's own engine threads (undefined: this front end runs no jobs). */
  private readonly queue: PgQueue | undefined;
  private readonly held = new Set<number>();
  private readonly renewer: NodeJS.Timeout | undefined;
  private listener: pg.Client | undefined;
  private listenerDown = false;
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
      retentionMs: settings.retentionMs ?? 7 * 24 * 3600_000,
      log: settings.log ?? (() => {}),
    });
  }

  /** An error that says the database cannot be reached (outage.ts), naming the server (never its password). */
  outage(error?: unknown): StoreOutage | undefined {
    if (error === undefined) return undefined;
    const found = databaseOutageCause(error instanceof StorageBusyError ? Object.assign(new Error(error.detail), { code: error.code }) : error);
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
    return `${kind} ${id} is no longer kept: finished jobs and their results are removed ${describeMs(this.settings.retentionMs)} after they finish (rbp serve --retention)`;
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

  /** A job for this front end's own engine threads, under a lease renewed until it finishes. */
  async claim(): Promise<Claimed | undefined> {
    if (!this.queue || this.closed) return undefined;
    for (;;) {
      const claimed = await this.queue.claim();
      if (!claimed) return undefined;
      const loaded = await this.queue.loadInput(claimed.inputId);
      if (!loaded) {
        await this.queue.fail(claimed.job.id, { message: "its inputs were lost", error_code: 2, status_code: 10 });
        continue;
      }
      this.held.add(claimed.job.id);
      return { job: claimed.job, input: loaded.input };
    }
  }

  async complete(job: JobRecord, json: string, compact: JobRecord["compact"]): Promise<"completed" | "failed"> {
    if (!this.queue) throw new Error("this store runs no jobs (opened with runJobs: false)");
    try {
      if (await this.queue.complete(job.id, json, compact)) {
        Object.assign(job, { status: "completed", compact });
        return "completed";
      }
    } catch (error) {
      this.settings.log(`job ${job.id}: its result could not be stored: ${(error as Error).message}`);
      await this.fail(job, { message: "its result could not be stored", error_code: 2, status_code: 10 }).catch(() => undefined);
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
    await this.ensureListener().catch(() => undefined);
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

  private async ensureListener(): Promise<void> {
    if (this.listener && !this.listenerDown) return;
    const client = new pg.Client({ connectionString: this.url, types: TYPES });
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
    await client.connect();
    await client.query("LISTEN rbp_done");
    if (this.queue) await client.query("LISTEN rbp_jobs");
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

/**
 * Uploaded X matrices in `rbp_uploads`, their values in rows of `rbp_upload_chunks` (one per block,
 * written as the PUT streams in, under a `part` id that the upload's row names once it is whole):
 * the same answers as UploadStore (created / replaced / unchanged, 413 above the size limit, kept
 * `ttlMs` after the last PUT), for every front end. The chunks of an abandoned upload are removed
 * at once; those a crash left behind, by the next commit after a day.
 */
class PgUploads extends SignedUploads {
  constructor(
    private readonly pool: pg.Pool,
    private readonly settings: UploadSettings,
  ) {
    super(settings);
  }

  async begin(org: string, name: string): Promise<UploadWriter> {
    const part = randomUUID();
    const max = this.settings.maxStoreBytes;
    let seq = 0;
    let size = 0;
    return {
      write: async (block) => {
        size += block.byteLength;
        if (size > max) throw storeFull(max, `more than ${max}`);
        await this.pool.query("INSERT INTO rbp_upload_chunks (part, seq, data, created) VALUES ($1, $2, $3, $4)", [
          part,
          seq++,
          Buffer.from(block.buffer, block.byteOffset, block.byteLength),
          Date.now(),
        ]);
      },
      commit: async (meta, now = Date.now()) => {
        const expires = now + this.settings.ttlMs;
        const old = await inTransaction(this.pool, async (c) => {
          const previous = await c.query<{ digest: string; part: string | null }>(
            "SELECT digest, part FROM rbp_uploads WHERE org = $1 AND name = $2 AND expires > $3 FOR UPDATE",
            [org, name, now],
          );
          // Expired uploads (and this name's earlier one) go, with their chunks; so do chunks a crash left a day ago.
          await c.query(
            `WITH gone AS (DELETE FROM rbp_uploads WHERE expires <= $3 OR (org = $1 AND name = $2) RETURNING part)
             DELETE FROM rbp_upload_chunks WHERE part IN (SELECT part FROM gone WHERE part IS NOT NULL)`,
            [org, name, now],
          );
          await c.query(
            "DELETE FROM rbp_upload_chunks WHERE created < $1 AND part <> $2 AND part NOT IN (SELECT part FROM rbp_uploads WHERE part IS NOT NULL)",
            [now - 24 * 3600_000, part],
          );
          await c.query("INSERT INTO rbp_uploads (org, name, n_rows, n_cols, x, digest, bytes, expires, part) VALUES ($1, $2, $3, $4, NULL, $5, $6, $7, $8)", [
            org,
            name,
            meta.rows,
            meta.cols,
            meta.digest,
            meta.bytes,
            expires,
            part,
          ]);
          return previous.rows[0];
        });
        const outcome = old === undefined ? "created" : old.digest === meta.digest ? "unchanged" : "replaced";
        return { upload: { org, name, rows: meta.rows, cols: meta.cols, digest: meta.digest, bytes: meta.bytes, expires }, outcome };
      },
      abort: async () => {
        await this.pool.query("DELETE FROM rbp_upload_chunks WHERE part = $1", [part]).catch(() => undefined);
      },
    };
  }

  async get(org: string, name: string, now = Date.now()): Promise<StoredUpload | undefined> {
    const r = await this.pool.query<{ n_rows: number; n_cols: number; x: Buffer | null; part: string | null; digest: string; bytes: number; expires: number }>(
      "SELECT n_rows, n_cols, x, part, digest, bytes, expires FROM rbp_uploads WHERE org = $1 AND name = $2 AND expires > $3",
      [org, name, now],
    );
    const row = r.rows[0];
    if (!row) return undefined;
    const meta = { org, name, rows: row.n_rows, cols: row.n_cols, digest: row.digest, bytes: Number(row.bytes), expires: Number(row.expires) };
    if (row.x !== null) return { ...meta, X: bytesF64(row.x) };
    const X = new Float64Array(new SharedArrayBuffer(row.n_rows * row.n_cols * 8));
    const bytes = new Uint8Array(X.buffer);
    let at = 0;
    // A chunk at a time (about 256 KiB each), never the whole upload as one reply.
    for (let seq = 0; at < bytes.length; seq++) {
      const chunk = await this.pool.query<{ data: Buffer }>("SELECT data FROM rbp_upload_chunks WHERE part = $1 AND seq = $2", [row.part, seq]);
      const data = chunk.rows[0]?.data;
      if (data === undefined) throw new Error(`upload ${name}: chunk ${seq} of part ${row.part} is missing`);
      bytes.set(data, at);
      at += data.length;
    }
    return { ...meta, X };
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

/** PostgreSQL errors as the store contract's: disk full (53100) -> StorageFullError; no connection, too many connections, shutting down -> StorageBusyError. */
function databaseError(error: unknown): unknown {
  if (error instanceof QuotaExceededError) return error;
  const code = (error as { code?: string } | undefined)?.code;
  const detail = error instanceof Error ? error.message : String(error);
  if (code === "53100") return new StorageFullError(detail);
  if (
    code === "53300" ||
    code === "57P01" ||
    code === "57P03" ||
    code === "ECONNREFUSED" ||
    code === "ECONNRESET" ||
    /Connection terminated|timeout exceeded when trying to connect/i.test(detail)
  ) {
    return new StorageBusyError(detail, code);
  }
  return error;
}

/** host:port/database of a postgres:// URL, without user or password. */
function databaseLabel(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname || "local socket"}${u.port ? `:${u.port}` : ""}${u.pathname}`;
  } catch {
    return "database";
  }
}

function describeMs(ms: number): string {
  return ms % 3600_000 === 0 ? `${ms / 3600_000} h` : ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
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

// ---------------------------------------------------------------------------------------------
// The worker's side

/** Claims after which a job whose workers keep dying fails instead of being claimed again. */
export const MAX_ATTEMPTS = 3;

export interface ClaimedJob {
  job: JobRecord;
  inputId: number;
  attempts: number;
}

export interface LoadedInput {
  input: JobInput;
  decimals: number | null;
}

/** What a worker process does with the database: claim, renew, load inputs, finish. */
export class PgQueue {
  readonly owner: string;

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
   * Claims a runnable job: queued, or running under a lease that expired (its worker died); the
   * oldest of the organisation served longest ago (fair round robin). A job claimed more than
   * MAX_ATTEMPTS times is failed here instead, and the next one taken.
   */
  async claim(): Promise<ClaimedJob | undefined> {
    for (;;) {
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
      const row = r.rows[0];
      if (!row) return undefined;
      const job = toJob(row);
      if (row.attempts > MAX_ATTEMPTS || row.input_id === null) {
        await this.fail(job.id, {
          message: row.input_id === null ? "its inputs were lost" : `the workers running it stopped ${row.attempts - 1} times (crash or lost connection)`,
          error_code: 2,
          status_code: 10,
        });
        continue;
      }
      return { job, inputId: row.input_id, attempts: row.attempts };
    }
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

  async loadInput(inputId: number): Promise<LoadedInput | undefined> {
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
