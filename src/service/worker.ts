/**
 * A worker thread of the service's pool (pool.ts): runs one analysis at a time with the engine
 * and answers with the result already encoded as JSON, so the HTTP thread never computes.
 * Posts `{type: "ready"}` once loaded; the pool starts a job's clock only on a ready worker.
 */
import { parentPort, workerData } from "node:worker_threads";
import type { Analysis } from "../engine/result.js";
import { runAnalysis } from "../engine/run.js";
import { encodeJson, roundList } from "./encode.js";
import type { JobVariant } from "./persistence.js";
import { gridSingularity } from "../engine/singularity.js";

export interface WorkerTask {
  id: number;
  analysis: Analysis;
  y: Float64Array;
  X: Float64Array;
  rows: number;
  cols: number;
  theta: Float64Array;
  options: Record<string, unknown>;
  decimals: number | null;
  /** A variant of the analysis (v2 `/grid-singularity`: engine/singularity.ts). */
  variant?: JobVariant;
}

export interface WorkerDone {
  type: "done";
  id: number;
  /** The `results` object as JSON. */
  json: string;
  yhat: Array<number | null>;
  fit: Array<number | null>;
}

export interface WorkerFailed {
  type: "failed";
  id: number;
  /** The error's class name: ComputationError, InvalidInputError, RangeError ... */
  name: string;
  message: string;
}

export type WorkerReply = { type: "ready" } | WorkerDone | WorkerFailed;

export function runTask(task: WorkerTask): WorkerDone | WorkerFailed {
  try {
    const data = { y: task.y, X: task.X, rows: task.rows, cols: task.cols };
    const result =
      task.variant === "grid_singularity" ? gridSingularity(data, task.theta, task.options) : runAnalysis(task.analysis, data, task.theta, task.options);
    return {
      type: "done",
      id: task.id,
      json: encodeJson(result, task.decimals),
      yhat: roundList(result.yhat, task.decimals),
      fit: roundList(result.fit, task.decimals),
    };
  } catch (error) {
    const e = error instanceof Error ? error : new Error(String(error));
    return { type: "failed", id: task.id, name: e.name, message: e.message };
  }
}

/** Set in `workerData` by the pool, so that importing this module elsewhere does nothing. */
export const WORKER_MARK = "rbp-service-worker";

if (parentPort && (workerData as { mark?: string } | undefined)?.mark === WORKER_MARK) {
  const port = parentPort;
  port.on("message", (task: WorkerTask) => port.postMessage(runTask(task) satisfies WorkerReply));
  port.postMessage({ type: "ready" } satisfies WorkerReply);
}
