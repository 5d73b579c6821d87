/**
 * A worker thread of the service's pool (pool.ts): runs one analysis at a time with the engine
 * and answers with the result already encoded as JSON, so the HTTP thread never computes.
 * Posts `{type: "ready"}` once loaded; the pool starts a job's clock only on a ready worker.
 *
 * Two kinds of task let one job use more than one worker, or one worker serve several jobs:
 * - a Grid in parts (`part`, core.ts): every worker of the Grid draws chunks of combinations from
 *   one shared counter (threads/chunk-share.ts). Helpers ("draw") post each chunk's partial to the
 *   lead on their own port and stop early when the service needs their worker back; the lead
 *   ("lead") never stops, gathers the helpers' partials (computing itself a chunk a helper holds
 *   too long), merges all in chunk order and encodes the result. The chunks and their order do
 *   not depend on the number of workers: the result is bit-identical to `grid` on one worker.
 * - an experiment's Grid rows in one task (`thetas`): `gridExperiment` shares what does not
 *   depend on theta, each row's result identical to the row run alone; any failure falls back to
 *   running the rows one by one, so a bad row fails alone.
 */
import { parentPort, workerData, type MessagePort } from "node:worker_threads";
import type { Analysis, EngineResult } from "../engine/result.js";
import { runAnalysis } from "../engine/run.js";
import { checkData, type Dataset } from "../engine/data.js";
import { gridExperiment } from "../engine/experiment.js";
import { finishGrid, prepareGrid } from "../engine/grid.js";
import type { GridPartial } from "../engine/grid-cells.js";
import { transferables } from "../engine/grid-chunks.js";
import type { Given, GridOptions } from "../engine/options.js";
import { decodedTransfer, decodeResult, encodeJson, encodeResult, roundList, type Decoded } from "./encode.js";
import type { JobVariant } from "./store/records.js";
import { gridSingularity } from "../engine/singularity.js";
import { drawAndCollect, helpWithChunks, SHARE } from "../threads/chunk-share.js";

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
  /** A part of a Grid spread over several workers. */
  part?: GridPart;
  /** Grid only: several theta rows of one experiment, answered by one `WorkerRows`. */
  thetas?: Float64Array[];
  /** Answer the result decoded as well (`WorkerDone.decoded`), for a reader in the service's own process. */
  decode?: boolean;
}

/** A part of a Grid spread over several workers (threads/chunk-share.ts); `counter` holds its SHARE slots. */
export type GridPart =
  /** A helper: draws chunks until none is left or `stop` is set (the service wants its worker back), posting each on `port`. */
  | { kind: "draw"; counter: SharedArrayBuffer; port: MessagePort }
  /**
   * The lead: draws chunks until none is left, gathers the helpers' partials from `ports` (computing
   * itself a chunk a helper holds too long), merges every chunk in chunk order and encodes.
   */
  | { kind: "lead"; counter: SharedArrayBuffer; ports: MessagePort[] };

export interface WorkerPartials {
  type: "partials";
  id: number;
  partials: [number, GridPartial][];
}

/**
 * A task that asked for its result decoded (`decode`), posted before its `WorkerDone` when the
 * worker runs with an early post (the pool's worker): the result decoded, so that the service's
 * reader in its own process has it while the worker writes the text. The `WorkerDone` that
 * follows then carries the text only.
 */
export interface WorkerDecoded {
  type: "decoded";
  id: number;
  decoded: Decoded;
}

/** Posts a task's decoded result ahead of its `WorkerDone` (its buffers transferred). */
export type EarlyPost = (early: WorkerDecoded) => void;

export interface WorkerRows {
  type: "rows";
  id: number;
  rows: Array<WorkerDone | WorkerFailed>;
}

export interface WorkerDone {
  type: "done";
  id: number;
  /** The `results` object as JSON. */
  json: string;
  /** When the task asked: what JSON.parse reads from `json`, as `readDecoded` reads it (its buffers transferred). */
  decoded?: Decoded;
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

/** What a task answers when it does not fail. */
export type WorkerResult = WorkerDone | WorkerPartials | WorkerRows;
export type WorkerReply = { type: "ready" } | WorkerResult | WorkerDecoded | WorkerFailed;

/**
 * Runs a task. With `early`, a task that asks for its result decoded gets it through `early`
 * before the text is written, and its `WorkerDone` carries the text only.
 */
export function runTask(task: WorkerTask, early?: EarlyPost): WorkerResult | WorkerFailed {
  if (task.part) return runPart(task, task.part, (result) => done(task, result, early));
  if (task.thetas) return runRows(task, task.thetas);
  return runOne(task, early);
}

/** The task's data as the engine reads it (views of the shared arrays, nothing copied). */
function dataOf(task: WorkerTask): Dataset {
  return { y: task.y, X: task.X, rows: task.rows, cols: task.cols };
}

/**
 * A finished result as the pool takes it: encoded once, with its yhat and fit rounded as
 * published. Decoded as well when the task asks: through `early` first when given, else beside
 * the text.
 */
export function done(task: WorkerTask, result: EngineResult, early?: EarlyPost): WorkerDone {
  const ahead = early !== undefined ? decodedAhead(task, result) : undefined;
  if (ahead !== undefined) {
    early!(ahead);
    return textOnly(task, result);
  }
  const { json, decoded } = encodeResult(result, task.decimals, task.decode === true);
  return { type: "done", id: task.id, json, ...(decoded !== undefined ? { decoded } : {}), ...rounded(task, result) };
}

/** The result decoded to post ahead of its text, when the task asks for it decoded (undefined otherwise, or when it cannot be: then beside the text). */
export function decodedAhead(task: WorkerTask, result: EngineResult): WorkerDecoded | undefined {
  if (task.decode !== true) return undefined;
  const decoded = decodeResult(result, task.decimals);
  return decoded === undefined ? undefined : { type: "decoded", id: task.id, decoded };
}

/** The `WorkerDone` of a result posted ahead decoded (`decodedAhead`): its text only. */
function textOnly(task: WorkerTask, result: EngineResult): WorkerDone {
  return { type: "done", id: task.id, json: encodeJson(result, task.decimals), ...rounded(task, result) };
}

function rounded(task: WorkerTask, result: EngineResult): Pick<WorkerDone, "yhat" | "fit"> {
  return { yhat: roundList(result.yhat, task.decimals), fit: roundList(result.fit, task.decimals) };
}

export function failed(id: number, error: unknown): WorkerFailed {
  const e = error instanceof Error ? error : new Error(String(error));
  return { type: "failed", id, name: e.name, message: e.message };
}

/**
 * Runs a part of a spread Grid; the lead's finished result goes through `finish` (`done` on a
 * worker; inline.ts, on the service's own thread, writes its text once its reader has it).
 */
export function runPart<R>(task: WorkerTask, part: GridPart, finish: (result: EngineResult) => R): R | WorkerPartials | WorkerFailed {
  const counter = new Int32Array(part.counter);
  try {
    if (part.kind === "draw" && Atomics.load(counter, SHARE.stop) === 1) return { type: "partials", id: task.id, partials: [] };
    const data = dataOf(task);
    const prepared = prepareGrid(data, task.theta, task.options as Given<GridOptions>);
    if (part.kind === "draw") {
      helpWithChunks(prepared.task, prepared.chunks, counter, part.port);
      return { type: "partials", id: task.id, partials: [] };
    }
    return finish(finishGrid(prepared, drawAndCollect(prepared.task, prepared.chunks, counter, part.ports).partials));
  } catch (error) {
    return failed(task.id, error);
  } finally {
    if (part.kind === "lead") for (const port of part.ports) port.close();
    else part.port.close();
  }
}

function runRows(task: WorkerTask, thetas: Float64Array[]): WorkerRows {
  const data = dataOf(task);
  const one = (theta: Float64Array) => runOne({ ...task, theta, thetas: undefined });
  let rows: Array<WorkerDone | WorkerFailed>;
  try {
    for (const theta of thetas) checkData(data, theta);
    rows = gridExperiment(data, thetas, task.options as Given<GridOptions>).map((result) => done(task, result));
  } catch {
    // A row that cannot run fails alone: run them one by one.
    rows = thetas.map(one);
  }
  return { type: "rows", id: task.id, rows };
}

function runOne(task: WorkerTask, early?: EarlyPost): WorkerDone | WorkerFailed {
  try {
    const data = dataOf(task);
    const result =
      task.variant === "grid_singularity" ? gridSingularity(data, task.theta, task.options) : runAnalysis(task.analysis, data, task.theta, task.options);
    return done(task, result, early);
  } catch (error) {
    return failed(task.id, error);
  }
}

/** Set in `workerData` by the pool, so that importing this module elsewhere does nothing. */
export const WORKER_MARK = "rbp-service-worker";

if (parentPort && (workerData as { mark?: string } | undefined)?.mark === WORKER_MARK) {
  const port = parentPort;
  port.on("message", (task: WorkerTask) => {
    const reply = runTask(task, (early) => port.postMessage(early satisfies WorkerReply, decodedTransfer(early.decoded))) satisfies WorkerReply;
    const transfer =
      reply.type === "partials" ? reply.partials.flatMap(([, p]) => transferables(p)) : reply.type === "done" ? decodedTransfer(reply.decoded) : [];
    port.postMessage(reply, transfer);
  });
  port.postMessage({ type: "ready" } satisfies WorkerReply);
}
