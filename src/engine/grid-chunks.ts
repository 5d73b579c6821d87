/** The messages between gridParallel and its worker threads, and the chunk loop both sides run. */
import { evaluateRange, GridWorkspace, type GridPartial, type GridTask } from "./grid-cells.js";

export interface ChunkRequest {
  id: number;
  task: GridTask;
  chunks: [number, number][];
  /** Int32 at 0: the next chunk to take, shared by every thread of this Grid. */
  counter: SharedArrayBuffer;
}

export type ChunkReply = { id: number; partials: [number, GridPartial][] } | { id: number; error: string };

/**
 * Takes chunks until none is left; each chunk goes to whichever thread asks first. With `stop`,
 * a thread also stops, between chunks, once `stop()` is true (the others take what it leaves).
 */
export function drawChunks(task: GridTask, chunks: [number, number][], counter: Int32Array, stop?: () => boolean): [number, GridPartial][] {
  const done: [number, GridPartial][] = [];
  if (stop?.()) return done;
  const workspace = new GridWorkspace();
  for (let c = Atomics.add(counter, 0, 1); c < chunks.length; c = Atomics.add(counter, 0, 1)) {
    done.push([c, evaluateRange(task, chunks[c][0], chunks[c][1], workspace)]);
    if (stop?.()) break;
  }
  return done;
}

/** The buffers of a partial, moved (not copied) back to the calling thread. */
export function transferables(p: GridPartial): ArrayBuffer[] {
  const arrays = [p.composite, p.used, p.cellCombination, p.cellWeight, p.cellYhat, p.cellValid, p.secondary, p.ysolo];
  for (const r of Object.values(p.retained)) arrays.push(r.yhat, r.adjustedFit, r.n, r.weights);
  return arrays.filter((a): a is NonNullable<typeof a> => a !== null).map((a) => a.buffer as ArrayBuffer);
}

/** Set in `workerData` by gridParallel, so that only its own workers answer chunk requests. */
export const GRID_WORKER_MARK = "rbp-grid-worker";
