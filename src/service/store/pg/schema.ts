/**
 * The PostgreSQL store's schema: versioned migrations (MIGRATIONS, recorded in `rbp_schema`),
 * applied by `migrate()` under an advisory lock so front ends starting together apply each one
 * once, and `checkSchema()`, which refuses a database whose schema is older or newer than this
 * code, naming the command that migrates it. Migrations are append-only: never edit one that has
 * shipped, add the next.
 *
 * @example
 * const applied = await migrate(makePool("postgres://rbp@127.0.0.1/rbp")); // [1, 2] on a new database
 */
import type pg from "pg";
import { brand, RbpBaseError } from "../../../errors/index.js";
import { inTransaction } from "./connection.js";

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

/** Thrown by `open()` when the database's schema is not this code's (code `schema_mismatch`). */
export class SchemaError extends RbpBaseError {
  static {
    brand(this, "SchemaError");
  }
  override readonly name = "SchemaError";
  constructor(message: string) {
    super(message, "schema_mismatch");
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

/** Refuses (SchemaError) a database whose schema is older or newer than this code. */
export async function checkSchema(pool: pg.Pool): Promise<void> {
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
