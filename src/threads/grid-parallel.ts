/**
 * A Grid spread over the cores: worker threads and the calling thread draw chunks from one shared
 * counter, and the partials are merged in chunk order, so the result is bit-identical to `grid`.
 * The workers are started on first use and kept (unref'd, so they never hold the process open).
 */
import { availableParallelism } from "node:os";
import type { Worker } from "node:worker_threads";
import type { Dataset } from "../engine/data.js";
import { finishGrid, prepareGrid } from "../engine/grid.js";
import type { GridPartial } from "../engine/grid-cells.js";
import { drawChunks, GRID_WORKER_MARK, type ChunkReply, type ChunkRequest } from "../engine/grid-chunks.js";
import type { Given, GridOptions } from "../engine/options.js";
import type { EngineResult } from "../engine/result.js";
import { startWorker } from "./worker-script.js";

export interface ParallelSettings {
  /** Threads in all, the caller's included. Default: the machine's available parallelism. */
  threads?: number;
}

export async function gridParallel(data: Dataset, theta: Float64Array, given: Given<GridOptions> = {}, settings: ParallelSettings = {}): Promise<EngineResult> {
  const prepared = prepareGrid(data, theta, given);
  const { chunks, task } = prepared;
  const threads = task.options.inner_parallel === "off" ? 1 : Math.min(settings.threads ?? availableParallelism(), chunks.length);
  const counter = new Int32Array(new SharedArrayBuffer(4));
  const helpers = workers(threads - 1).map((worker) => ask(worker, { id: nextId++, task, chunks, counter: counter.buffer as SharedArrayBuffer }));
  const partials = new Array<GridPartial>(chunks.length);
  for (const [c, partial] of drawChunks(task, chunks, counter)) partials[c] = partial;
  for (const reply of await Promise.all(helpers)) for (const [c, partial] of reply) partials[c] = partial;
  return finishGrid(prepared, partials);
}

let nextId = 0;
const pool: Worker[] = [];

function workers(count: number): Worker[] {
  while (pool.length < count) {
    const worker = startWorker("grid-worker", import.meta.url, { workerData: { mark: GRID_WORKER_MARK } });
    worker.unref();
    worker.on("error", () => pool.splice(pool.indexOf(worker), 1));
    pool.push(worker);
  }
  return pool.slice(0, count);
}

function ask(worker: Worker, request: ChunkRequest): Promise<[number, GridPartial][]> {
  return new Promise((resolve, reject) => {
    const onMessage = (reply: ChunkReply) => {
      if (reply.id !== request.id) return;
      worker.off("message", onMessage);
      worker.off("error", onError);
      if ("error" in reply) reject(new Error(`Grid worker failed: ${reply.error}`));
      else resolve(reply.partials);
    };
    const onError = (error: Error) => {
      worker.off("message", onMessage);
      reject(error);
    };
    worker.on("message", onMessage);
    worker.on("error", onError);
    worker.ref();
    worker.postMessage(request);
  }).finally(() => worker.unref()) as Promise<[number, GridPartial][]>;
}
