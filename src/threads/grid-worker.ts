/**
 * Entry of a Grid worker thread (started by grid-parallel.ts): draws chunks of a request from its
 * shared counter and posts each chunk's partial on the request's port as soon as it is done.
 */
import { parentPort, workerData, type MessagePort } from "node:worker_threads";
import { evaluateRange, type GridPartial, type GridTask } from "../engine/grid-cells.js";
import { GRID_WORKER_MARK, transferables } from "../engine/grid-chunks.js";

/**
 * Int32 slots of a request's `counter`: the next chunk to draw (grid-chunks.ts), `stop` (the
 * calling thread has drawn the last chunk: draw no more), `delivered` (partials posted so far;
 * the calling thread waits on it).
 */
export const HELPER = { next: 0, stop: 1, delivered: 2 } as const;
export const HELPER_SLOTS = 3;

export interface HelperRequest {
  task: GridTask;
  chunks: [number, number][];
  counter: SharedArrayBuffer;
  /** Each message: one `[chunk, partial]`. Closed when the helper is done. */
  port: MessagePort;
}

export type HelperMessage = [number, GridPartial];

/** The helper's loop: every chunk it draws, posted as soon as it is done. */
export function help(request: HelperRequest): void {
  const { task, chunks, port } = request;
  const counter = new Int32Array(request.counter);
  try {
    // `stop` is raised only once every chunk is drawn: a helper starting late takes nothing.
    while (Atomics.load(counter, HELPER.stop) === 0) {
      const c = Atomics.add(counter, HELPER.next, 1);
      if (c >= chunks.length) break;
      const partial = evaluateRange(task, chunks[c][0], chunks[c][1]);
      port.postMessage([c, partial] satisfies HelperMessage, transferables(partial));
      Atomics.add(counter, HELPER.delivered, 1);
      Atomics.notify(counter, HELPER.delivered);
    }
  } finally {
    // A failure leaves its chunk undelivered: the calling thread computes it.
    port.close();
  }
}

if (parentPort && (workerData as { mark?: string } | undefined)?.mark === GRID_WORKER_MARK) {
  parentPort.on("message", (request: HelperRequest) => {
    try {
      help(request);
    } catch {
      // nothing to report: the calling thread computes what was not delivered
    }
  });
}
