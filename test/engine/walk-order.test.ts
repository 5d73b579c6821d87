import { describe, expect, it } from "vitest";
import { planCombinations as plan_, type CombinationOptions } from "../../src/engine/combinations.js";
import { gridExperiment } from "../../src/engine/experiment.js";
import { GRID_CHUNK, prepareGrid } from "../../src/engine/grid.js";
import { grid, gridParallel } from "../../src/engine/index.js";
import { cutChunks, fixedChunks, walkOrder } from "../../src/engine/walk-order.js";
import { trieOrder } from "../../src/engine/walk.js";
import { correlatedData } from "./correlated.js";

/** The plan of K columns for max_iter and seed (no other constraint). */
const planCombinations = (K: number, given: { max_iter: number; seed: number }) =>
  plan_(K, {
    min_k: undefined,
    max_k: undefined,
    allowed_k: undefined,
    required_attributes: undefined,
    attribute_groups: undefined,
    ...given,
  } as CombinationOptions);

/** The levels a walk makes of these paths in these chunks: each path's columns past those it shares with the one before it in its chunk. */
function levels(paths: readonly (readonly number[])[], chunks: readonly [number, number][] = [[0, paths.length]]): number {
  let count = 0;
  for (const [from, to] of chunks) {
    for (let q = from; q < to; q++) {
      let common = 0;
      if (q > from) while (common < paths[q].length && paths[q][common] === paths[q - 1][common]) common++;
      count += paths[q].length - common;
    }
  }
  return count;
}

/** The levels of each chunk's own trie (walk.ts `trieOrder`, a greedy one where it has fewer). */
function trieLevels(combinations: number[][]): number {
  let count = 0;
  for (let from = 0; from < combinations.length; from += GRID_CHUNK) {
    const indices = Array.from({ length: Math.min(GRID_CHUNK, combinations.length - from) }, (_, q) => from + q);
    count += levels(trieOrder(combinations, indices).paths);
  }
  return count;
}

describe("walkOrder", () => {
  it("lists every combination of a sampled plan once, along its own columns, on fewer levels than the chunks' own tries", () => {
    for (const [K, maxIter, seed] of [
      [14, 1000, 42],
      [12, 300, 7],
      [16, 500, 3],
    ]) {
      const plan = planCombinations(K, { max_iter: maxIter, seed });
      const order = walkOrder(plan.combinations, GRID_CHUNK)!;
      expect(order).not.toBeNull();
      expect([...order.planIndex].sort((a, b) => a - b)).toEqual(plan.combinations.map((_, q) => q));
      order.combinations.forEach((path, q) => expect([...path].sort((a, b) => a - b)).toEqual(plan.combinations[order.planIndex[q]]));
      // Depth-first, children by the column they add: ascending paths, as trieOrder takes them.
      for (let q = 1; q < order.combinations.length; q++) {
        const [a, b] = [order.combinations[q - 1], order.combinations[q]];
        let d = 0;
        while (d < a.length && d < b.length && a[d] === b[d]) d++;
        expect(d === a.length || (d < b.length && a[d] < b[d])).toBe(true);
      }
      // Chunks of 48 to 64, in order, covering every combination.
      expect(order.chunks.flat()).toEqual([0, ...order.chunks.slice(1).flatMap(([from]) => [from, from]), plan.combinations.length]);
      for (const [from, to] of order.chunks.slice(0, -1)) expect(to - from).toBeGreaterThanOrEqual(48);
      for (const [from, to] of order.chunks) expect(to - from).toBeLessThanOrEqual(GRID_CHUNK);
      expect(levels(order.combinations, order.chunks)).toBeLessThan(trieLevels(plan.combinations));
    }
    // The bench's K = 14 plan: 1,548 levels (in 18 chunks) against 2,061 for the chunks' tries.
    const bench = planCombinations(14, { max_iter: 1000, seed: 42 });
    const benchOrder = walkOrder(bench.combinations, GRID_CHUNK)!;
    expect(levels(benchOrder.combinations, benchOrder.chunks)).toBe(1548);
    expect(trieLevels(bench.combinations)).toBe(2061);
  });

  it("is its example, and null where the plan's order is kept", () => {
    expect(
      walkOrder(
        [
          [0, 1, 2],
          [0, 3, 4],
          [1, 2, 5],
          [3, 4, 5],
        ],
        64,
      ),
    ).toEqual({
      combinations: [
        [1, 2, 0],
        [1, 2, 5],
        [3, 4, 0],
        [3, 4, 5],
      ],
      planIndex: Int32Array.of(0, 2, 1, 3),
      chunks: [[0, 4]],
    });
    expect(fixedChunks(150, 64)).toEqual([
      [0, 64],
      [64, 128],
      [128, 150],
    ]);
    expect(cutChunks([[0], [0, 1], [0, 2], [3], [3, 4]], 4)).toEqual([
      [0, 3],
      [3, 5],
    ]);
    // A full plan in ascending order leaves next to no level unvisited.
    expect(walkOrder(planCombinations(10, { max_iter: 2000, seed: 0 }).combinations, GRID_CHUNK)).toBeNull();
    // 150 of K = 18's 262,143 combinations share too little: each chunk's own trie makes fewer levels.
    expect(walkOrder(planCombinations(18, { max_iter: 150, seed: 1 }).combinations, GRID_CHUNK)).toBeNull();
    // Columns past the lattice's tables, a repeated or an empty combination.
    expect(
      walkOrder(
        [
          [0, 21],
          [1, 22],
          [2, 23],
          [3, 24],
        ],
        64,
      ),
    ).toBeNull();
    expect(
      walkOrder(
        [
          [0, 2, 4],
          [0, 2, 4],
          [1, 3, 5],
          [6, 7, 8],
        ],
        64,
      ),
    ).toBeNull();
    expect(walkOrder([[], [1, 3, 5], [2, 4, 6], [6, 7, 8]], 64)).toBeNull();
  });
});

describe("a Grid walked in walkOrder", () => {
  const { data, theta } = correlatedData(160, 12, 3);
  const options = { max_iter: 150, seed: 5, threshold: [0, 0.3, 0.6] };

  it("is walked so: the plan's combinations in another order", () => {
    const prepared = prepareGrid(data, theta, options);
    expect(prepared.task.walkOrder).not.toBeNull();
    expect(prepared.task.combinations).not.toEqual(prepared.plan.combinations);
  });

  it("retains each combination's cells in the plan's order, as the combination's Grid alone gives them", () => {
    const retain = ["yhat_cells", "adjusted_fit_cells", "n_cells", "weights_cells", "ysolo_cells", "combi_cells", "k_cells"] as (
      "yhat_cells" | "adjusted_fit_cells" | "n_cells" | "weights_cells" | "ysolo_cells" | "combi_cells" | "k_cells"
    )[];
    const whole = grid(data, theta, { ...options, retain });
    const cells = whole.grid_cells!;
    const plan = planCombinations(12, { max_iter: 150, seed: 5 }).combinations;
    expect(cells.combi_cells).toEqual(plan.map((c) => Array.from({ length: 12 }, (_, j) => (c.includes(j) ? 1 : 0))));
    expect(cells.k_cells).toEqual(plan.map((c) => c.length));
    const close = (a: number, b: number) => expect(Math.abs(a - b)).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(a), Math.abs(b)));
    plan.forEach((_, q) => {
      const alone = grid(data, theta, { threshold: options.threshold, attribute_combi: [cells.combi_cells![q]], retain });
      for (const censor of ["relevance", "similarity"] as const) {
        const [mine, its] = [cells[censor]!, alone.grid_cells![censor]!];
        expect(mine.n_cells![q]).toEqual(its.n_cells![0]);
        mine.yhat_cells![q].forEach((v, t) => close(v, its.yhat_cells![0][t]));
        mine.adjusted_fit_cells![q].forEach((v, t) => close(v, its.adjusted_fit_cells![0][t]));
        for (let i = 0; i < data.rows; i += 17) mine.weights_cells![i].forEach((row, t) => close(row[q], its.weights_cells![i][t][0]));
      }
      for (let i = 0; i < data.rows; i += 17) close(cells.ysolo_cells![i][q], alone.grid_cells!.ysolo_cells![i][0]);
    });
  });

  it("gives the same bits on every thread and in an experiment", async () => {
    expect(await gridParallel(data, theta, options, { threads: 2 })).toEqual(grid(data, theta, options));
    const thetas = [theta, theta.map((v) => v / 2), theta.map((v) => -v)];
    gridExperiment(data, thetas, options).forEach((row, r) => expect(row).toEqual(grid(data, thetas[r], options)));
  }, 60_000);
});
