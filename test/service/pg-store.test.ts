/**
 * The PostgreSQL store (src/service/store/pg/) and `rbp worker` (pg-worker.ts) against a real
 * PostgreSQL server (test/pg-server.ts) and real worker processes: migrations, quota spent exactly
 * under concurrent POSTs from two front ends, results byte for byte as the embedded engine thread
 * makes them, fields cut out inside the database, a worker SIGKILLed mid-job, PostgreSQL restarted
 * mid-run, and an experiment of 300 rows spread over three workers.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveField } from "../../src/service/fields.js";
import { IN_CI } from "../ci.js";
import { PgStore } from "../../src/service/store/pg/store.js";
import { MAX_ATTEMPTS } from "../../src/service/store/pg/queue.js";
import { inTransaction } from "../../src/service/store/pg/connection.js";
import { migrate, MIGRATIONS, SchemaError, SCHEMA_VERSION } from "../../src/service/store/pg/schema.js";
import type { Created, JobRecord, QuotaStatus } from "../../src/service/store/contract.js";
import { QuotaExceededError } from "../../src/service/store/errors.js";
import { parseV3 } from "../../src/service/v3.js";
import { runTask } from "../../src/service/worker.js";
import { startLocalService } from "../../src/service/index.js";
import { postgresBin, spawnWorker, startPostgres, type PostgresServer, type WorkerProcess } from "../pg-server.js";
import { gold, synthetic } from "../gold.js";
import { until } from "./helpers.js";

/** Debian's PostgreSQL server (scripts/install-postgres.sh): skipped without it on a developer's machine, failing in CI. */
const RUN = postgresBin() !== undefined || IN_CI;
if (!RUN) console.warn("[test/service] SKIPPED: no PostgreSQL server; install it with bash scripts/install-postgres.sh");

let server: PostgresServer;
let store: PgStore;
let db: pg.Pool;

beforeAll(async () => {
  if (!RUN) return;
  server = await startPostgres();
  db = new pg.Pool({ connectionString: server.url, max: 3 });
  db.on("error", () => undefined);
}, 120_000);

afterAll(async () => {
  await store?.close();
  await db?.end();
  await server?.stop();
}, 60_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function request(body: Record<string, unknown>, analysis: "grid" | "maxfit" | "psr" = "grid") {
  const parsed = parseV3(analysis, { access_id: "a", ...body });
  return {
    analysis: parsed.analysis,
    input: { analysis: parsed.analysis, data: parsed.data, thetas: parsed.thetas, options: parsed.options as Record<string, unknown> },
    warnings: parsed.warnings,
    censorOperator: parsed.resolved.censor_operator,
  };
}

const quick = request({ y: gold.inputs.y, X: gold.inputs.X, theta: gold.inputs.theta });
const PLANS: Record<string, number> = { acme: 1_000_000, tight: 50, flood: 1_000_000, lone: 10 };

/** createJobs as a POST makes it; {ok: false} for the 429. */
async function submit(s: PgStore, org: string, r = quick): Promise<({ ok: true } & Created) | { ok: false; status: QuotaStatus }> {
  try {
    return { ok: true, ...(await s.createJobs({ org, plan: PLANS[org], ...r })) };
  } catch (error) {
    if (error instanceof QuotaExceededError) return { ok: false, status: error.status };
    throw error;
  }
}

async function waitAll(ids: number[], timeoutMs = 120_000): Promise<Array<{ id: number; status: string; attempts: number; ran_by: string | null }>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const r = await db
      .query<{ id: string; status: string; attempts: number; ran_by: string | null }>(
        "SELECT id, status, attempts, ran_by FROM rbp_jobs WHERE id = ANY($1::bigint[]) ORDER BY id",
        [ids],
      )
      .catch(() => undefined);
    if (r && r.rows.every((x) => x.status === "completed" || x.status === "failed")) return r.rows.map((x) => ({ ...x, id: Number(x.id) }));
    if (Date.now() > until) throw new Error(`jobs not finished after ${timeoutMs} ms: ${JSON.stringify(r?.rows.filter((x) => x.status !== "completed"))}`);
    await sleep(100);
  }
}

describe.skipIf(!RUN)("schema", () => {
  it("refuses an unmigrated database, naming the command; concurrent migrations apply each version once", async () => {
    await expect(PgStore.open(server.url)).rejects.toThrow(SchemaError);
    await expect(PgStore.open(server.url)).rejects.toThrow(/rbp serve --database URL --migrate/);
    const pools = [new pg.Pool({ connectionString: server.url }), new pg.Pool({ connectionString: server.url })];
    const applied = await Promise.all(pools.map((p) => migrate(p)));
    await Promise.all(pools.map((p) => p.end()));
    expect(applied.flat().sort()).toEqual(MIGRATIONS.map((m) => m.version));
    const versions = await db.query("SELECT version FROM rbp_schema ORDER BY version");
    expect(versions.rows.map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version));
    expect(versions.rows.at(-1).version).toBe(SCHEMA_VERSION);
    store = await PgStore.open(server.url, { migrate: true, runJobs: false });
  });
});

describe.skipIf(!RUN)("a connection lost inside a transaction", () => {
  it("rejects the transaction and discards the client instead of ending the process with an uncaught 'error'", async () => {
    const pool = new pg.Pool({ connectionString: server.url, max: 1 });
    pool.on("error", () => undefined);
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown) => uncaught.push(error);
    process.on("uncaughtException", onUncaught);
    try {
      await expect(
        inTransaction(pool, async (c) => {
          const pid = (await c.query("SELECT pg_backend_pid() AS pid")).rows[0].pid;
          // The server ends this backend between two statements, while the client is checked out.
          await db.query("SELECT pg_terminate_backend($1)", [pid]);
          // until the server shows the backend gone (an event, not a fixed sleep)
          await until(
            () => db.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = $1", [pid]),
            (r) => r.rows[0].n === 0,
          );
          await c.query("SELECT 1");
        }),
      ).rejects.toThrow();
      expect(uncaught).toEqual([]);
      // The broken client was discarded: the pool's next query gets a fresh connection.
      expect((await pool.query("SELECT 1 AS one")).rows[0].one).toBe(1);
    } finally {
      process.off("uncaughtException", onUncaught);
      await pool.end();
    }
  });
});

describe.skipIf(!RUN)("held reads of a job (v2 long-poll)", () => {
  it("share one LISTEN connection, made in the background: 32 reads at once open one, and each ends at its deadline", async () => {
    const second = await PgStore.open(server.url, { migrate: true, runJobs: false });
    // The real client, counted as it is made (the store's pool made its own before).
    const Real = pg.Client;
    let made = 0;
    pg.Client = class Counted extends Real {
      constructor(...args: ConstructorParameters<typeof Real>) {
        super(...args);
        made++;
      }
    };
    try {
      // A job that never ends (no such id): each wait looks at it every second until its deadline.
      await Promise.all(Array.from({ length: 32 }, () => second.waitForJob(987_654_321, 300)));
      expect(made).toBe(1);
      // until it listens (an event, not a fixed sleep); a later wait then opens none
      await until(
        () => db.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE query = 'LISTEN rbp_done'"),
        (r) => r.rows[0].n >= 1,
      );
      await second.waitForJob(987_654_321, 50);
      expect(made).toBe(1);
    } finally {
      pg.Client = Real;
      await second.close();
    }
  });
});

describe.skipIf(!RUN)("quota across two front ends", () => {
  it("concurrent POSTs to two stores spend exactly the plan, and every charge has its jobs", async () => {
    const second = await PgStore.open(server.url, { runJobs: false });
    try {
      const fronts = [store, second];
      const outcomes = await Promise.all(Array.from({ length: 80 }, (_, i) => submit(fronts[i % 2], "tight")));
      expect(outcomes.filter((o) => o.ok)).toHaveLength(50);
      expect(outcomes.every((o) => o.ok || o.status.remaining === 0)).toBe(true);
      expect(await store.quotaStatus("tight", 50)).toEqual({ quota: 50, used: 50, remaining: 0 });
      const jobs = await db.query("SELECT count(*)::int AS n FROM rbp_jobs WHERE org = 'tight'");
      expect(jobs.rows[0].n).toBe(50);
      // An experiment that cannot be paid for creates nothing.
      const big = request({ y: gold.inputs.y, X: gold.inputs.X, theta: [gold.inputs.theta, gold.inputs.theta] });
      const refused = await submit(second, "tight", big);
      expect(refused.ok).toBe(false);
      expect((await db.query("SELECT count(*)::int AS n FROM rbp_experiments WHERE org = 'tight'")).rows[0].n).toBe(0);
    } finally {
      await second.close();
    }
  });

  it("an unknown job, a wrong code or another organisation's job is not found", async () => {
    const made = await submit(store, "acme");
    if (!made.ok) throw new Error("not charged");
    const job = made.jobs[0];
    expect((await store.findJob("acme", job.id, job.code))?.id).toBe(job.id);
    expect(await store.findJob("acme", job.id, "0".repeat(16))).toBeUndefined();
    expect(await store.findJob("tight", job.id, job.code)).toBeUndefined();
    expect(await store.findJob("acme", 9_999_999, job.code)).toBeUndefined();
  });
});

describe.skipIf(!RUN)("fair claims", () => {
  it("a flood of one organisation's jobs does not hold back another's: claims go round robin over organisations", async () => {
    // Queued now (no worker yet): 50 jobs of "tight" from above, then a flood of 30, then one of acme.
    const flood = request({ y: gold.inputs.y, X: gold.inputs.X, theta: Array.from({ length: 30 }, () => gold.inputs.theta) });
    expect((await submit(store, "flood", flood)).ok).toBe(true);
    const single = await submit(store, "lone");
    if (!single.ok) throw new Error("not charged");
    const runner = await PgStore.open(server.url, { leaseMs: 60_000 });
    try {
      const claimed = [await runner.claim(), await runner.claim(), await runner.claim()];
      // Organisations with queued work: tight (50), acme (1, from above), flood (30), lone (1).
      expect(new Set(claimed.map((c) => c?.job.org)).size).toBe(3);
      const fourth = await runner.claim();
      expect([...claimed, fourth].map((c) => c?.job.org).sort()).toEqual(["acme", "flood", "lone", "tight"]);
      expect([...claimed, fourth].find((c) => c?.job.org === "lone")?.job.id).toBe(single.jobs[0].id);
    } finally {
      await runner.close(); // hands the three back to the queue
    }
    const requeued = await db.query("SELECT count(*)::int AS n FROM rbp_jobs WHERE status = 'running'");
    expect(requeued.rows[0].n).toBe(0);
  });
});

describe.skipIf(!RUN)("a front end that runs jobs", () => {
  it("runs jobs another front end queued after it started (woken by rbp_jobs, or its poll)", async () => {
    const front = await startLocalService({ port: 0, database: server.url, workers: 1, credentialsFile: undefined, apiKey: "k".repeat(24), accessId: "a" });
    try {
      // It runs what the tests above left queued, then is idle: nothing of its own will call claim() again.
      await until(
        () => db.query("SELECT count(*)::int AS n FROM rbp_jobs WHERE status IN ('queued', 'running')"),
        (r) => r.rows[0].n === 0,
      );
      const made = await submit(store, "acme");
      if (!made.ok) throw new Error("not charged");
      const [done] = await waitAll([made.jobs[0].id], 20_000);
      expect(done.status).toBe("completed");
      expect(done.ran_by).toMatch(new RegExp(`:${process.pid}:`));
    } finally {
      await front.close();
    }
  }, 180_000);
});

describe.skipIf(!RUN)("workers", () => {
  let workers: WorkerProcess[] = [];
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop()));
  }, 60_000);

  it("three worker processes run every job; results are byte for byte what the engine thread encodes", async () => {
    workers = await Promise.all([0, 1, 2].map(() => spawnWorker(server.url, ["--lease", "2"])));
    const made = await submit(store, "acme");
    if (!made.ok) throw new Error("not charged");
    const [done] = await waitAll([made.jobs[0].id]);
    expect(done.status).toBe("completed");
    const local = runTask({ id: 1, analysis: "grid", ...quick.input.data, theta: quick.input.thetas[0], options: quick.input.options, decimals: 6 });
    if (local.type !== "done") throw new Error(`not a result: ${JSON.stringify(local).slice(0, 200)}`);
    expect(await store.readResult({ id: done.id } as JobRecord)).toBe(local.json);
    const job = await store.findJob("acme", made.jobs[0].id, made.jobs[0].code);
    expect(job?.status).toBe("completed");
    expect(job?.compact).toEqual({ yhat: local.yhat, fit: local.fit });
  }, 120_000);

  it("a field is resolved inside PostgreSQL exactly as fields.ts resolves it in memory", async () => {
    const made = await submit(store, "acme");
    if (!made.ok) throw new Error("not charged");
    const id = made.jobs[0].id;
    await waitAll([id]);
    const object = JSON.parse((await store.readResult({ id } as JobRecord))!);
    for (const segments of [["yhat"], ["yhat", "0"], ["insights"], Object.keys(object).slice(0, 1)]) {
      let expected: { path: unknown; value: unknown } | Error;
      try {
        expected = resolveField(object, segments);
      } catch (error) {
        expected = error as Error;
      }
      if (expected instanceof Error) {
        await expect(store.readResultField({ id } as JobRecord, segments)).rejects.toThrow(expected.message);
      } else {
        expect(await store.readResultField({ id } as JobRecord, segments)).toEqual(expected);
      }
    }
    // A missing field answers the same 404 as the embedded store, naming what is there.
    let message = "";
    try {
      resolveField(object, ["nope"]);
    } catch (error) {
      message = (error as Error).message;
    }
    await expect(store.readResultField({ id } as JobRecord, ["nope"])).rejects.toThrow(message);
    expect(await store.readResultField({ id: 9_999_999 } as JobRecord, ["yhat"])).toBeUndefined();
  }, 120_000);

  it("an experiment of 300 rows is spread over all three workers", async () => {
    const { y, X } = synthetic(60, 4, 3);
    const thetas = Array.from({ length: 300 }, (_, i) => X[i % X.length]);
    const r = request({ y, X, theta: thetas }, "psr");
    const made = await submit(store, "acme", r);
    if (!made.ok) throw new Error("not charged");
    expect(made.experiment).toBeDefined();
    const rows = await waitAll(made.jobs.map((j) => j.id));
    expect(rows.filter((x) => x.status === "completed")).toHaveLength(300);
    const byWorker = new Map<string, number>();
    for (const row of rows) byWorker.set(row.ran_by!, (byWorker.get(row.ran_by!) ?? 0) + 1);
    expect([...byWorker.keys()].sort()).toEqual(workers.map((w) => w.owner).sort());
    const jobs = await store.experimentJobs(made.experiment!);
    expect(jobs.map((j) => j.row)).toEqual(Array.from({ length: 300 }, (_, i) => i));
    // The shared input is deleted once its last row finished.
    expect((await db.query("SELECT count(*)::int AS n FROM rbp_inputs WHERE pending > 0")).rows[0].n).toBe(0);
  }, 180_000);

  it("a worker SIGKILLed mid-job: the job completes on another worker once the lease expires, charged once", async () => {
    const before = await store.quotaStatus("acme", PLANS.acme);
    const { y, X } = synthetic(2000, 12, 7);
    const slow = request({ y, X, theta: X[0], options: { max_iter: 4095, threshold: [0, 0.2, 0.4, 0.6, 0.8] } });
    const made = await submit(store, "acme", slow);
    if (!made.ok) throw new Error("not charged");
    const id = made.jobs[0].id;
    let owner: string | null = null;
    for (let i = 0; i < 600 && owner === null; i++) {
      owner = (await db.query("SELECT lease_owner FROM rbp_jobs WHERE id = $1 AND status = 'running'", [id])).rows[0]?.lease_owner ?? null;
      if (owner === null) await sleep(20);
    }
    expect(owner, "the slow job was never claimed").not.toBeNull();
    const victim = workers.find((w) => w.owner === owner)!;
    victim.child.kill("SIGKILL");
    await new Promise((r) => victim.child.once("exit", r));
    const [done] = await waitAll([id], 180_000);
    expect(done.status).toBe("completed");
    expect(done.attempts).toBe(2);
    expect(done.ran_by).not.toBe(owner);
    const after = await store.quotaStatus("acme", PLANS.acme);
    expect(after.used - before.used).toBe(1);
    expect(await store.readResult({ id } as JobRecord)).toMatch(/^\{/);
    workers = workers.filter((w) => w !== victim);
  }, 240_000);

  it("PostgreSQL restarted mid-run (immediate stop, like a crash): the jobs resume, none lost, each charged once", async () => {
    const before = await store.quotaStatus("acme", PLANS.acme);
    const { y, X } = synthetic(400, 8, 5);
    const ids: number[] = [];
    for (let i = 0; i < 4; i++) {
      const r = request({ y, X, theta: X.slice(i * 10, i * 10 + 10) });
      const made = await submit(store, "acme", r);
      if (!made.ok) throw new Error("not charged");
      ids.push(...made.jobs.map((j) => j.id));
    }
    // mid-run: once the workers have started on the jobs (an event, not a fixed sleep)
    await until(
      () => db.query("SELECT count(*)::int AS n FROM rbp_jobs WHERE id = ANY($1) AND status <> 'queued'", [ids]),
      (r) => r.rows[0].n > 0,
    );
    await server.restart("immediate", 500);
    const rows = await waitAll(ids, 60_000).catch((error: Error) => {
      throw new Error(
        `${error.message}\n${workers.map((w) => `worker ${w.owner} exit ${w.child.exitCode ?? w.child.signalCode}: ${w.stderr().slice(-3000)}`).join("\n")}`,
      );
    });
    expect(rows.filter((x) => x.status === "completed")).toHaveLength(40);
    expect(rows.every((x) => x.attempts <= MAX_ATTEMPTS)).toBe(true);
    const after = await store.quotaStatus("acme", PLANS.acme);
    expect(after.used - before.used).toBe(40);
    const results = await db.query("SELECT count(*)::int AS n FROM rbp_results WHERE job_id = ANY($1::bigint[])", [ids]);
    expect(results.rows[0].n).toBe(40);
  }, 240_000);
});

describe.skipIf(!RUN)("retention", () => {
  it("removes finished jobs, their results and emptied experiments past the retention; their ids answer as gone, never as unknown", async () => {
    const made = await submit(store, "acme");
    if (!made.ok) throw new Error("not charged");
    const { y, X } = synthetic(30, 3, 9);
    const r = request({ y, X, theta: [X[0], X[1]] }, "psr");
    const experiment = await submit(store, "acme", r);
    if (!experiment.ok) throw new Error("not charged");
    const ids = [made.jobs[0].id, ...experiment.jobs.map((j) => j.id)];
    const runner = await PgStore.open(server.url, { runJobs: true, retentionMs: 60_000 });
    try {
      // Run them here (the worker processes are stopped by now).
      for (let i = 0; i < 3; i++) {
        const claimed = await runner.claim();
        if (!claimed) break;
        const done = runTask({
          id: claimed.job.id,
          analysis: claimed.input.analysis,
          ...claimed.input.data,
          theta: claimed.input.thetas[claimed.job.row],
          options: claimed.input.options,
          decimals: 6,
        });
        if (done.type !== "done") throw new Error(`not a result: ${JSON.stringify(done).slice(0, 200)}`);
        expect(await runner.complete(claimed.job, done.json, { yhat: done.yhat, fit: done.fit })).toBe("completed");
      }
      await waitAll(ids, 10_000);
      expect(await runner.expire(new Date())).toBe(0); // within the retention
      const removed = await runner.expire(new Date(Date.now() + 120_000));
      expect(removed).toBeGreaterThanOrEqual(3);
      expect(await runner.findJob("acme", made.jobs[0].id, made.jobs[0].code)).toBeUndefined();
      expect(await runner.readResult({ id: made.jobs[0].id } as JobRecord)).toBeUndefined();
      expect(await runner.expiredReason("job", made.jobs[0].id)).toMatch(/no longer kept.*--retention/);
      expect(await runner.findExperiment("acme", experiment.experiment!.id, experiment.experiment!.code)).toBeUndefined();
      expect(await runner.expiredReason("experiment", experiment.experiment!.id)).toMatch(/no longer kept/);
      expect(await runner.expiredReason("job", 9_999_999)).toBeUndefined();
      const left = await db.query("SELECT count(*)::int AS n FROM rbp_results WHERE job_id = ANY($1::bigint[])", [ids]);
      expect(left.rows[0].n).toBe(0);
    } finally {
      await runner.close();
    }
  }, 60_000);
});
