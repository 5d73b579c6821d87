/** Entry of a Grid worker thread (started by grid-parallel.ts): evaluates chunks on request. */
import { parentPort, workerData } from "node:worker_threads";
import { drawChunks, GRID_WORKER_MARK, transferables, type ChunkReply, type ChunkRequest } from "../engine/grid-chunks.js";

if (parentPort && (workerData as { mark?: string } | undefined)?.mark === GRID_WORKER_MARK) {
  const port = parentPort;
  port.on("message", (request: ChunkRequest) => {
    try {
      const partials = drawChunks(request.task, request.chunks, new Int32Array(request.counter));
      port.postMessage(
        { id: request.id, partials } satisfies ChunkReply,
        partials.flatMap(([, p]) => transferables(p)),
      );
    } catch (error) {
      port.postMessage({ id: request.id, error: error instanceof Error ? (error.stack ?? error.message) : String(error) } satisfies ChunkReply);
    }
  });
}
