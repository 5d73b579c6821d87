/**
 * How threads share one Grid's chunks (threads/grid-parallel.ts; the service's spread Grids,
 * service/worker.ts): every thread draws chunks from one shared counter; a helper posts each
 * chunk's partial on its port as soon as it is done; the collecting thread (the caller of
 * gridParallel, or the service's lead worker), once no chunk is left to draw, takes what has
 * arrived and waits for the chunks still in a helper's hands at most `patience` ms (about one of
 * its own chunks), then computes them itself. A chunk's partial is the same whichever thread
 * computes it, so the merge, in chunk order, is bit-identical to `grid`, and a helper that is
 * slow to start, descheduled, stopped or dead costs at most about two chunks' time.
 */
import { performance } from "node:perf_hooks";
import { receiveMessageOnPort, type MessagePort } from "node:worker_threads";
import { evaluateRange, GridWorkspace, type GridPartial, type GridTask } from "../engine/grid-cells.js";
import { transferables } from "../engine/grid-chunks.js";

/**
 * Int32 slots of the shared counter: the next chunk to draw (slot 0, as grid-chunks.ts), `stop`
 * (helpers draw no more: every chunk is drawn, or the service wants their workers back), and
 * `delivered` (partials posted by helpers so far, for the collecting thread to wait on).
 */
export const SHARE = { next: 0, stop: 1, delivered: 2 } as const;
export const SHARE_SLOTS = 3;

/** How long the collecting thread waits for helpers' chunks when it drew none itself (no chunk time of its own to go by). */
export const PATIENCE_WITHOUT_OWN_CHUNK_MS = 50;

/** One message on a helper's port. */
export type ChunkMessage = [number, GridPartial];

/** A helper's loop: draws chunks until none is left or `stop`, posting each partial when done; closes the port. Returns the chunks it delivered. */
export function helpWithChunks(task: GridTask, chunks: [number, number][], counter: Int32Array, port: MessagePort): number {
  let delivered = 0;
  // One thread's chunks reuse its buffers (the walk's levels, the calibration scratch).
  const workspace = new GridWorkspace();
  try {
    while (Atomics.load(counter, SHARE.stop) === 0) {
      const c = Atomics.add(counter, SHARE.next, 1);
      if (c >= chunks.length) break;
      const partial = evaluateRange(task, chunks[c][0], chunks[c][1], workspace);
      port.postMessage([c, partial] satisfies ChunkMessage, transferables(partial));
      delivered++;
      Atomics.add(counter, SHARE.delivered, 1);
      Atomics.notify(counter, SHARE.delivered);
    }
  } finally {
    // After a failure its chunk stays undelivered: the collecting thread computes it.
    port.close();
  }
  return delivered;
}

export interface Collected {
  partials: GridPartial[];
  /** Chunks drawn by the collecting thread, delivered by helpers, and computed after a helper held them too long. */
  own: number;
  byHelpers: number;
  recomputed: number;
}

/**
 * The collecting thread: draws chunks until none is left, raises `stop`, then gathers the helpers'
 * partials from `ports` as above. Every chunk's partial, in chunk order.
 */
export function drawAndCollect(task: GridTask, chunks: [number, number][], counter: Int32Array, ports: readonly MessagePort[]): Collected {
  const partials = new Array<GridPartial | undefined>(chunks.length);
  const started = performance.now();
  const workspace = new GridWorkspace();
  let own = 0;
  for (let c = Atomics.add(counter, SHARE.next, 1); c < chunks.length; c = Atomics.add(counter, SHARE.next, 1)) {
    partials[c] = evaluateRange(task, chunks[c][0], chunks[c][1], workspace);
    own++;
  }
  Atomics.store(counter, SHARE.stop, 1);
  let byHelpers = 0;
  let missing = chunks.length - own;
  const take = () => {
    for (const port of ports) {
      for (let m = receiveMessageOnPort(port); m; m = receiveMessageOnPort(port)) {
        const [c, partial] = m.message as ChunkMessage;
        if (partials[c]) continue;
        partials[c] = partial;
        byHelpers++;
        missing--;
      }
    }
  };
  // About one chunk as it took here; when the helpers took every chunk, a short while.
  const patience = own > 0 ? (performance.now() - started) / own : PATIENCE_WITHOUT_OWN_CHUNK_MS;
  const until = performance.now() + patience;
  take();
  while (missing > 0 && performance.now() < until) {
    const seen = Atomics.load(counter, SHARE.delivered);
    take();
    if (missing === 0) break;
    Atomics.wait(counter, SHARE.delivered, seen, Math.max(0, until - performance.now()));
    take();
  }
  let recomputed = 0;
  for (let c = 0; c < chunks.length; c++) {
    if (partials[c]) continue;
    take();
    if (partials[c]) continue;
    partials[c] = evaluateRange(task, chunks[c][0], chunks[c][1], workspace);
    recomputed++;
  }
  for (const port of ports) port.close();
  return { partials: partials as GridPartial[], own, byHelpers, recomputed };
}
