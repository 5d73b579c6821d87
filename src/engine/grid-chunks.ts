/**
 * What a Grid's chunks share across threads (the sharing itself is threads/chunk-share.ts): the
 * buffers a partial moves back in, and the mark of gridParallel's worker threads.
 */
import type { GridPartial } from "./grid-cells.js";

/** The buffers of a partial, moved (not copied) back to the calling thread. */
export function transferables(p: GridPartial): ArrayBuffer[] {
  const arrays = [p.composite, p.used, p.cellCombination, p.cellWeight, p.cellYhat, p.cellValid, p.secondary, p.ysolo];
  for (const r of Object.values(p.retained)) arrays.push(r.yhat, r.adjustedFit, r.n, r.weights);
  return arrays.filter((a): a is NonNullable<typeof a> => a !== null).map((a) => a.buffer as ArrayBuffer);
}

/** Set in `workerData` by gridParallel, so that only its own workers answer chunk requests. */
export const GRID_WORKER_MARK = "rbp-grid-worker";
