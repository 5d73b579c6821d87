/**
 * Faults, over loopback HTTP:
 *
 * 1. In one service at once: a job whose computation throws (a singular covariance under
 *    `gaussian`), a Grid past the time limit, a worker thread that exits and one that crashes
 *    (and an experiment one of whose rows kills its worker), among ordinary jobs. Each fault ends
 *    as a failed job, 409 with its reason and LambdaError code, while every ordinary job completes
 *    with the published numbers and the pool replaces the workers it lost.
 *
 *    The dying worker: the service runs its jobs on `startLocalService({spawn})`'s workers, here
 *    fixtures/mortal-worker.ts, which is the service's own worker (runTask) except that a job whose
 *    theta starts with 4242 or 4343 kills the thread. The request itself is an ordinary, valid POST;
 *    only the worker under it dies. (execution.test.ts proves the time limit and the responsive
 *    HTTP loop alone; pool.test.ts proves the pool's reactions without HTTP.)
 *
 * 2. `rbp serve --data-dir` as a process, killed with SIGKILL while a job runs and another waits,
 *    then started again on the same directory: the same generated credentials; old results,
 *    fields, experiments and failed jobs served exactly as before; the quota as it was; the
 *    interrupted jobs run to an end. (persistence.test.ts covers a clean close in-process.)
 */
import type { ChildProcess } from "node:child_process";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ErrorBodySchema } from "../../src/api/schemas.js";
import { startWorker } from "../../src/threads/worker-script.js";
import type { LocalService } from "../../src/service/index.js";
import { spawnServe } from "../../scripts/rbp-serve.js";
import { Client, close, gold, goldCase, quickstart, start, synthetic, tempDir, type Reply } from "./helpers.js";

const EXIT_ON = 4242;
const CRASH_ON = 4343;
const LIMIT_MS = 1000;

const resultPath = (r: { job_id: number; job_code: string }) => `/v3/results/${r.job_id}/${r.job_code}`;
const experimentPath = (r: { experiment_id: number; experiment_code: string }) => `/v3/experiments/${r.experiment_id}/${r.experiment_code}`;

/**
 * A Grid of 16383 combinations x 10 thresholds on 10,000 rows (3.3e9 cell-observations, over the
 * default maxWork, raised for it below): several seconds even when the service spreads it over
 * both workers, well past the limit however fast the engine gets here.
 */
const slowGrid = (() => {
  const { y, X } = synthetic(10_000, 14, 7);
  return { y, X, theta: X[0], options: { max_iter: 16383, threshold: [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9] } };
})();
/** A duplicate column: the covariance is singular and `gaussian` cannot invert it. */
const singular = { y: gold.inputs.y, X: gold.inputs.X.map((row) => [...row, row[0]]), theta: [...gold.inputs.theta, 24] };
const killer = (first: number) => [first, ...gold.inputs.theta.slice(1)];

function expectFailed(reply: Reply, errorCode: number, reason: string | RegExp) {
  expect(reply.status, JSON.stringify(reply.body)).toBe(409);
  expect(ErrorBodySchema.safeParse(reply.body).success).toBe(true);
  expect(reply.body).toMatchObject({ status: "failed", error: "job_failed", status_code: 10, error_code: errorCode });
  expect(reply.body.reason).toMatch(reason);
  expect(reply.body.message).toContain(reply.body.reason);
}

describe("faults in one service: each ends as a failed job with its reason, the others complete", () => {
  let service: LocalService;
  let client: Client;
  beforeAll(async () => {
    ({ service, client } = await start({
      workers: 2,
      jobTimeoutMs: LIMIT_MS,
      limits: { maxWork: 1e10 },
      spawn: () => startWorker("fixtures/mortal-worker", import.meta.url, { workerData: { exitOn: EXIT_ON, crashOn: CRASH_ON } }),
    }));
  });
  afterAll(() => service?.close());

  it("a job that throws, a job past its time limit and workers that die, among ordinary jobs", async () => {
    const ordinary = [
      { analysis: "psr", body: quickstart({ options: goldCase("psr thresholds sweep").options }), yhat: goldCase("psr thresholds sweep").expect.yhat },
      { analysis: "maxfit", body: quickstart({ options: goldCase("maxfit default").options }), yhat: goldCase("maxfit default").expect.yhat },
      { analysis: "grid", body: quickstart(), yhat: goldCase("grid default").expect.yhat },
    ];
    const post = (analysis: string, body: Record<string, unknown>) => client.post(`/v3/${analysis}`, body);
    // Faults first so that ordinary jobs queue behind and around them; all POSTed at once.
    const [timeLimit, throws, exits, crashes, experiment, ...others] = await Promise.all([
      post("grid", slowGrid),
      post("psr", singular),
      post("psr", quickstart({ theta: killer(EXIT_ON) })),
      post("maxfit", quickstart({ theta: killer(CRASH_ON) })),
      post("psr", quickstart({ theta: [gold.inputs.theta, killer(EXIT_ON), gold.inputs.X[0]] })),
      ...Array.from({ length: 4 }, () => ordinary)
        .flat()
        .map((o) => post(o.analysis, o.body)),
    ]);
    for (const r of [timeLimit, throws, exits, crashes, experiment, ...others]) expect(r.status, JSON.stringify(r.body)).toBe(200);

    const done = await Promise.all(others.map((r) => client.poll(resultPath(r.body), 30_000)));
    done.forEach((r, i) => {
      expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(200);
      close(r.body.results.yhat, ordinary[i % 3].yhat);
    });

    expectFailed(await client.poll(resultPath(throws.body), 30_000), 3, /pseudoinverse/);
    expectFailed(await client.poll(resultPath(exits.body), 30_000), 2, /exited unexpectedly \(exit code 70\)/);
    // A crash's own text is internal: clients get a stable reason, the log the detail (reasons.ts).
    expectFailed(await client.poll(resultPath(crashes.body), 30_000), 2, /the worker running the job stopped unexpectedly/);
    expectFailed(await client.poll(resultPath(timeLimit.body), 30_000), 2, new RegExp(`exceeded its time limit of ${LIMIT_MS / 1000} s`));
    // a failed job's fields answer 409 as well
    expect((await client.get(`/v3/jobs/${exits.body.job_id}/${exits.body.job_code}/yhat`)).status).toBe(409);

    // the experiment: the row whose worker died failed, the others completed
    const parent = await client.poll(experimentPath(experiment.body), 30_000);
    expect(parent.status).toBe(200);
    expect(parent.body).toMatchObject({ status: "partial_failed", n_rows: 3, n_completed: 2, n_failed: 1 });
    expect(parent.body.rows[1]).toMatchObject({ status: "failed", error_code: 2, yhat: null });
    expect(parent.body.rows[1].message).toContain("exit code 70");
    for (const i of [0, 2]) {
      const child = await client.get(resultPath(experiment.body.jobs[i]));
      expect(child.status).toBe(200);
      expect(parent.body.rows[i]).toMatchObject({ status: "completed", yhat: child.body.results.yhat });
    }
    expectFailed(await client.get(resultPath(experiment.body.jobs[1])), 2, /exit code 70/);

    // failures are final and were paid for like any job; the pool replaced its workers
    expectFailed(await client.get(resultPath(crashes.body)), 2, /stopped unexpectedly/);
    expect((await client.get("/v3/quota")).body.used).toBe(4 + 3 + others.length);
    const after = await Promise.all(ordinary.map((o) => client.run(o.analysis, o.body)));
    after.forEach((r, i) => close(r.body.results.yhat, ordinary[i].yhat));
  }, 60_000);
});

// ---------------------------------------------------------------------------------------------

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

/** Starts `rbp serve` (killed after each test) with a client for its printed credentials. */
async function serve(args: string[]): Promise<{ child: ChildProcess; client: Client; stdout: string }> {
  const { child, url, apiKey, accessId, stdout } = await spawnServe(["--port", "0", "--quiet", ...args]);
  children.push(child);
  return { child, client: new Client(url, apiKey!, accessId!), stdout };
}

describe("rbp serve --data-dir after a crash", () => {
  const dir = tempDir();
  afterAll(() => dir.remove());

  it("SIGKILL while a job runs and another waits; started again, it serves the old results and finishes the rest", async () => {
    const args = ["--data-dir", dir.path, "--workers", "1", "--timeout", "2", "--max-work", "10000000000"];
    const first = await serve(args);
    const c1 = first.client;
    const grid = (await c1.post("/v3/grid", quickstart())).body;
    const experiment = (await c1.post("/v3/psr", quickstart({ theta: [gold.inputs.theta, gold.inputs.X[0]] }))).body;
    const failing = (await c1.post("/v3/psr", singular)).body;
    const before = {
      grid: await c1.poll(resultPath(grid)),
      field: undefined as Reply | undefined,
      experiment: await c1.poll(experimentPath(experiment)),
      rows: [] as Reply[],
      failing: await c1.poll(resultPath(failing)),
    };
    expect(before.grid.status).toBe(200);
    close(before.grid.body.results.yhat, goldCase("grid default").expect.yhat);
    expect(before.experiment.body.status).toBe("completed");
    expect(before.failing.status).toBe(409);
    before.field = await c1.get(`/v3/jobs/${grid.job_id}/${grid.job_code}/insights/Impact%20on%20Fit`);
    expect(before.field.status).toBe(200);
    before.rows = await Promise.all(experiment.jobs.map((j: { job_id: number; job_code: string }) => c1.get(resultPath(j))));

    // one job running, one waiting behind it on the single worker; then the process dies
    const running = (await c1.post("/v3/grid", slowGrid)).body;
    const waiting = (await c1.post("/v3/maxfit", quickstart({ options: goldCase("maxfit default").options }))).body;
    for (let i = 0; ; i++) {
      const r = await c1.get(resultPath(running));
      if (r.body.status === "running") break;
      expect(i, "the slow Grid never started").toBeLessThan(500);
      await new Promise((res) => setTimeout(res, 10));
    }
    expect((await c1.get(resultPath(waiting))).body.status).toBe("queued");
    const quota = (await c1.get("/v3/quota")).body;
    expect(quota.used).toBe(1 + 2 + 1 + 1 + 1);
    const killed = new Promise((res) => first.child.on("exit", res));
    first.child.kill("SIGKILL");
    await killed;

    const second = await serve(args);
    expect(second.stdout).toContain(`kept in ${dir.path}`);
    const c2 = second.client;
    expect(c2.apiKey).toBe(c1.apiKey);
    expect(c2.accessId).toBe(c1.accessId);

    // old results exactly as served before the crash
    expect(await c2.get(resultPath(grid))).toMatchObject({ status: 200, body: before.grid.body });
    expect(await c2.get(`/v3/jobs/${grid.job_id}/${grid.job_code}/insights/Impact%20on%20Fit`)).toMatchObject({ status: 200, body: before.field.body });
    expect(await c2.get(experimentPath(experiment))).toMatchObject({ status: 200, body: before.experiment.body });
    for (const [i, j] of experiment.jobs.entries()) expect((await c2.get(resultPath(j))).body).toEqual(before.rows[i].body);
    expect(await c2.get(resultPath(failing))).toMatchObject({ status: 409, body: before.failing.body });
    expect((await c2.get("/v3/quota")).body).toEqual(quota);
    expect((await c2.get(`/v3/results/${grid.job_id}/${"0".repeat(16)}`)).status).toBe(404);

    // the interrupted jobs were paid for once and run to an end after the restart
    const ranAgain = await c2.poll(resultPath(running), 30_000);
    if (ranAgain.status === 409) expectFailed(ranAgain, 2, /exceeded its time limit of 2 s/);
    else expect(ranAgain.status).toBe(200);
    const finished = await c2.poll(resultPath(waiting), 30_000);
    expect(finished.status).toBe(200);
    close(finished.body.results.yhat, goldCase("maxfit default").expect.yhat);
    expect((await c2.get("/v3/quota")).body).toEqual(quota);
    const next = (await c2.post("/v3/psr", quickstart())).body;
    expect(next.job_id).toBeGreaterThan(waiting.job_id);
    expect((await c2.poll(resultPath(next))).status).toBe(200);
  }, 60_000);
});
