/**
 * An experiment's Grids: many theta rows against one X and y (spec: one job per row). What does
 * not depend on theta is computed once for all rows: X's moments and standard units, and per
 * combination the Cholesky factor, the whitened attributes and each observation's
 * informativeness (walk.ts `walkCombinationsMany`), the plan of combinations, and the
 * all-attribute model's moments, inverse and informativeness (model.ts `modelBasis`). Per row remain the scores' last step, the
 * censors and the fits. Every row's result is bit-identical to `grid` on that row alone: the
 * shared quantities are the very numbers `grid` computes, and each row's cells are accumulated in
 * the same chunks and merged in the same order.
 */
import type { Dataset } from "./data.js";
import { outcomeStats } from "./calibrate.js";
import { GridWorkspace, rangeEvaluator } from "./grid-cells.js";
import { finishMerged, fullBasis, GridMerge, hasMissing, prepareGrid, type PreparedGrid } from "./grid.js";
import type { Given, GridOptions } from "./options.js";
import type { EngineResult } from "./result.js";
import { standardize, trieOrder, WalkLevels, walkCombinationsMany } from "./walk.js";

/** Rows walked together are limited so that their per-row score levels stay within this many bytes (a few MiB: the levels stay in cache while every row calibrates; 64 MiB was slower). */
export const EXPERIMENT_BATCH_BYTES = 4 * 1024 * 1024;

/**
 * The Grid of every theta row, in order; each equals `grid(data, thetas[r], given)`.
 *
 * @example
 * const [first, second] = gridExperiment(data, [Float64Array.of(1, 2), Float64Array.of(0, 3)], { threshold: [0, 0.5] });
 */
export function gridExperiment(
  data: Dataset,
  thetas: readonly Float64Array[],
  given: Given<GridOptions> = {},
  /** Rows walked together; default `experimentBatch(data)`. */
  batchRows?: number,
): EngineResult[] {
  if (thetas.length === 0) return [];
  const x = hasMissing(data) ? null : standardize(data, thetas[0]);
  const first = prepareGrid(data, thetas[0], given, x);
  const prepared = [first, ...thetas.slice(1).map((theta) => prepareGrid(data, theta, given, x, first.plan))];
  const basis = fullBasis(data, first.task.options);
  const results: EngineResult[] = [];
  const batch = Math.max(1, Math.floor(batchRows ?? experimentBatch(data)));
  for (let start = 0; start < prepared.length; start += batch) {
    const rows = prepared.slice(start, start + batch);
    for (const merge of evaluateRows(rows)) results.push(finishMerged(rows[results.length - start], merge, basis));
  }
  return results;
}

/** How many rows are walked together for this data (at least 1). */
export function experimentBatch(data: Dataset): number {
  const perRow = 2 * (data.cols + 1) * data.rows * 8;
  return Math.max(1, Math.floor(EXPERIMENT_BATCH_BYTES / perRow));
}

/**
 * Every chunk of every row (rows prepared on the same data and options): per row, its chunks'
 * partials merged in chunk order as they come. Complete data walks each chunk once for all rows; with missing values each
 * row builds its own models (nothing is shared but the plan).
 */
export function evaluateRows(rows: readonly PreparedGrid[]): GridMerge[] {
  const first = rows[0];
  const { data, options, combinations } = first.task;
  const logistic = options.prediction_scale === "logistic";
  const outcome = outcomeStats(data.y, new Float64Array(data.rows));
  const merges = rows.map(() => new GridMerge(data.rows));
  // The rows' evaluators run one after another (each cell is finished before the next starts): one workspace serves them all.
  const workspace = new GridWorkspace();
  const levels = first.task.shared ? WalkLevels.forThread(data.rows, first.task.shared.cols, rows.length) : undefined;
  for (const [from, to] of first.chunks) {
    const evaluators = rows.map((row) => rangeEvaluator(row.task, from, to, workspace));
    const indices = Array.from({ length: to - from }, (_, q) => from + q);
    const walked = first.task.walkOrder ? trieOrder(combinations, indices, true) : indices;
    const shared = first.task.shared;
    if (shared) {
      const thetaZs = rows.map((row) => row.task.shared!.thetaZ);
      walkCombinationsMany(
        shared,
        thetaZs,
        data.y,
        combinations,
        walked,
        logistic,
        (index, t, model) => evaluators[t].evaluate(index, model, outcome),
        (index) => evaluators.forEach((e) => e.singular(index)),
        levels,
      );
    } else {
      for (const e of evaluators) indices.forEach(e.direct);
    }
    evaluators.forEach((e, r) => merges[r].add(e.finish()));
  }
  return merges;
}
