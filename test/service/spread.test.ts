/**
 * One Grid through the service uses every free worker, merged in a fixed order (the result is
 * the same bit for bit with 1 or 2 workers, and equals the engine's grid); a waiting job takes a
 * borrowed worker back; an experiment's Grid rows run in one worker task, each row identical to
 * the row run alone.
 */
import type { Worker } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import { parseRequest, type ParsedRequest } from "../../src/api/request.js";
import { grid } from "../../src/engine/index.js";
import { GRID_CHUNK } from "../../src/engine/grid.js";
import { SHARE } from "../../src/threads/chunk-share.js";
import { PredictionService, SPREAD_GRID_MIN_WORK } from "../../src/service/core.js";
import { EmbeddedStore } from "../../src/service/store/embedded.js";
import { MemoryPersistence } from "../../src/service/store/persistence.js";

import { startLocalService } from "../../src/service/index.js";
import { credentialsFrom, localCredentials } from "../../src/service/credentials.js";
import { encodeJson } from "../../src/service/encode.js";
import { defaultSpawn } from "../../src/service/pool.js";
import { runTask, type WorkerDone, type WorkerFailed, type WorkerRows, type WorkerTask } from "../../src/service/worker.js";
import { synthetic } from "./helpers.js";
import { recordedService, type RecordedService } from "./recorded-workers.js";

/** The store the composition root gives the service: the embedded one, in memory. */
const memoryStore = () => EmbeddedStore.open(new MemoryPersistence());

const local = localCredentials({ apiKey: "spread-test-key", accessId: "spread-test-user", quota: 1000 });
const org = local.credentials.orgs[0];
const services: PredictionService[] = [];
afterEach(async () => {
  await Promise.all(services.splice(0).map((s) => s.close()));
});

/** A service whose workers' tasks are recorded (recorded-workers.ts). */
async function openService(workers: number, experimentRowsPerTask = 1, jobTimeoutMs?: number): Promise<RecordedService> {
  const recorded = await recordedService(local.credentials, {
    workers,
    decimals: null,
    experimentRowsPerTask,
    ...(jobTimeoutMs !== undefined ? { jobTimeoutMs } : {}),
  });
  services.push(recorded.service);
  return recorded;
}

const request = (analysis: "psr" | "grid", body: Record<string, unknown>) =>
  parseRequest(analysis, { access_id: "spread-test-user", ...body }, "v3") as ParsedRequest;

async function run(service: PredictionService, body: Record<string, unknown>, analysis: "psr" | "grid" = "grid"): Promise<string[]> {
  const { jobs } = await service.submit(org, request(analysis, body));
  for (const job of jobs) await service.waitForJob(job, 120_000);
  for (const job of jobs) expect(job.status, job.failure?.message).toBe("completed");
  return Promise.all(jobs.map((job) => service.resultJson(job)));
}

describe("a Grid through the service", () => {
  const { y, X } = synthetic(700, 10, 3);
  const theta = X[5].map((v) => v + 0.1);
  expect(700 * 2 ** 10).toBeGreaterThanOrEqual(SPREAD_GRID_MIN_WORK);

  it("spreads over the free workers and gives the same result bit for bit with 1 or 2 workers (and the engine's grid)", async () => {
    const one = await openService(1);
    const two = await openService(2);
    const [alone] = await run(one.service, { y, X, theta });
    expect(one.tasks).toEqual(["whole"]);
    // Both workers started first, then until the helper has delivered some of the chunks.
    await Promise.all([0, 1].map(() => run(two.service, { y: y.slice(0, 50), X: X.slice(0, 50).map((r) => r.slice(0, 3)), theta: theta.slice(0, 3) }, "psr")));
    await two.ready(2);
    let spread = "";
    for (let attempt = 0; attempt < 10; attempt++) {
      // The last attempt's helper off its worker first: a Grid that finds one worker free runs whole.
      await two.idle();
      two.tasks.length = 0;
      two.counters.length = 0;
      [spread] = await run(two.service, { y, X, theta });
      expect(spread).toBe(alone);
      if (Atomics.load(two.counters[0], SHARE.delivered) > 0) break;
    }
    expect([...two.tasks].sort()).toEqual(["draw", "lead"]);
    expect(Atomics.load(two.counters[0], SHARE.delivered)).toBeGreaterThan(0);
    const data = { y: Float64Array.from(y), X: Float64Array.from(X.flat()), rows: y.length, cols: X[0].length };
    expect(spread).toBe(encodeJson(grid(data, Float64Array.from(theta)), null));
  }, 180_000);

  it("gives a borrowed worker back to a job that waits: a small job finishes while the large Grid runs", async () => {
    // About 1.3e9 cell-observations: several times what two threads do in 0.4 s, however fast the engine gets here.
    const big = synthetic(10_000, 14, 4);
    const chunks = Math.ceil((2 ** 12 - 1) / GRID_CHUNK);
    const { service, tasks, counters } = await openService(2);
    const { jobs } = await service.submit(org, request("grid", { y: big.y, X: big.X, theta: big.X[0], options: { max_iter: 2 ** 12 - 1 } }));
    const gridJob = jobs[0];
    while (!(tasks.includes("draw") && tasks.includes("lead"))) await new Promise((r) => setTimeout(r, 10));
    const [small] = await run(service, { y: y.slice(0, 50), X: X.slice(0, 50).map((r) => r.slice(0, 3)), theta: theta.slice(0, 3) }, "psr");
    expect(JSON.parse(small).yhat).toHaveLength(1);
    expect(gridJob.status).toBe("running");
    // The small job did not wait for the Grid's chunks to run out: the helper gave its worker back
    // after its chunk, while most chunks were still to be drawn (by the lead alone from then on).
    expect(Atomics.load(counters[0], SHARE.next)).toBeLessThan(chunks / 2);
    expect(Atomics.load(counters[0], SHARE.stop)).toBe(1);
    await service.waitForJob(gridJob, 300_000);
    expect(gridJob.status).toBe("completed");
  }, 400_000);

  it("keeps the job's time limit when spread: no part, nor the merge, runs past it", async () => {
    // Each part of a spread Grid is a task of its own; the job's limit must bound them together.
    // About 1.3e9 cell-observations: several times what two threads do in 0.4 s, however fast the engine gets here.
    const big = synthetic(10_000, 14, 4);
    const { service, tasks, ready } = await openService(2, 1, 400);
    // Both workers started first, so that both parts start at once.
    await Promise.all([0, 1].map(() => run(service, { y: y.slice(0, 50), X: X.slice(0, 50).map((r) => r.slice(0, 3)), theta: theta.slice(0, 3) }, "psr")));
    await ready(2);
    tasks.length = 0;
    const { jobs } = await service.submit(org, request("grid", { y: big.y, X: big.X, theta: big.X[0], options: { max_iter: 2 ** 14 - 1 } }));
    await service.waitForJob(jobs[0], 60_000);
    expect([...tasks].sort()).toEqual(["draw", "lead"]);
    expect(jobs[0].status).toBe("failed");
    expect(jobs[0].failure?.message).toBe("the job exceeded its time limit of 0.4 s");
  }, 120_000);

  it("does not wait for a helper whose worker never becomes ready: the lead draws every chunk and the job completes", async () => {
    // The second worker never says "ready", so the helper's task never starts (the old code waited
    // for every part, with no time limit on a part that never started: the job hung).
    let spawned = 0;
    const tasks: string[] = [];
    const spawn = (): Worker => {
      const worker = defaultSpawn();
      if (spawned++ === 1) {
        // The pool never hears from this worker (its "ready" included).
        const on = worker.on.bind(worker);
        worker.on = ((event: string, listener: (...args: unknown[]) => void) => (event === "message" ? worker : on(event, listener))) as Worker["on"];
        return worker;
      }
      const post = worker.postMessage.bind(worker);
      worker.postMessage = (task: WorkerTask, transfer?: never) => {
        tasks.push(task.part ? task.part.kind : "whole");
        return post(task, transfer);
      };
      return worker;
    };
    const service = await PredictionService.open({ store: await memoryStore(), credentials: local.credentials, config: { workers: 2, decimals: null }, spawn });
    services.push(service);
    const [spread] = await run(service, { y, X, theta });
    expect(tasks).toEqual(["lead"]);
    const data = { y: Float64Array.from(y), X: Float64Array.from(X.flat()), rows: y.length, cols: X[0].length };
    expect(spread).toBe(encodeJson(grid(data, Float64Array.from(theta)), null));
  }, 180_000);

  it("completes the job when a helper's worker dies: the lead computes the chunks it did not deliver (same result)", async () => {
    const spawn = (): Worker => {
      const worker = defaultSpawn();
      const post = worker.postMessage.bind(worker);
      worker.postMessage = (task: WorkerTask, transfer?: never) => {
        post(task, transfer);
        if (task.part?.kind === "draw") void worker.terminate();
      };
      return worker;
    };
    const service = await PredictionService.open({ store: await memoryStore(), credentials: local.credentials, config: { workers: 2, decimals: null }, spawn });
    services.push(service);
    const [spread] = await run(service, { y, X, theta });
    const data = { y: Float64Array.from(y), X: Float64Array.from(X.flat()), rows: y.length, cols: X[0].length };
    expect(spread).toBe(encodeJson(grid(data, Float64Array.from(theta)), null));
  }, 180_000);

  it("runs an experiment's rows in one task when experimentRowsPerTask allows, each row identical to the row run alone", async () => {
    const thetas = [X[1], X[2], X[3].map((v) => v * 0.5), X[4]];
    const small = { y: y.slice(0, 120), X: X.slice(0, 120).map((r) => r.slice(0, 6)) };
    const rows = thetas.map((t) => t.slice(0, 6));
    const { service, tasks } = await openService(1, 16);
    const together = await run(service, { ...small, theta: rows });
    expect(tasks).toContain(`rows:${rows.length}`);
    for (let r = 0; r < rows.length; r++) expect(together[r]).toBe((await run(service, { ...small, theta: rows[r] }))[0]);
  }, 180_000);

  it("runs an experiment's rows several per task by default, and one per task with experimentRowsPerTask 1 (startLocalService, over HTTP)", async () => {
    const small = { y: y.slice(0, 120), X: X.slice(0, 120).map((r) => r.slice(0, 6)) };
    const rows = [X[1], X[2], X[3], X[4], X[5], X[6]].map((t) => t.slice(0, 6));
    const texts: string[][] = [];
    for (const experimentRowsPerTask of [undefined, 1]) {
      const tasks: string[] = [];
      const spawn = (): Worker => {
        const worker = defaultSpawn();
        const post = worker.postMessage.bind(worker);
        worker.postMessage = (task: WorkerTask, transfer?: never) => {
          tasks.push(task.thetas ? `rows:${task.thetas.length}` : "whole");
          return post(task, transfer);
        };
        return worker;
      };
      const local = await startLocalService({ workers: 1, decimals: null, experimentRowsPerTask, spawn });
      try {
        const headers = { "x-api-key": local.credentials.apiKey, "content-type": "application/json" };
        const body = JSON.stringify({ access_id: local.credentials.accessId, ...small, theta: rows });
        const receipt = (await (await fetch(`${local.url}/v3/grid`, { method: "POST", headers, body })).json()) as {
          jobs: Array<{ job_id: number; job_code: string }>;
        };
        const results: string[] = [];
        for (const job of receipt.jobs) {
          for (;;) {
            const res = await fetch(`${local.url}/v3/results/${job.job_id}/${job.job_code}`, { headers });
            if (res.status === 200) {
              results.push(JSON.stringify(((await res.json()) as { results: unknown }).results));
              break;
            }
            expect(res.status).toBe(202);
            await res.arrayBuffer();
            await new Promise((r) => setTimeout(r, 20));
          }
        }
        texts.push(results);
      } finally {
        await local.close();
      }
      expect(tasks).toEqual(experimentRowsPerTask === 1 ? rows.map(() => "whole") : [`rows:${rows.length}`]);
    }
    expect(texts[0]).toEqual(texts[1]);
  }, 180_000);

  it("a flood of one organisation's experiment rows delays another's job by at most one task per worker: the task's work bound", async () => {
    // Rows shared per task (the default cap of 64): with a work bound of 4 rows per task, the
    // other organisation's job waits for at most the 4 rows already on the worker. Without the
    // bound all 20 rows would go to the worker in one task, ahead of it.
    const credentials = credentialsFrom({
      orgs: [
        { name: "flood", api_key: "key-of-flood-0123456789", users: [{ access_id: "f" }] },
        { name: "single", api_key: "key-of-single-987654321", users: [{ access_id: "s" }] },
      ],
    });
    const [flood, single] = credentials.orgs;
    const small = { y: y.slice(0, 300), X: X.slice(0, 300).map((r) => r.slice(0, 8)), options: { max_iter: 255 } };
    const rowWork = 300 * 255 * 4 * 2;
    const service = await PredictionService.open({
      store: await memoryStore(),
      credentials,
      config: { workers: 1, decimals: null, experimentTaskWork: 4 * rowWork },
    });
    services.push(service);
    const parse = (body: Record<string, unknown>, accessId: string) => parseRequest("grid", { access_id: accessId, ...body }, "v3") as ParsedRequest;
    const many = await service.submit(flood, parse({ ...small, theta: X.slice(0, 20).map((r) => r.slice(0, 8)) }, "f"));
    while (many.jobs[0].status === "queued") await new Promise((r) => setTimeout(r, 5));
    const one = await service.submit(single, parse({ ...small, theta: X[25].slice(0, 8) }, "s"));
    for (const job of [...many.jobs, ...one.jobs]) await service.waitForJob(job, 120_000);
    const mine = one.jobs[0];
    expect(mine.status).toBe("completed");
    const before = many.jobs.filter((j) => j.started_at! < mine.started_at!).length;
    expect(before).toBeGreaterThan(0);
    expect(before).toBeLessThanOrEqual(4);
  }, 180_000);

  it("fails a bad row of an experiment's task alone (the worker falls back to one row at a time)", () => {
    const small = { y: Float64Array.from(y.slice(0, 60)), X: Float64Array.from(X.slice(0, 60).flatMap((r) => r.slice(0, 4))), rows: 60, cols: 4 };
    const good = Float64Array.from(X[0].slice(0, 4));
    const task = { id: 7, analysis: "grid" as const, ...small, theta: good, options: {}, decimals: null, thetas: [good, Float64Array.of(1, NaN, 2, 3), good] };
    const reply = runTask(task);
    expect(reply.type).toBe("rows");
    const rows = (reply as WorkerRows).rows;
    expect(rows.map((r) => r.type)).toEqual(["done", "failed", "done"]);
    expect((rows[1] as WorkerFailed).name).toBe("InvalidInputError");
    expect((rows[0] as WorkerDone).json).toBe(encodeJson(grid(small, good), null));
    expect((rows[2] as WorkerDone).json).toBe((rows[0] as WorkerDone).json);
  });
});
