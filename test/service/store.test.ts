/**
 * The store side of the service under pressure (issue 11, items 2, 3, 4, 6, 8, 9), over loopback
 * HTTP against the real store, the real worker pool and real filesystems:
 *
 * - `rbp serve --data-dir` under `ulimit -n 256`: a 1,000-row experiment is accepted while another
 *   accepted experiment completes every row (one file per request, bounded file operations).
 * - A flood of one organisation's rows does not delay another organisation's single job by more
 *   than one job per worker (round-robin queue).
 * - A request is stored once, not once per row (a large unknown option over 200 rows).
 * - Results have a retention (410 once gone, files removed, quota still counted) and the
 *   in-memory results are bounded (least recently used answer 410).
 * - A full disk (a real 1 MiB tmpfs): 507 with a clear message, nothing charged, no temporary
 *   files; a job whose result cannot be written is failed, and stays failed after a restart.
 * - A damaged state.json stops start-up with what to do; quota equals the stored requests after
 *   SIGKILL during a burst of POSTs; the data dir is 0700 and its files 0600.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { LocalService } from "../../src/service/index.js";
import { startLocalService } from "../../src/service/index.js";
import { spawnServe, type ServeProcess } from "../../scripts/rbp-serve.js";
import { Client, gold, quickstart, start, synthetic, tempDir, until, writeCredentials } from "./helpers.js";

const resultPath = (r: { job_id: number; job_code: string }) => `/v3/results/${r.job_id}/${r.job_code}`;
const experimentPath = (r: { experiment_id: number; experiment_code: string }) => `/v3/experiments/${r.experiment_id}/${r.experiment_code}`;
const thetas = (m: number) => Array.from({ length: m }, (_, i) => gold.inputs.X[i % gold.inputs.X.length]);

const services: LocalService[] = [];
const children: ServeProcess[] = [];
const dirs: Array<{ remove: () => void }> = [];
afterEach(async () => {
  await Promise.all(services.splice(0).map((s) => s.close()));
  for (const c of children.splice(0)) if (c.child.exitCode === null) c.child.kill("SIGKILL");
  for (const d of dirs.splice(0)) d.remove();
});

function dir(): string {
  const d = tempDir();
  dirs.push(d);
  return d.path;
}

async function serve(args: string[], maxOpenFiles?: number): Promise<{ proc: ServeProcess; client: Client }> {
  const proc = await spawnServe(["--port", "0", "--quiet", ...args], {}, { maxOpenFiles });
  children.push(proc);
  return { proc, client: new Client(proc.url, proc.apiKey, proc.accessId!) };
}

/** Every file under `root` (relative paths). */
function filesUnder(root: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    const path = join(root, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(path).map((p) => join(entry.name, p)));
    else out.push(entry.name);
  }
  return out;
}

function bytesUnder(root: string): number {
  return filesUnder(root).reduce((sum, f) => sum + statSync(join(root, f)).size, 0);
}

describe("open files are bounded (item 2)", () => {
  it("under ulimit -n 256, a 1,000-row experiment is accepted while another accepted experiment completes every row", async () => {
    const data = dir();
    const { client } = await serve(["--data-dir", data, "--workers", "2"], 256);
    const first = await client.post("/v3/psr", quickstart({ theta: thetas(300) }));
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const big = await client.post("/v3/psr", quickstart({ theta: thetas(1000) }));
    expect(big.status, JSON.stringify(big.body)).toBe(200);
    expect(big.body.experiment_id).toBe(first.body.experiment_id + 1);
    // new connections are still served while both run
    expect((await client.get("/v3/quota")).body.used).toBe(1300);
    const done = await client.poll(experimentPath(first.body), 120_000);
    expect(done.body).toMatchObject({ status: "completed", n_completed: 300, n_failed: 0 });
    const bigDone = await client.poll(experimentPath(big.body), 120_000);
    expect(bigDone.body).toMatchObject({ status: "completed", n_completed: 1000, n_failed: 0 });
    // one file per request, not per row (the inputs of finished requests are removed)
    expect(readdirSync(join(data, "batches"))).toHaveLength(2);
    expect(readdirSync(join(data, "inputs"))).toEqual([]);
  }, 180_000);
});

describe("refused requests leave nothing behind; a full disk answers 507 (items 2, 8)", () => {
  const mount = "/tmp/rbp-store-test-tmpfs";
  let mounted = false;
  afterAll(() => {
    if (mounted) execFileSync("umount", [mount]);
  });

  function mountTmpfs(): string | undefined {
    try {
      mkdirSync(mount, { recursive: true });
      execFileSync("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", mount]);
      mounted = true;
      return mount;
    } catch {
      return undefined;
    }
  }

  /** Fills the filesystem of `path` up to `leave` bytes free, in one file. */
  function fill(path: string, leave: number): string {
    const filler = join(path, "filler");
    const free = Number(execFileSync("df", ["--output=avail", "-B1", path]).toString().trim().split("\n")[1]);
    writeFileSync(filler, Buffer.alloc(Math.max(0, free - leave)));
    return filler;
  }

  it("disk full: 507 with a clear message, nothing charged, no temporary or orphan files; a job whose result cannot be written stays failed across a restart", async (ctx) => {
    const root = mountTmpfs();
    if (!root) ctx.skip(); // not root, or no tmpfs: nothing to test for real
    const data = join(root!, "data");
    const options = { dataDir: data, apiKey: "disk-full-key-0123456789", accessId: "disk-user", workers: 1 };
    let service = await startLocalService({ port: 0, ...options });
    services.push(service);
    let client = new Client(service.url, options.apiKey, options.accessId);
    expect((await client.run("psr", quickstart())).status).toBe(200);
    const quota = (await client.get("/v3/quota")).body.used;

    const filler = fill(root!, 4096);
    const refused = await client.post("/v3/psr", quickstart({ theta: thetas(50) }));
    expect(refused.status).toBe(507);
    expect(refused.body.error).toBe("insufficient_storage");
    expect(refused.body.message).toMatch(/storage is full.*nothing was charged/);
    expect(refused.body.message).not.toContain(root!);
    expect((await client.get("/v3/quota")).body.used).toBe(quota);
    expect(filesUnder(data).filter((f) => f.endsWith(".tmp"))).toEqual([]);
    expect(readdirSync(join(data, "batches"))).toHaveLength(1);
    expect(readdirSync(join(data, "inputs"))).toEqual([]);
    rmSync(filler);

    // A slow job is accepted; while it runs the disk fills: its result (tens of KB) cannot be
    // written, its outcome (a few hundred bytes) can. Ten thresholds on every combination of 12
    // attributes: a few hundred ms, against the milliseconds the filling takes (its input must fit
    // the 1 MiB disk, so it is made slow by its cells, not its rows).
    const { y, X } = synthetic(1500, 12, 3);
    const slow = await client.post("/v3/grid", { y, X, theta: X[0], options: { max_iter: 4095, threshold: [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9] } });
    expect(slow.status, JSON.stringify(slow.body)).toBe(200);
    const filler2 = fill(root!, 32 * 1024);
    const failed = await client.poll(resultPath(slow.body), 60_000);
    expect(failed.status).toBe(409);
    expect(failed.body.reason).toBe("its result could not be stored: the service's storage is full");
    expect(filesUnder(data).filter((f) => f.endsWith(".tmp"))).toEqual([]);
    await service.close();
    rmSync(filler2);

    const log: string[] = [];
    service = await startLocalService({ port: 0, ...options, log: (line) => log.push(line) });
    services.push(service);
    client = new Client(service.url, options.apiKey, options.accessId);
    // not queued again: the start-up says nothing of re-queueing, and the first read (no wait) finds
    // the stored failure, where a re-queued job would answer 202 (queued or running)
    expect(log.filter((line) => /re-queueing/.test(line))).toEqual([]);
    const after = await client.get(resultPath(slow.body));
    expect(after.status).toBe(409);
    expect(after.body.reason).toBe(failed.body.reason);
    // the ids the refused request drew are not handed out again (it drew experiment 1)
    expect((await client.post("/v3/psr", quickstart({ theta: thetas(2) }))).body.experiment_id).toBe(2);
  }, 120_000);
});

describe("fair queue across organisations (item 3)", () => {
  it("a flood of one organisation's rows delays another's single job by at most one job per worker (one row per task)", async () => {
    const cred = writeCredentials(dir(), [
      { name: "flood", api_key: "key-of-flood-0123456789", plan: { quota: 1000 }, users: [{ access_id: "f" }] },
      { name: "single", api_key: "key-of-single-987654321", plan: { quota: 10 }, users: [{ access_id: "s" }] },
    ]);
    // Rows shared per task (the default) make a turn a task of rows: spread.test.ts covers that bound.
    const { service } = await start({ credentialsFile: cred, workers: 1, experimentRowsPerTask: 1 });
    services.push(service);
    const flood = new Client(service.url, "key-of-flood-0123456789", "f");
    const single = new Client(service.url, "key-of-single-987654321", "s");
    const { y, X } = synthetic(300, 8, 5);
    const body = (theta: unknown) => ({ y, X, theta, options: { max_iter: 255 } });
    const many = await flood.post("/v3/grid", body(X.slice(0, 20)));
    expect(many.status).toBe(200);
    const one = await single.post("/v3/grid", body(X[25]));
    expect(one.status).toBe(200);
    const mine = await single.poll(resultPath(one.body), 60_000);
    expect(mine.status).toBe(200);
    const all = await flood.poll(experimentPath(many.body), 60_000);
    expect(all.body.status).toBe("completed");
    const rows = await Promise.all(many.body.jobs.map((j: { job_id: number; job_code: string }) => flood.get(resultPath(j))));
    const startedBefore = rows.filter((r) => r.body.started_at < mine.body.started_at).length;
    // FIFO would run all 20 rows first; round robin runs at most the one already on the worker
    expect(startedBefore).toBeLessThanOrEqual(1);
  }, 90_000);
});

describe("a request is stored once, not once per row (item 4)", () => {
  // A 200 KB option name (issue 11) is refused at POST since issue 26 (names of at most 128
  // characters): the request's size is now its X, about 200 KB of JSON.
  it("200 rows with a 200 KB X write about one copy of the request", async () => {
    const data = dir();
    const { service, client } = await start({ dataDir: data, apiKey: "stored-once-key-012345", accessId: "u", maxBodyBytes: 10 * 1024 * 1024 });
    services.push(service);
    const { y, X } = synthetic(2_000, 5, 7);
    expect(JSON.stringify(X).length).toBeGreaterThan(180_000);
    const theta = X[0];
    const reply = await client.post("/v3/psr", { y, X, theta: Array.from({ length: 200 }, (_, i) => theta.map((v) => v + i / 1000)) });
    expect(reply.status, JSON.stringify(reply.body).slice(0, 300)).toBe(200);
    expect((await client.poll(experimentPath(reply.body), 60_000)).body.status).toBe("completed");
    await service.close();
    // One copy is ~200 KB; one per row would be 40 MB. The results (each row's N-long arrays) are
    // each job's own and not counted.
    expect(bytesUnder(data) - bytesUnder(join(data, "results"))).toBeLessThan(2_000_000);
  }, 90_000);
});

describe("retention and bounded memory (item 6)", () => {
  it("finished jobs are removed after the retention: 410 naming it, files gone, quota still counted after a restart", async () => {
    const data = dir();
    const options = { dataDir: data, apiKey: "retention-key-0123456789", accessId: "u", retentionMs: 400 };
    const { service, client } = await start(options);
    services.push(service);
    const job = (await client.post("/v3/psr", quickstart())).body;
    const experiment = (await client.post("/v3/psr", quickstart({ theta: thetas(3) }))).body;
    expect((await client.poll(resultPath(job))).status).toBe(200);
    expect((await client.poll(experimentPath(experiment))).status).toBe(200);
    // read until the sweep (every retention/4) has removed it: an event, however slow the machine
    const gone = await until(
      () => client.get(resultPath(job)),
      (r) => r.status !== 200,
    );
    expect(gone.status).toBe(410);
    expect(gone.body).toMatchObject({ error: "gone" });
    expect(gone.body.message).toMatch(/no longer kept.*--retention/);
    // the experiment finished a little later: a later sweep may be the one that removes it
    expect(
      (
        await until(
          () => client.get(experimentPath(experiment)),
          (r) => r.status !== 200,
        )
      ).status,
    ).toBe(410);
    expect((await client.get(`/v3/jobs/${job.job_id}/${job.job_code}/yhat`)).status).toBe(410);
    // and its files, once the sweep's deletions are done
    const left = () => Promise.resolve(["batches", "results", "outcomes"].flatMap((d) => readdirSync(join(data, d))));
    expect(await until(left, (files) => files.length === 0)).toEqual([]);
    expect((await client.get("/v3/quota")).body.used).toBe(4);
    // an id never issued is still 404
    expect((await client.get(`/v3/results/${experiment.jobs[2].job_id + 100}/${"0".repeat(16)}`)).status).toBe(404);
    await service.close();

    const again = await start({ ...options, retentionMs: 3600_000 });
    services.push(again.service);
    expect((await again.client.get("/v3/quota")).body.used).toBe(4);
    expect((await again.client.get(resultPath(job))).status).toBe(410);
    const next = (await again.client.post("/v3/psr", quickstart())).body;
    expect(next.job_id).toBeGreaterThan(experiment.jobs[2].job_id);
  }, 30_000);

  it("with a data dir, job records read back from disk answer exactly as from memory", async () => {
    const { service, client } = await start({ dataDir: dir(), maxJobRecords: 4 });
    services.push(service);
    const receipts = [];
    for (let i = 0; i < 3; i++) receipts.push((await client.post("/v3/psr", quickstart({ theta: thetas(5) }))).body);
    const single = (await client.post("/v3/grid", quickstart())).body;
    const first = [];
    for (const r of receipts) first.push(await client.poll(experimentPath(r)));
    const singleFirst = await client.poll(resultPath(single));
    for (const [i, r] of receipts.entries()) {
      expect(await client.get(experimentPath(r))).toMatchObject({ status: 200, body: first[i].body });
      expect((await client.get(resultPath(r.jobs[4]))).body.results.yhat).toEqual([first[i].body.rows[4].yhat[0]]);
    }
    expect(await client.get(resultPath(single))).toMatchObject({ status: 200, body: singleFirst.body });
    expect((await client.get(`/v3/results/${single.job_id}/${"0".repeat(16)}`)).status).toBe(404);
  }, 30_000);

  it("without a data dir, results in memory are bounded: the least recently used answer 410", async () => {
    const { service, client } = await start({ maxResultMemoryBytes: 8_000, workers: 1 });
    services.push(service);
    const receipts = [];
    for (let i = 0; i < 12; i++) {
      const receipt = (await client.post("/v3/grid", quickstart())).body;
      expect((await client.poll(resultPath(receipt))).status).toBe(200);
      receipts.push(receipt);
    }
    const first = await client.get(resultPath(receipts[0]));
    expect(first.status).toBe(410);
    expect(first.body.message).toMatch(/kept in memory up to .*--data-dir/);
    expect((await client.get(resultPath(receipts[11]))).status).toBe(200);
    // the job record is still known: its state is not lost, only its result
    expect((await client.get(`/v3/jobs/${receipts[0].job_id}/${receipts[0].job_code}/yhat`)).status).toBe(410);
  }, 60_000);
});

describe("state that survives crashes (item 8) and private files (item 9)", () => {
  it("a damaged state.json stops start-up with what to do; quota is never silently reset", async () => {
    const data = dir();
    const options = { dataDir: data, apiKey: "damaged-key-0123456789", accessId: "u" };
    const { service, client } = await start(options);
    services.push(service);
    expect((await client.run("psr", quickstart())).status).toBe(200);
    await service.close();
    writeFileSync(join(data, "state.json"), '{"version": 2, "next_job_');
    await expect(startLocalService({ port: 0, ...options })).rejects.toThrow(/state\.json is damaged.*Restore it from a backup; or move it away/);
    // rbp serve says the same and exits 2 (a usage error)
    const run = spawnServe(["--port", "0", "--data-dir", data]);
    await expect(run).rejects.toThrow(/exited \(2\).*state\.json is damaged/s);
  }, 30_000);

  it("quota equals the stored requests after SIGKILL during a burst of POSTs; every acknowledged receipt is served", async () => {
    const data = dir();
    const { proc, client } = await serve(["--data-dir", data, "--workers", "1"]);
    const sent = Array.from({ length: 60 }, (_, i) => client.post("/v3/psr", quickstart({ theta: thetas(1 + (i % 3)) })).catch(() => undefined));
    // killed once the service has acknowledged a first POST, while the others are in flight
    await Promise.any(sent.map((p) => p.then((r) => (r?.status === 200 ? r : Promise.reject(new Error("not acknowledged"))))));
    proc.child.kill("SIGKILL");
    const replies = (await Promise.all(sent)).filter((r) => r?.status === 200);
    const again = await serve(["--data-dir", data, "--workers", "1"]);
    const used = (await again.client.get("/v3/quota")).body.used;
    let stored = 0;
    for (const f of readdirSync(join(data, "batches"))) stored += JSON.parse(readFileSync(join(data, "batches", f), "utf8")).jobs.length;
    expect(used).toBe(stored);
    const acknowledged = replies.reduce((n, r) => n + (r!.body.n_rows ?? 1), 0);
    expect(used).toBeGreaterThanOrEqual(acknowledged);
    for (const r of replies) {
      const path = r!.body.experiment_id ? experimentPath(r!.body) : resultPath(r!.body);
      expect([200, 202]).toContain((await again.client.get(path)).status);
    }
  }, 60_000);

  it("a data dir of the first layout (one file per job) is converted: its receipts, results and quota stay valid", async () => {
    const data = dir();
    const now = new Date().toISOString();
    const key = { apiKey: "migrate-key-0123456789", accessId: "u" };
    const org = "local";
    const write = (path: string, value: unknown) => {
      mkdirSync(join(data, path, ".."), { recursive: true });
      writeFileSync(join(data, path), typeof value === "string" ? value : JSON.stringify(value));
    };
    const base = { org, analysis: "psr", created_at: now, warnings: ["an old warning"] };
    write("state.json", { version: 1, next_job_id: 4, next_experiment_id: 2, quota_used: { [org]: 3 } });
    write("jobs/1.json", {
      ...base,
      id: 1,
      code: "aaaaaaaaaaaaaaaa",
      status: "completed",
      started_at: now,
      finished_at: now,
      row: 0,
      input_ref: "j1",
      compact: { yhat: [1.5], fit: [0.5] },
    });
    write("results/1.json", '{"yhat":[1.5],"fit":[0.5]}');
    write("jobs/2.json", {
      ...base,
      id: 2,
      code: "bbbbbbbbbbbbbbbb",
      status: "failed",
      finished_at: now,
      row: 0,
      input_ref: "e1",
      experiment_id: 1,
      failure: { message: "old failure", error_code: 3, status_code: 10 },
    });
    write("jobs/3.json", { ...base, id: 3, code: "cccccccccccccccc", status: "running", row: 1, input_ref: "e1", experiment_id: 1 });
    write("experiments/1.json", { id: 1, code: "dddddddddddddddd", org, analysis: "psr", job_ids: [2, 3], created_at: now });
    const X = gold.inputs.X.flat();
    write("inputs/e1.json", { analysis: "psr", rows: 7, cols: 5, y: gold.inputs.y, X, thetas: [gold.inputs.theta, gold.inputs.theta], options: {} });
    const { service, client } = await start({ dataDir: data, ...key, quota: 10 });
    services.push(service);
    expect(await client.get("/v3/results/1/aaaaaaaaaaaaaaaa")).toMatchObject({ status: 200, body: { results: { yhat: [1.5] } } });
    expect((await client.get("/v3/results/2/bbbbbbbbbbbbbbbb")).body.reason).toBe("old failure");
    const experiment = await client.poll("/v3/experiments/1/dddddddddddddddd");
    expect(experiment.body).toMatchObject({ status: "partial_failed", n_completed: 1, n_failed: 1 });
    expect((await client.get("/v3/quota")).body.used).toBe(3);
    expect((await client.post("/v3/psr", quickstart())).body.job_id).toBe(4);
    expect(existsSync(join(data, "jobs"))).toBe(false);
    expect(readdirSync(join(data, "v1-backup")).length).toBeGreaterThan(0);
  }, 30_000);

  it("the data dir is 0700 and its files 0600", async () => {
    const data = join(dir(), "fresh");
    const { service, client } = await start({ dataDir: data });
    services.push(service);
    expect((await client.run("psr", quickstart())).status).toBe(200);
    await service.close();
    expect(statSync(data).mode & 0o777).toBe(0o700);
    for (const f of filesUnder(data)) expect(`${f} ${(statSync(join(data, f)).mode & 0o777).toString(8)}`).toBe(`${f} 600`);
    for (const sub of readdirSync(data).filter((f) => statSync(join(data, f)).isDirectory())) {
      expect(statSync(join(data, sub)).mode & 0o777).toBe(0o700);
    }
    expect(existsSync(join(data, "local-credentials.json"))).toBe(true);
  }, 30_000);
});
