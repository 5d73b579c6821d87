import { createRandom } from "../../src/engine/random.js";
import { describe, expect, it } from "vitest";
import { grid, gridParallel, type Dataset } from "../../src/engine/index.js";

/** Correlated attributes, y linear in them plus noise; NaN holes when asked. */
function dataset(N: number, K: number, seed: number, holes = 0): { data: Dataset; theta: Float64Array } {
  const uniform = createRandom(seed);
  const next = () => uniform() - 0.5;
  const X = new Float64Array(N * K);
  const y = new Float64Array(N);
  for (let i = 0; i < N; i++) {
    for (let j = 0; j < K; j++) X[i * K + j] = next() + (j > 0 ? 0.4 * X[i * K + j - 1] : 0);
    y[i] = X[i * K] - 2 * X[i * K + K - 1] + next();
  }
  for (let h = 0; h < holes; h++) X[(h * 7919) % (N * K)] = NaN;
  return { data: { y, X, rows: N, cols: K }, theta: Float64Array.from({ length: K }, next) };
}

describe("gridParallel", () => {
  it("gives exactly the single-threaded Grid, complete data and every combination", async () => {
    const { data, theta } = dataset(300, 8, 1);
    const options = { max_iter: 255, retain: ["yhat_cells", "n_cells", "weights_cells", "ysolo_cells"] as const };
    const single = grid(data, theta, { ...options, retain: [...options.retain] });
    const parallel = await gridParallel(data, theta, { ...options, retain: [...options.retain] }, { threads: 2 });
    expect(single.grid_search?.combinations).toBe(255);
    expect(parallel).toEqual(single);
  });

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
