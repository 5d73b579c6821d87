/**
 * The worker pool with real worker threads: a stand-in worker that crashes, exits, hangs or
 * fails on request (fixtures/odd-worker.mjs), and the service's own worker.
 */
import { Worker } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import { PoolJobError, PoolClosedError, PoolWithdrawnError, WorkerPool } from "../../src/service/pool.js";
import type { WorkerTask } from "../../src/service/worker.js";
import { gold } from "./helpers.js";

const fixture = new URL("./fixtures/odd-worker.mjs", import.meta.url);
const pools: WorkerPool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

function pool(settings: { size?: number; timeoutMs?: number; failStart?: boolean } = {}): WorkerPool {
  const p = new WorkerPool({
    size: settings.size ?? 1,
    timeoutMs: settings.timeoutMs ?? 10_000,
    spawn: () => new Worker(fixture, { workerData: { failStart: settings.failStart ?? false } }),
  });
  pools.push(p);
  return p;
}

let nextId = 1;
function task(analysis: string, value = 0): WorkerTask {
  const empty = new Float64Array(0);
  return {
    id: nextId++,
    analysis: analysis as WorkerTask["analysis"],
    y: empty,
    X: empty,
    rows: 0,
    cols: 0,
    theta: Float64Array.of(value),
    options: {},
    decimals: 6,
  };
}

async function failure(promise: Promise<unknown>): Promise<PoolJobError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PoolJobError);
  return error as PoolJobError;
}

describe("WorkerPool", () => {
  it("runs tasks in FIFO order on one worker", async () => {
    const p = pool({ size: 1 });
    const order: number[] = [];
    const runs = [1, 2, 3, 4].map((v) => p.run(task("echo", v), { onStart: () => order.push(v) }));
    const done = await Promise.all(runs);
    expect(done.map((d) => JSON.parse(d.json).echo)).toEqual([1, 2, 3, 4]);
    expect(order).toEqual([1, 2, 3, 4]);
  });

  it("withdraws a queued task unstarted: by its caller (withdraw) or when it is no longer wanted", async () => {
    const p = pool({ size: 1 });
    const started: number[] = [];
    let wanted = true;
    const first = p.run(task("echo", 1), { onStart: () => started.push(1) });
    const taken = task("echo", 2);
    const second = p.run(taken, { onStart: () => started.push(2) }).catch((e: unknown) => e);
    const third = p.run(task("echo", 3), { onStart: () => started.push(3), wanted: () => wanted }).catch((e: unknown) => e);
    const fourth = p.run(task("echo", 4), { onStart: () => started.push(4) });
    expect(p.withdraw(taken)).toBe(true);
    expect(p.withdraw(taken)).toBe(false);
    wanted = false;
    expect(JSON.parse((await first).json).echo).toBe(1);
    expect(await second).toBeInstanceOf(PoolWithdrawnError);
    expect(await third).toBeInstanceOf(PoolWithdrawnError);
    expect(JSON.parse((await fourth).json).echo).toBe(4);
    expect(started).toEqual([1, 4]);
  });

  it("tells onFree when a task's end leaves room for a queued job (the service claims it then)", async () => {
    const told: number[] = [];
    const p: WorkerPool = new WorkerPool({
      size: 1,
      timeoutMs: 10_000,
      spawn: () => new Worker(fixture, { workerData: {} }),
      onFree: () => told.push(p.capacity()),
    });
    pools.push(p);
    const first = p.run(task("echo", 1));
    const second = p.run(task("echo", 2));
    // The first's end hands its worker to the second: no room, nothing told.
    await first;
    expect(told).toEqual([]);
    await second;
    expect(told).toEqual([1]);
  });

  it("a crashed worker fails its job with the reason and is replaced", async () => {
    const p = pool({ size: 1 });
    const crashed = p.run(task("crash"));
    const next = p.run(task("echo", 5));
    const error = await failure(crashed);
    expect(error.failure).toMatchObject({ error_code: 2, status_code: 10 });
    expect(error.message).toContain("crashed: boom");
    expect(JSON.parse((await next).json).echo).toBe(5);
  });

  it("a worker that exits fails its job; the next job runs", async () => {
    const p = pool({ size: 1 });
    const exited = failure(p.run(task("exit")));
    const next = p.run(task("echo", 6));
    expect((await exited).message).toContain("exit code 7");
    expect(JSON.parse((await next).json).echo).toBe(6);
  });

  it("a job over its time limit is stopped and fails; the others go on", async () => {
    const p = pool({ size: 2, timeoutMs: 300 });
    const hung = failure(p.run(task("hang")));
    const others = [7, 8, 9].map((v) => p.run(task("echo", v)));
    expect((await Promise.all(others)).map((d) => JSON.parse(d.json).echo)).toEqual([7, 8, 9]);
    const error = await hung;
    expect(error.message).toBe("the job exceeded its time limit of 0.3 s");
    expect(error.failure.error_code).toBe(2);
    expect(JSON.parse((await p.run(task("echo", 10))).json).echo).toBe(10);
  });

  it("an analysis that throws fails with its message; the worker lives on", async () => {
    const p = pool({ size: 1 });
    const error = await failure(p.run(task("throw")));
    expect(error.failure).toEqual({ message: "no can do", error_code: 3, status_code: 10 });
    expect(p.stats().workers).toBe(1);
    expect(JSON.parse((await p.run(task("echo", 11))).json).echo).toBe(11);
  });

  it("workers that cannot start fail the waiting jobs instead of hanging", async () => {
    const p = pool({ size: 1, failStart: true });
    const error = await failure(p.run(task("echo")));
    expect(error.message).toContain("no worker could be started");
  });

  it("workers that cannot start for a while (EMFILE) fail no job: the queued jobs run once a worker starts again", async () => {
    let failing = false;
    let refused = 0;
    let refusedThrice!: () => void;
    const thrice = new Promise<void>((resolve) => (refusedThrice = resolve));
    const p = new WorkerPool({
      size: 2,
      timeoutMs: 10_000,
      spawn: () => {
        if (failing) {
          if (++refused === 3) refusedThrice();
          throw Object.assign(new Error("EMFILE: too many open files"), { code: "EMFILE" });
        }
        return new Worker(fixture, { workerData: { failStart: false } });
      },
    });
    pools.push(p);
    expect(JSON.parse((await p.run(task("echo", 1))).json).echo).toBe(1);
    // the first worker crashes; while it is replaced, no worker can start for a while
    failing = true;
    await failure(p.run(task("crash")));
    const queued = [2, 3, 4, 5, 6].map((v) => p.run(task("echo", v)));
    // the pool keeps trying to start a worker (an event, not a sleep): three refusals, no job failed
    await thrice;
    expect(p.stats()).toMatchObject({ queued: 5, running: 0 });
    failing = false;
    const echoed = await Promise.all(queued);
    expect(echoed.map((d) => JSON.parse(d.json).echo)).toEqual([2, 3, 4, 5, 6]);
  });

  it("close() stops the workers and rejects unfinished jobs with PoolClosedError", async () => {
    const p = pool({ size: 1 });
    let running!: () => void;
    const hangRuns = new Promise<void>((resolve) => (running = resolve));
    const hung = p.run(task("hang"), { onStart: () => running() }).catch((e: unknown) => e);
    const queued = p.run(task("echo")).catch((e: unknown) => e);
    await hangRuns; // an event: the worker took the hanging job
    expect(p.stats()).toMatchObject({ running: 1, queued: 1 });
    await p.close();
    expect(await hung).toBeInstanceOf(PoolClosedError);
    expect(await queued).toBeInstanceOf(PoolClosedError);
    await expect(p.run(task("echo"))).rejects.toBeInstanceOf(PoolClosedError);
  });

  it("the service's own worker runs the engine (also from the TypeScript sources under vitest)", async () => {
    const p = new WorkerPool({ size: 1, timeoutMs: 20_000 });
    pools.push(p);
    const X = Float64Array.from(gold.inputs.X.flat());
    const done = await p.run({
      id: nextId++,
      analysis: "grid",
      y: Float64Array.from(gold.inputs.y),
      X,
      rows: 7,
      cols: 5,
      theta: Float64Array.from(gold.inputs.theta),
      options: {},
      decimals: 6,
    });
    expect(done.yhat).toEqual([3.28524]);
    expect(JSON.parse(done.json).insights["Impact on Fit"]).toHaveLength(5);
  });
});
