/**
 * A Grid spread over the cores: worker threads and the calling thread draw chunks from one shared
 * counter, and the partials are merged in chunk order, so the result is bit-identical to `grid`.
 * The workers are started on first use and kept (unref'd, so they never hold the process open).
 *
 * The calling thread never waits long for a helper. A helper posts each chunk's partial as soon
 * as it is done; once no chunk is left to draw, the calling thread takes what has arrived and
 * waits for the chunks still in a helper's hands at most about as long as one of its own chunks
 * took, then computes them itself. A chunk's partial is the same whichever thread computes it,
 * so a worker still starting or warming up, or one the machine gives no core to, costs at most
 * about two chunks' time, never the whole of its share.
 */
import { availableParallelism } from "node:os";
import { performance } from "node:perf_hooks";
import { MessageChannel, receiveMessageOnPort, type MessagePort, type Worker } from "node:worker_threads";
import type { Dataset } from "../engine/data.js";
import { finishGrid, prepareGrid } from "../engine/grid.js";
import { evaluateRange, type GridPartial } from "../engine/grid-cells.js";
import { GRID_WORKER_MARK } from "../engine/grid-chunks.js";
import type { Given, GridOptions } from "../engine/options.js";
import type { EngineResult } from "../engine/result.js";
import { HELPER, HELPER_SLOTS, type HelperMessage, type HelperRequest } from "./grid-worker.js";
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
  const counter = new Int32Array(new SharedArrayBuffer(4 * HELPER_SLOTS));
  const ports: MessagePort[] = [];
  for (const worker of workers(threads - 1)) {
    const { port1, port2 } = new MessageChannel();
    ports.push(port1);
    worker.postMessage({ task, chunks, counter: counter.buffer as SharedArrayBuffer, port: port2 } satisfies HelperRequest, [port2]);
  }
  const partials = new Array<GridPartial | undefined>(chunks.length);
  const started = performance.now();
  let drawn = 0;
  for (let c = Atomics.add(counter, HELPER.next, 1); c < chunks.length; c = Atomics.add(counter, HELPER.next, 1)) {
    partials[c] = evaluateRange(task, chunks[c][0], chunks[c][1]);
    drawn++;
  }
  Atomics.store(counter, HELPER.stop, 1);
  let byHelpers = 0;
  const take = () => {
    for (const port of ports) {
      for (let m = receiveMessageOnPort(port); m; m = receiveMessageOnPort(port)) {
        const [c, partial] = m.message as HelperMessage;
        if (!partials[c]) {
          partials[c] = partial;
          byHelpers++;
        }
      }
    }
  };
  // The chunks a helper still holds: wait for them about as long as one chunk took here.
  const patience = drawn > 0 ? (performance.now() - started) / drawn : 0;
  const until = performance.now() + patience;
  take();
  while (partials.includes(undefined) && performance.now() < until) {
    const seen = Atomics.load(counter, HELPER.delivered);
    take();
    if (!partials.includes(undefined)) break;
    Atomics.wait(counter, HELPER.delivered, seen, Math.max(0, until - performance.now()));
    take();
  }
  let recomputed = 0;
  for (let c = 0; c < chunks.length; c++) {
    if (partials[c]) continue;
    take();
    if (partials[c]) continue;
    partials[c] = evaluateRange(task, chunks[c][0], chunks[c][1]);
    recomputed++;
  }
  for (const port of ports) port.close();
  lastRun = { chunks: chunks.length, byHelpers, recomputed };
  return finishGrid(prepared, partials as GridPartial[]);
}

/** The helper workers, started on first use (exported for tests). */
export const helperPool: Worker[] = [];
const pool = helperPool;

function workers(count: number): Worker[] {
  while (pool.length < count) {
    const worker = startWorker("grid-worker", import.meta.url, { workerData: { mark: GRID_WORKER_MARK } });
    worker.unref();
    worker.on("error", () => pool.splice(pool.indexOf(worker), 1));
    pool.push(worker);
  }
  return pool.slice(0, count);
}
