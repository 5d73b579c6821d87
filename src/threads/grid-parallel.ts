/**
 * A Grid spread over the cores: worker threads and the calling thread draw chunks from one shared
 * counter, and the partials are merged in chunk order, so the result is bit-identical to `grid`.
 * The workers are started on first use and kept (unref'd, so they never hold the process open).
 *
 * The sharing of chunks, and why a slow or missing helper costs little: chunk-share.ts.
 */
import { availableParallelism } from "node:os";
import { MessageChannel, type MessagePort, type Worker } from "node:worker_threads";
import type { Dataset } from "../engine/data.js";
import { finishGrid, prepareGrid } from "../engine/grid.js";
import { GRID_WORKER_MARK } from "../engine/grid-chunks.js";
import type { Given, GridOptions } from "../engine/options.js";
import type { EngineResult } from "../engine/result.js";
import { drawAndCollect, SHARE_SLOTS } from "./chunk-share.js";
import type { HelperRequest } from "./grid-worker.js";
import { startWorker } from "./worker-script.js";

export interface ParallelSettings {
  /** Threads in all, the caller's included. Default: the machine's available parallelism. */
  threads?: number;
}

/** What the last gridParallel of this thread did (tests and benchmarks): chunks in all, delivered by helpers, computed twice. */
export let lastRun = { chunks: 0, byHelpers: 0, recomputed: 0 };

/**
 * @example
 * const result = await gridParallel(data, theta, { threshold: [0, 0.5] }, { threads: 2 });
 */
export async function gridParallel(data: Dataset, theta: Float64Array, given: Given<GridOptions> = {}, settings: ParallelSettings = {}): Promise<EngineResult> {
  const prepared = prepareGrid(data, theta, given);
  const { chunks, task } = prepared;
  const threads = task.options.inner_parallel === "off" ? 1 : Math.min(settings.threads ?? availableParallelism(), chunks.length);
  const counter = new Int32Array(new SharedArrayBuffer(4 * SHARE_SLOTS));
  const ports: MessagePort[] = [];
  for (const worker of workers(threads - 1)) {
    const { port1, port2 } = new MessageChannel();
    ports.push(port1);
    worker.postMessage({ task, chunks, counter: counter.buffer as SharedArrayBuffer, port: port2 } satisfies HelperRequest, [port2]);
  }
  const { partials, byHelpers, recomputed } = drawAndCollect(task, chunks, counter, ports);
  lastRun = { chunks: chunks.length, byHelpers, recomputed };
  return finishGrid(prepared, partials);
}

/** The helper workers, started on first use (exported for tests). */
export const helperPool: Worker[] = [];

function workers(count: number): Worker[] {
  while (helperPool.length < count) {
    const worker = startWorker("grid-worker", import.meta.url, { workerData: { mark: GRID_WORKER_MARK } });
    worker.unref();
    worker.on("error", () => helperPool.splice(helperPool.indexOf(worker), 1));
    helperPool.push(worker);
  }
  return helperPool.slice(0, count);
}
