/**
 * The team service as processes: one real PostgreSQL server (test/pg-server.ts), two front ends
 * (`rbp serve --database URL --workers 0`) and three workers (`rbp worker --database URL`), talked
 * to over HTTP like a notebook behind a load balancer would. Concurrent POSTs to both front ends
 * spend exactly the quota; a worker SIGKILLed mid-job: the job completes on another, charged once;
 * a front end killed: the other serves every result; PostgreSQL restarted mid-run: the jobs resume,
 * none lost; an experiment of 300 rows is spread over all the workers.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IN_CI } from "../ci.js";
import { spawnServe, type ServeProcess } from "../../scripts/rbp-serve.js";
import { postgresBin, spawnWorker, startPostgres, type PostgresServer, type WorkerProcess } from "../pg-server.js";
import { Client, gold, quickstart, sleep, synthetic, tempDir, until, writeCredentials } from "./helpers.js";
import { officialPsrBody, send, V2, V2Client } from "./v2-helpers.js";

/** Debian's PostgreSQL server (scripts/install-postgres.sh): skipped without it on a developer's machine, failing in CI. */
const RUN = postgresBin() !== undefined || IN_CI;
if (!RUN) console.warn("[test/service] SKIPPED: no PostgreSQL server; install it with bash scripts/install-postgres.sh");

const KEY = "team-key-0123456789abcdef";
const TIGHT_KEY = "tight-key-0123456789abcdef";

let server: PostgresServer;
let db: pg.Pool;
let fronts: ServeProcess[] = [];
let workers: WorkerProcess[] = [];
const dir = tempDir();

const client = (front: ServeProcess, key = KEY, accessId = "ann") => new Client(front.url, key, accessId);

beforeAll(async () => {
  if (!RUN) return;
  server = await startPostgres();
  db = new pg.Pool({ connectionString: server.url, max: 2 });
  db.on("error", () => undefined);
  const credentials = writeCredentials(dir.path, [
    { name: "team", api_key: KEY, plan: { quota: 100_000 }, users: [{ access_id: "ann" }] },
    { name: "tight", api_key: TIGHT_KEY, plan: { quota: 40 }, users: [{ access_id: "tom" }] },
  ]);
  // The first front end migrates; the second finds the schema current.
  fronts.push(await spawnServe(["--port", "0", "--database", server.url, "--migrate", "--workers", "0", "--credentials", credentials, "--quiet"]));
  fronts.push(await spawnServe(["--port", "0", "--database", server.url, "--workers", "0", "--credentials", credentials, "--quiet"]));
  workers = await Promise.all([0, 1, 2].map(() => spawnWorker(server.url, ["--lease", "2", "--quiet"])));
}, 180_000);

afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  for (const f of fronts) if (f.child.exitCode === null) f.child.kill("SIGTERM");
  await db?.end();
  await server?.stop();
  dir.remove();
}, 60_000);

const resultPath = (r: { job_id: number; job_code: string }) => `/v3/results/${r.job_id}/${r.job_code}`;

describe.skipIf(!RUN)("two front ends and three workers on one PostgreSQL", () => {
  it("a front end refuses a database whose schema is not current, naming --migrate", async () => {
    const empty = `${server.url}_empty`;
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    await admin.query("CREATE DATABASE rbp_empty");
    await admin.end();
    await expect(spawnServe(["--port", "0", "--database", empty, "--workers", "0", "--quiet"])).rejects.toThrow(/--migrate/);
  }, 60_000);

  it("a job POSTed to one front end is served by the other, byte for byte", async () => {
    const receipt = await client(fronts[0]).post("/v3/grid", quickstart());
    expect(receipt.status, JSON.stringify(receipt.body)).toBe(200);
    const a = await client(fronts[1]).poll(resultPath(receipt.body), 60_000);
    const b = await client(fronts[0]).poll(resultPath(receipt.body), 60_000);
    expect(a.status).toBe(200);
    expect(JSON.stringify(a.body)).toBe(JSON.stringify(b.body));
    const field = await client(fronts[1]).get(`/v3/jobs/${receipt.body.job_id}/${receipt.body.job_code}/yhat`);
    expect(field.status).toBe(200);
    expect(field.body.values).toEqual(a.body.results.yhat);
  }, 120_000);

  it("a v2 upload URL from one front end is PUT to the other, and a POST to the first finds the upload", async () => {
    const name = "feedbeef.json";
    const issued = await send("GET", `${fronts[0].url}${V2}/payload/upload/url/X`, { "x-api-key": KEY }, { file_name: name });
    expect(issued.status, JSON.stringify(issued.body)).toBe(200);
    const onOther = new URL(issued.body.url);
    const url = `${fronts[1].url}${onOther.pathname}${onOther.search}`;
    const put = await send("PUT", url, {}, JSON.stringify(gold.inputs.X));
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.outcome).toBe("created");
    expect((await send("PUT", url, {}, JSON.stringify(gold.inputs.X))).body.outcome).toBe("unchanged");
    const v2 = new V2Client(fronts[0].url, KEY, "ann");
    const byRef = await v2.run("psr", officialPsrBody({ X: name, threshold: [0.8] }));
    const inline = await new V2Client(fronts[1].url, KEY, "ann").run("psr", officialPsrBody({ threshold: [0.8] }));
    expect(byRef.result.body.yhat).toEqual(inline.result.body.yhat);
    expect(byRef.result.body.error_code).toBe(0);
  }, 120_000);

  it("concurrent POSTs to both front ends against one quota spend exactly the quota", async () => {
    const posts = await Promise.all(Array.from({ length: 70 }, (_, i) => client(fronts[i % 2], TIGHT_KEY, "tom").post("/v3/psr", quickstart())));
    expect(posts.filter((p) => p.status === 200)).toHaveLength(40);
    expect(posts.filter((p) => p.status === 429)).toHaveLength(30);
    const quota = await client(fronts[1], TIGHT_KEY, "tom").get("/v3/quota");
    expect(quota.body).toMatchObject({ quota: 40, used: 40, remaining: 0 });
    const jobs = await db.query("SELECT count(*)::int AS n FROM rbp_jobs WHERE org = 'tight'");
    expect(jobs.rows[0].n).toBe(40);
  }, 120_000);

  it("an experiment of 300 rows is spread over all three workers", async () => {
    const { y, X } = synthetic(60, 4, 3);
    const theta = Array.from({ length: 300 }, (_, i) => X[i % X.length]);
    const receipt = await client(fronts[0]).post("/v3/psr", { y, X, theta });
    expect(receipt.status, JSON.stringify(receipt.body)).toBe(200);
    const view = await client(fronts[1]).poll(`/v3/experiments/${receipt.body.experiment_id}/${receipt.body.experiment_code}`, 120_000);
    expect(view.status).toBe(200);
    expect(view.body.n_completed).toBe(300);
    const ranBy = await db.query<{ ran_by: string; n: number }>("SELECT ran_by, count(*)::int AS n FROM rbp_jobs WHERE experiment_id = $1 GROUP BY ran_by", [
      receipt.body.experiment_id,
    ]);
    expect(ranBy.rows.map((r) => r.ran_by).sort()).toEqual(workers.map((w) => w.owner).sort());
  }, 180_000);

  it("a worker SIGKILLed mid-job: the job completes on another worker, charged once", async () => {
    const before = (await client(fronts[0]).get("/v3/quota")).body.used;
    const { y, X } = synthetic(2000, 12, 7);
    const receipt = await client(fronts[0]).post("/v3/grid", { y, X, theta: X[0], options: { max_iter: 4095, threshold: [0, 0.2, 0.4, 0.6, 0.8] } });
    expect(receipt.status).toBe(200);
    let owner: string | undefined;
    for (let i = 0; i < 1000 && owner === undefined; i++) {
      owner =
        (await db.query("SELECT lease_owner FROM rbp_jobs WHERE id = $1 AND status = 'running'", [receipt.body.job_id])).rows[0]?.lease_owner ?? undefined;
      if (owner === undefined) await sleep(20);
    }
    const victim = workers.find((w) => w.owner === owner);
    expect(victim, "the job was never claimed").toBeDefined();
    victim!.child.kill("SIGKILL");
    const done = await client(fronts[1]).poll(resultPath(receipt.body), 180_000);
    expect(done.status).toBe(200);
    const row = (await db.query("SELECT attempts, ran_by FROM rbp_jobs WHERE id = $1", [receipt.body.job_id])).rows[0];
    expect(row.attempts).toBe(2);
    expect(row.ran_by).not.toBe(owner);
    expect((await client(fronts[1]).get("/v3/quota")).body.used - before).toBe(1);
    workers = workers.filter((w) => w !== victim);
    workers.push(await spawnWorker(server.url, ["--lease", "2", "--quiet"]));
  }, 240_000);

  it("PostgreSQL restarted mid-run: the jobs resume and none is lost; the front ends answer again", async () => {
    const { y, X } = synthetic(400, 8, 5);
    const receipts = [];
    for (let i = 0; i < 4; i++) {
      const r = await client(fronts[i % 2]).post("/v3/grid", { y, X, theta: X.slice(i * 10, i * 10 + 10) });
      expect(r.status).toBe(200);
      receipts.push(r.body);
    }
    // mid-run: once a worker has taken one of these jobs (an event, not a fixed sleep)
    const ids = receipts.map((r) => r.experiment_id);
    await until(
      () => db.query("SELECT count(*)::int AS n FROM rbp_jobs WHERE experiment_id = ANY($1) AND status <> 'queued'", [ids]),
      (r) => r.rows[0].n > 0,
    );
    await server.restart("immediate", 1000);
    for (const r of receipts) {
      const view = await client(fronts[1]).poll(`/v3/experiments/${r.experiment_id}/${r.experiment_code}`, 180_000);
      expect(view.status).toBe(200);
      expect(view.body.n_completed).toBe(10);
    }
  }, 300_000);

  it("a front end killed: the other serves every result", async () => {
    const receipts = [];
    for (let i = 0; i < 10; i++) {
      const r = await client(fronts[0]).post("/v3/maxfit", quickstart());
      expect(r.status).toBe(200);
      receipts.push(r.body);
    }
    fronts[0].child.kill("SIGKILL");
    await new Promise((r) => fronts[0].child.once("exit", r));
    for (const r of receipts) {
      const done = await client(fronts[1]).poll(resultPath(r), 120_000);
      expect(done.status).toBe(200);
      expect(done.body.status).toBe("completed");
    }
  }, 240_000);
});
