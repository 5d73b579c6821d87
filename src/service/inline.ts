/**
 * The embedded service's inline run of a small Grid: the job's lead part (worker.ts `runTask` with
 * a "lead" part) runs on the calling thread, as the engine's `gridParallel` does, while helper
 * parts posted to the pool's free workers draw chunks from the same shared counter
 * (threads/chunk-share.ts). The chunks merge in chunk order whoever computed them, and the result
 * is finished, encoded and decoded by the worker's own functions, so the stored text, the decoded
 * result, the failure and everything the store records are those of the same job run on a worker.
 *
 * Why: a warm default Grid (N=1,000, K=10) takes ~8.5 ms in the engine, and handing it to a lead
 * worker costs two wake-ups between threads (the post, the decoded result's arrival) and a third
 * runnable thread on a 2-core machine; docs/architecture.md, "where a warm call's time goes".
 *
 * Only for the embedded service's own process (the lane's endpoint asks for it: `rbp serve`
 * never does) and only for a job small enough (`INLINE_GRID_MAX_WORK`): the calling thread cannot
 * be stopped at the job's time limit as a worker is terminated, and blocks while the Grid runs.
 */
import { MessageChannel, type MessagePort } from "node:worker_threads";
import type { ParsedRequest } from "../api/request.js";
import { SHARE, SHARE_SLOTS } from "../threads/chunk-share.js";
import { jobFailureOf, PoolClosedError, PoolJobError, type WorkerPool } from "./pool.js";
import { decodedAhead, done, failed, runPart, type WorkerDecoded, type WorkerDone, type WorkerPartials, type WorkerTask } from "./worker.js";
import { estimateWork, type WorkEstimate } from "./limits.js";
import { decodedBytes, decodedJson, decodedOutline, roundList } from "./encode.js";
import { DeferredText, type ResultText } from "./store/packed.js";

/**
 * A Grid of at most this many rows x cells (limits.ts `estimateWork`: rows x combinations x
 * thresholds x censors) runs inline. At the engine's ~2 ns per row and cell on one core (the
 * default Grid at N=1,000, K=10 is 8.2 million and takes ~17 ms of one core), about 35 ms of the
 * calling thread at most, less with a helper: short enough to block the notebook's thread, and
 * far below any job time limit. Larger jobs go to the workers, which the time limit can stop.
 */
export const INLINE_GRID_MAX_WORK = 16_000_000;

/**
 * An inline Grid is stored this long after its reader was handed the decoded result: once the
 * notebook call that reads it has ended. Its text is not written then but when first needed (a
 * read over HTTP or of a field, a second read, or the store's deflate once it is quiet:
 * store/packed.ts `DeferredText`), from the decoded form the reader has: ~0.4 ms of the
 * notebook's thread (the default Grid at N=1,000) that landed in the next call when calls came
 * within this delay (tslab's final-line turn runs due timers). Stored at the next turn, or on a 0
 * ms timer, the store's work landed among the turns of tslab's final progress line
 * (notebook/turns.ts); the only cost of waiting is that another reader of the job waits this much
 * longer.
 */
export const TEXT_AFTER_MS = 20;

/** What an inline run answers: a worker's `WorkerDone`, whose text may be written when first needed. */
export type InlineDone = Omit<WorkerDone, "json"> & { json: ResultText };

/** Inline runs of this process so far (tests and benchmarks). */
export const inlineRuns = { count: 0 };

/**
 * Whether the request's jobs are small Grids to run inline (one theta row: an experiment's rows
 * go to the workers several at a time); `estimate`: the request's `estimateWork`, when known.
 *
 * @example
 * await service.submit(org, request, { decoded: true, inline: runsInline(request) });
 */
export function runsInline(request: ParsedRequest, estimate?: WorkEstimate): boolean {
  return request.analysis === "grid" && request.thetas.length === 1 && (estimate ?? estimateWork(request)).work <= INLINE_GRID_MAX_WORK;
}

/**
 * A channel made while this thread had nothing else to do (when an inline run is stored), for the
 * next Grid's helper: a new MessageChannel on a warm call's path took 0.06-0.07 ms (N=1,000, K=10
 * profile). Its ports, never started, hold nothing open.
 */
let spareChannel: MessageChannel | undefined;

/** How a Grid's helper parts run on the pool (core.ts's spread Grids and the inline run). */
export interface HelperSettings {
  /** Absolute time (ms) by which the helpers must end. */
  deadline: number;
}

/** A Grid's helper parts on the pool: their counter and ports, for the lead; `post` sends them, `release` ends them. */
export interface Helpers {
  counter: Int32Array;
  /** The ports the helpers' partials arrive on, for the lead. */
  ports: MessagePort[];
  /** Posts the helper parts to the pool (after the lead's, when the lead runs on a worker: it takes the first free one). */
  post: () => void;
  /** Stops the helpers after their current chunk and withdraws those not started. */
  release: () => void;
}

/**
 * `count` helper parts of `task` drawing chunks from one new counter. A helper's failure fails
 * nothing: the lead computes what it did not deliver.
 *
 * @example
 * const helpers = helperParts(pool, task, 1, { deadline }); helpers.post(); try { ... } finally { helpers.release(); }
 */
export function helperParts(pool: WorkerPool, task: WorkerTask, count: number, { deadline }: HelperSettings): Helpers {
  const counter = new Int32Array(new SharedArrayBuffer(4 * SHARE_SLOTS));
  const buffer = counter.buffer as SharedArrayBuffer;
  const channels = Array.from({ length: count }, () => {
    const channel = spareChannel ?? new MessageChannel();
    spareChannel = undefined;
    return channel;
  });
  // Object.assign, not `{ ...task, part }` (V8's new shape for each object spread and extended: docs/architecture.md).
  const tasks = channels.map(({ port1 }): WorkerTask => Object.assign({}, task, { part: { kind: "draw" as const, counter: buffer, port: port1 } }));
  return {
    counter,
    ports: channels.map((c) => c.port2),
    post: () =>
      tasks.forEach((helper, h) => {
        pool
          .run<WorkerPartials>(helper, { deadline, transfer: [channels[h].port1], wanted: () => Atomics.load(counter, SHARE.stop) === 0 })
          .catch(() => channels[h].port1.close());
      }),
    release: () => {
      Atomics.store(counter, SHARE.stop, 1);
      for (const helper of tasks) pool.withdraw(helper);
    },
  };
}

/**
 * Runs a Grid task's lead part on this thread with `helpers` parts on the pool; answers what the
 * task would answer from a worker, or throws the PoolJobError the pool would reject it with.
 * - The lead starts a turn of the event loop after the helpers are posted: what the submitting
 *   caller still has to do (its receipt, its wait for the job) runs while a helper wakes up.
 * - A task that asks for its result decoded gets it through `onDecoded` first, as from a worker,
 *   and is answered `TEXT_AFTER_MS` later with its text deferred: written from that decoded form
 *   when first needed (the same bytes as `encodeJson`: encode.ts `decodedJson`). Every other
 *   reader of the job waits until the store has it (core.ts `ahead`).
 *
 * @example
 * const done = await runInline(pool, task, { helpers: 1, deadline: Date.now() + 600_000 });
 */
export async function runInline(
  pool: WorkerPool,
  task: WorkerTask,
  settings: HelperSettings & { helpers: number; onDecoded?: (early: WorkerDecoded) => void },
): Promise<InlineDone> {
  const helpers = helperParts(pool, task, settings.helpers, settings);
  helpers.post();
  inlineRuns.count++;
  await new Promise((resolve) => setImmediate(resolve));
  let reply;
  try {
    // The service closed meanwhile: the job is not failed (as a worker's job when the pool closes).
    if (pool.isClosed()) throw new PoolClosedError();
    const part = { kind: "lead", counter: helpers.counter.buffer as SharedArrayBuffer, ports: helpers.ports } as const;
    reply = runPart(task, part, (result) => ({ type: "finished", result }) as const);
  } finally {
    helpers.release();
  }
  if (reply.type === "failed") throw new PoolJobError(jobFailureOf(reply));
  if (reply.type !== "finished") throw new Error("an inline lead answered partials");
  const { result } = reply;
  try {
    const ahead = settings.onDecoded !== undefined ? decodedAhead(task, result) : undefined;
    if (ahead === undefined) return done(task, result);
    settings.onDecoded!(ahead);
    await new Promise((resolve) => setTimeout(resolve, TEXT_AFTER_MS));
    spareChannel ??= new MessageChannel();
    const { decoded } = ahead;
    const { decimals } = task;
    const json = new DeferredText(() => decodedJson(decoded, decimals), decodedOutline(decoded).bytesAtMost, decodedBytes(decoded));
    return { type: "done", id: task.id, json, yhat: roundList(result.yhat, decimals), fit: roundList(result.fit, decimals) };
  } catch (error) {
    throw new PoolJobError(jobFailureOf(failed(task.id, error)));
  }
}
