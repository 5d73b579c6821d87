/**
 * The embedded service's inline run (service/inline.ts): a small Grid asked for by the lane's
 * endpoint runs its lead part on the calling thread, helped by a pool worker; a large one, and any
 * job submitted without `inline` (HTTP), runs on the workers. Either way the job is the same: the
 * same stored text bit for bit (and the engine's grid), the same failure, the same quota spent.
 */
import { afterEach, describe, expect, it } from "vitest";
import { parseRequest, type ParsedRequest } from "../../src/api/request.js";
import { grid } from "../../src/engine/index.js";
import { SHARE } from "../../src/threads/chunk-share.js";
import { PredictionService } from "../../src/service/core.js";
import { localCredentials } from "../../src/service/credentials.js";
import { encodeJson } from "../../src/service/encode.js";
import { inlineRuns, INLINE_GRID_MAX_WORK, runsInline } from "../../src/service/inline.js";
import { estimateWork } from "../../src/service/limits.js";
import { synthetic } from "./helpers.js";
import { recordedService, type RecordedService } from "./recorded-workers.js";

const local = localCredentials({ apiKey: "inline-test-key", accessId: "inline-test-user", quota: 1000 });
const org = local.credentials.orgs[0];
const services: PredictionService[] = [];
afterEach(async () => {
  await Promise.all(services.splice(0).map((s) => s.close()));
});

/** A service on two workers, both ready, whose tasks are recorded (recorded-workers.ts). */
async function openService(decimals: number | null = null): Promise<RecordedService> {
  const recorded = await recordedService(local.credentials, { workers: 2, decimals });
  services.push(recorded.service);
  await recorded.service.warm(1);
  await recorded.ready(2);
  // The warm-up's helper may still be on its worker: a Grid that starts now would run whole.
  await recorded.idle();
  recorded.tasks.length = 0;
  recorded.counters.length = 0;
  return recorded;
}

const request = (analysis: "psr" | "grid", body: Record<string, unknown>) =>
  parseRequest(analysis, { access_id: "inline-test-user", ...body }, "v3") as ParsedRequest;

/** Submits, waits for every job; each job's stored text or failure message. */
async function run(service: PredictionService, req: ParsedRequest, inline: boolean): Promise<Array<{ text?: string; failure?: string }>> {
  const { jobs } = await service.submit(org, req, { decoded: true, inline });
  for (const job of jobs) await service.waitForJob(job, 120_000);
  return Promise.all(
    jobs.map(async (job) => (job.status === "completed" ? { text: await service.resultJson(job) } : { failure: `${job.status}: ${job.failure?.message}` })),
  );
}

describe("the inline run of a small Grid", () => {
  const { y, X } = synthetic(700, 10, 3);
  const theta = X[5].map((v) => v + 0.1);

  it("runs a small Grid of the lane's endpoint inline, and nothing else", () => {
    const small = request("grid", { y, X, theta });
    expect(estimateWork(small).work).toBeLessThanOrEqual(INLINE_GRID_MAX_WORK);
    expect(runsInline(small)).toBe(true);
    const large = request("grid", { y: [...y, ...y, ...y], X: [...X, ...X, ...X], theta });
    expect(estimateWork(large).work).toBeGreaterThan(INLINE_GRID_MAX_WORK);
    expect(runsInline(large)).toBe(false);
    expect(runsInline(request("grid", { y, X, theta: [theta, X[6]] }))).toBe(false);
    expect(runsInline(request("psr", { y, X, theta, options: { threshold: [0.5] } }))).toBe(false);
  });

  // Full precision, and the six decimals of the embedded service (whose text is written from the decoded form when first read).
  it.each([null, 6])(
    "gives the worker path's stored text bit for bit (and the engine's grid), with a pool worker helping (decimals %s)",
    async (decimals) => {
      const { service, tasks, counters, idle } = await openService(decimals);
      const req = request("grid", { y, X, theta });
      const [onWorkers] = await run(service, req, false);
      expect([...tasks].sort()).toEqual(["draw", "lead"]);
      let inline = { text: "" } as { text?: string };
      for (let attempt = 0; attempt < 10; attempt++) {
        // The last Grid's helper off its worker first, so that one is free to help this one.
        await idle();
        tasks.length = 0;
        counters.length = 0;
        const before = inlineRuns.count;
        [inline] = await run(service, req, true);
        expect(inlineRuns.count).toBe(before + 1);
        // Only the helper went to a worker: the lead ran here.
        expect(tasks).toEqual(["draw"]);
        expect(inline.text).toBe(onWorkers.text);
        if (Atomics.load(counters[0], SHARE.delivered) > 0) break;
      }
      expect(Atomics.load(counters[0], SHARE.delivered)).toBeGreaterThan(0);
      const data = { y: Float64Array.from(y), X: Float64Array.from(X.flat()), rows: y.length, cols: X[0].length };
      expect(inline.text).toBe(encodeJson(grid(data, Float64Array.from(theta)), decimals));
    },
    180_000,
  );

  it("fails a Grid the engine refuses with the worker path's failure, and spends the same quota", async () => {
    const { service } = await openService();
    // Every row alike: every cell's covariance is singular, so the Grid fails when it runs.
    const same = { y: Array.from({ length: 30 }, (_, i) => i % 3), X: Array.from({ length: 30 }, () => [1, 2, 3]), theta: [1, 2, 2] };
    const req = request("grid", same);
    expect(runsInline(req)).toBe(true);
    const quota = async () => (await service.quotaStatus(org)).used;
    const used0 = await quota();
    const before = inlineRuns.count;
    const [onWorkers] = await run(service, req, false);
    const used1 = await quota();
    const [inline] = await run(service, req, true);
    expect(inlineRuns.count).toBe(before + 1);
    expect(onWorkers.failure).toMatch(/^failed: /);
    expect(inline).toEqual(onWorkers);
    expect(used1 - used0).toBe(1);
    expect((await quota()) - used1).toBe(1);
  }, 60_000);

  it("runs Grids submitted while a task that is no job holds every worker at once, with no helper (the warm-up, workers slow to start)", async () => {
    // Under Deno's kernel the workers take ~1.4 s to start: the warm-up's Grid waits for them,
    // holding both, while a cell runs inline Grids in a row. An inline Grid needs no worker: it is
    // claimed by id when submitted (store claimJob), not when the pump finds a worker free.
    const { service, tasks, letReady } = await recordedService(local.credentials, { workers: 2, decimals: null }, { holdReady: true });
    services.push(service);
    const warming = service.warm(1);
    const req = request("grid", { y, X, theta });
    const before = inlineRuns.count;
    const [first] = (await service.submit(org, req, { decoded: true, inline: true })).jobs;
    await service.waitForJob(first, 120_000);
    expect(first.status).toBe("completed");
    const [second] = (await service.submit(org, req, { decoded: true, inline: true })).jobs;
    // No worker has started yet (the warm-up's lead and helper still wait for theirs), and the job
    // completes: before the fix it stayed queued until letReady below (this wait is only a bound).
    await service.waitForJob(second, 30_000);
    expect(second.status).toBe("completed");
    expect(tasks).toEqual([]);
    expect(inlineRuns.count).toBe(before + 2);
    expect(await service.resultJson(second)).toBe(await service.resultJson(first));
    letReady();
    await warming;
  }, 60_000);

  it("runs an inline Grid at once while a job holds every worker, and the jobs that need workers keep their order", async () => {
    const { service, tasks, letReady } = await recordedService(local.credentials, { workers: 1, decimals: null }, { holdReady: true });
    services.push(service);
    const onWorker = (await service.submit(org, request("grid", { y, X, theta }), { decoded: true })).jobs[0];
    const [inline] = (await service.submit(org, request("grid", { y, X, theta }), { decoded: true, inline: true })).jobs;
    await service.waitForJob(inline, 30_000);
    expect(inline.status).toBe("completed");
    expect(onWorker.status).toBe("running");
    letReady();
    await service.waitForJob(onWorker, 120_000);
    expect(onWorker.status).toBe("completed");
    expect(tasks.length).toBe(1);
    expect(await service.resultJson(onWorker)).toBe(await service.resultJson(inline));
  }, 60_000);

  it("runs a large Grid of the lane's endpoint on the workers", async () => {
    const { service, tasks } = await openService();
    const before = inlineRuns.count;
    const large = request("grid", { y: [...y, ...y, ...y], X: [...X, ...X, ...X], theta });
    const [done] = await run(service, large, runsInline(large));
    expect(done.text).toBeDefined();
    expect(inlineRuns.count).toBe(before);
    expect([...tasks].sort()).toEqual(["draw", "lead"]);
  }, 60_000);
});
