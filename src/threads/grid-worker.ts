/** Entry of a Grid worker thread (started by grid-parallel.ts): helps with a Grid's chunks on request (chunk-share.ts). */
import { parentPort, workerData, type MessagePort } from "node:worker_threads";
import type { GridTask } from "../engine/grid-cells.js";
import { GRID_WORKER_MARK } from "../engine/grid-chunks.js";
import { helpWithChunks } from "./chunk-share.js";

export interface HelperRequest {
  task: GridTask;
  chunks: [number, number][];
  /** The Int32 slots of chunk-share.ts SHARE. */
  counter: SharedArrayBuffer;
  /** Each message one `[chunk, partial]`; closed when the helper is done. */
  port: MessagePort;
}

if (parentPort && (workerData as { mark?: string } | undefined)?.mark === GRID_WORKER_MARK) {
  parentPort.on("message", (request: HelperRequest) => {
    try {
      helpWithChunks(request.task, request.chunks, new Int32Array(request.counter), request.port);
    } catch {
      // nothing to report: the calling thread computes what was not delivered
    }
  });
}
