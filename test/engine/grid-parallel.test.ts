import { describe, expect, it } from "vitest";
import { grid, gridParallel } from "../../src/engine/index.js";
import { correlatedData } from "./correlated.js";
import type { Worker } from "node:worker_threads";
import { helperPool, lastRun } from "../../src/threads/grid-parallel.js";

const dataset = correlatedData;

describe("gridParallel", () => {
  it("does not wait for a worker still starting: a small Grid is done on the calling thread, then the warm worker takes its share", async () => {
    // First call of this file: the worker starts through tsx, far slower than 2 small chunks.
    const small = dataset(80, 7, 5);
    expect(await gridParallel(small.data, small.theta, {}, { threads: 2 })).toEqual(grid(small.data, small.theta));
    expect(lastRun).toEqual({ chunks: 2, byHelpers: 0, recomputed: 0 });
    // Once the worker has started, it draws chunks of a Grid long enough to need it.
    const large = dataset(2000, 9, 6);
    const options = { max_iter: 511 };
    for (let attempt = 0; attempt < 20 && lastRun.byHelpers === 0; attempt++) {
      expect(await gridParallel(large.data, large.theta, options, { threads: 2 })).toEqual(grid(large.data, large.theta, options));
    }
    expect(lastRun.byHelpers).toBeGreaterThan(0);
  }, 120_000);

  it("computes a chunk itself when its helper does not deliver it (the result is the same)", async () => {
    // A helper that takes the first two chunks and never answers (claimed at once, before the
    // calling thread draws): both are computed again here, after waiting about one chunk.
    const { data, theta } = dataset(400, 8, 7);
    const options = { max_iter: 255 };
    const silent = {
      postMessage(request: { counter: SharedArrayBuffer }) {
        const counter = new Int32Array(request.counter);
        Atomics.add(counter, 0, 1);
        Atomics.add(counter, 0, 1);
      },
    } as unknown as Worker;
    const saved = helperPool.splice(0, helperPool.length, silent);
    try {
      expect(await gridParallel(data, theta, options, { threads: 2 })).toEqual(grid(data, theta, options));
      expect(lastRun).toEqual({ chunks: 4, byHelpers: 0, recomputed: 2 });
    } finally {
      helperPool.splice(0, helperPool.length, ...saved);
    }
  });

  it("gives exactly the single-threaded Grid, complete data and every combination (a worker drawing some of the chunks)", async () => {
    const { data, theta } = dataset(300, 8, 1);
    const options = { max_iter: 255, retain: ["yhat_cells", "n_cells", "weights_cells", "ysolo_cells"] as const };
    const single = grid(data, theta, { ...options, retain: [...options.retain] });
    expect(single.grid_search?.combinations).toBe(255);
    for (let attempt = 0; attempt < 50 && !(lastRun.byHelpers > 0 && lastRun.chunks === 4); attempt++) {
      expect(await gridParallel(data, theta, { ...options, retain: [...options.retain] }, { threads: 2 })).toEqual(single);
    }
    expect(lastRun.byHelpers).toBeGreaterThan(0);
  }, 60_000);

  it("gives exactly the single-threaded Grid with missing values and sampled combinations", async () => {
    const { data, theta } = dataset(200, 9, 2, 40);
    const options = { max_iter: 150, seed: 7 };
    expect(await gridParallel(data, theta, options, { threads: 3 })).toEqual(grid(data, theta, options));
  });

  it("runs on the calling thread alone when inner_parallel is off", async () => {
    const { data, theta } = dataset(100, 5, 3);
    expect(await gridParallel(data, theta, { inner_parallel: "off" })).toEqual(grid(data, theta));
  });

  it("rejects invalid input before any thread starts", async () => {
    const { data, theta } = dataset(100, 5, 4);
    await expect(gridParallel(data, theta.subarray(0, 3))).rejects.toThrow(/theta/);
  });
});
