/**
 * Large request bodies are parsed and checked off the HTTP thread (issue 11, item 7): a body of
 * at least OFFLOAD_BYTES goes to one worker thread (offload-worker.ts), read into a
 * SharedArrayBuffer so that it is not copied; a smaller one is handled inline by the same code
 * (a round trip to a worker would cost more than the parse). Either way the route gets the same
 * answer: a parsed request, or a refusal with its ServiceError.
 *
 * The worker is started on first use, never keeps the process alive (unref), runs one body at a
 * time (FIFO; each is bounded by the body limits), and is replaced if it dies; the requests it
 * was parsing then get a 503 `parser_unavailable` and may be sent again (nothing was charged).
 */
import type { Worker } from "node:worker_threads";
import { startWorker } from "../threads/worker-script.js";
import type { Analysis } from "../api/options.js";
import type { ParsedRequest } from "../api/request.js";
import { ServiceError } from "./http.js";
import type { ServiceLimits } from "./limits.js";
import {
  OFFLOAD_MARK,
  runOffloadTask,
  type OffloadReply,
  type OffloadTask,
  type PackedRequest,
  type SerializedError,
  type SharedMatrix,
} from "./offload-worker.js";
import { v2ResultText, type V2ResultMeta } from "./v2-body.js";

/** Bodies from this size on are parsed in the worker. */
export const OFFLOAD_BYTES = 256 * 1024;

type TaskInput = OffloadTask extends infer T ? (T extends { id: number } ? Omit<T, "id"> : never) : never;

interface Pending {
  resolve: (reply: OffloadReply) => void;
  reject: (error: Error) => void;
}

class OffloadWorker {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;

  /** Runs a task here when its body is small (unless `large` says otherwise), else in the worker. */
  run(task: TaskInput, large = task.body.byteLength >= OFFLOAD_BYTES): Promise<OffloadReply> {
    const id = this.nextId++;
    const full = { ...task, id } as OffloadTask;
    if (!large) return Promise.resolve(runOffloadTask(full).reply);
    const worker = this.start();
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage(full);
    });
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = startWorker("offload-worker", import.meta.url, { workerData: { mark: OFFLOAD_MARK } });
    // The first 'message' listener would re-ref a worker unref'd before it (nodejs/node#53036).
    worker.on("message", (reply: OffloadReply) => {
      const p = this.pending.get(reply.id);
      if (!p) return;
      this.pending.delete(reply.id);
      p.resolve(reply);
    });
    const fail = () => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      const waiting = [...this.pending.values()];
      this.pending.clear();
      for (const p of waiting) {
        p.reject(
          new ServiceError(503, "parser_unavailable", "the service's request parser stopped unexpectedly; send the request again (nothing was charged)", {
            errorCode: 1,
          }),
        );
      }
    };
    worker.on("error", fail);
    worker.on("exit", fail);
    worker.unref();
    this.worker = worker;
    return worker;
  }
}

/** One per process: it holds no state of any service. */
const shared = new OffloadWorker();

function serviceError(e: SerializedError): ServiceError {
  return new ServiceError(e.status, e.code, e.message, e.init);
}

/** What a v3 POST body turned out to be. */
export type V3Body =
  | { ok: true; accessId: unknown; request: ParsedRequest }
  /** Refused; `accessId` is set when the body was an object (check it first: 403 before 422). */
  | { ok: false; accessId?: unknown; hasAccessStage: boolean; error: ServiceError };

/**
 * Parses a v3 POST body (JSON, depth, parser, checks before queueing with `limits`).
 *
 * @example
 * const parsed = await parseV3Body("grid", await readBody(req, limit, OFFLOAD_BYTES), limits);
 */
export async function parseV3Body(analysis: Analysis, body: Uint8Array, limits: ServiceLimits): Promise<V3Body> {
  const reply = await shared.run({ kind: "v3-post", analysis, body, limits });
  if (!reply.ok) return { ok: false, accessId: reply.accessId, hasAccessStage: reply.stage === "request", error: serviceError(reply.error) };
  if (reply.kind !== "v3-post") throw new Error("offload: unexpected reply");
  return { ok: true, accessId: reply.accessId, request: unpack(reply.request) };
}

/** v2, first step: the top level of the body (without y, theta and an inline X); throws the ServiceError of a refusal. */
export async function v2TopLevel(body: Uint8Array): Promise<Record<string, unknown>> {
  const reply = await shared.run({ kind: "v2-light", body });
  if (!reply.ok) throw serviceError(reply.error);
  if (reply.kind !== "v2-light") throw new Error("offload: unexpected reply");
  return reply.top;
}

/**
 * v2, second step: the request from `body` with its top level replaced by `top` (as the route
 * changed it) and X from `upload` when the body names one. Runs in the worker when the body or
 * the upload is large. Throws the (v3) ServiceError of a refusal; the route makes it a v2 400.
 */
export async function parseV2Body(analysis: Analysis, body: Uint8Array, top: Record<string, unknown>, upload?: SharedMatrix): Promise<ParsedRequest> {
  const large = body.byteLength >= OFFLOAD_BYTES || (upload !== undefined && upload.X.byteLength >= OFFLOAD_BYTES);
  const reply = await shared.run(
    { kind: "v2-post", analysis, body, top, ...(upload ? { upload: { rows: upload.rows, cols: upload.cols, X: upload.X } } : {}) },
    large,
  );
  if (!reply.ok) throw serviceError(reply.error);
  if (reply.kind !== "v2-post") throw new Error("offload: unexpected reply");
  return unpack(reply.request);
}

function unpack(p: PackedRequest): ParsedRequest {
  const K = p.data.cols;
  const thetas = Array.from({ length: p.m }, (_, r) => p.thetas.slice(r * K, (r + 1) * K));
  const { m: _m, ...rest } = p;
  return { ...rest, thetas } as ParsedRequest;
}

/**
 * A completed job's v2 body (encoded JSON) from its stored results; made in the worker when they
 * are large. Throws a 500 ServiceError when the stored results cannot be read.
 *
 * @example
 * sendJson(res, 200, await v2ResultBody(await service.resultJson(job), { job_id: job.id, job_code: job.code }));
 */
export async function v2ResultBody(resultsJson: string, meta: V2ResultMeta): Promise<string> {
  if (resultsJson.length < OFFLOAD_BYTES) return v2ResultText(resultsJson, meta);
  const reply = await shared.run({ kind: "v2-result", body: Buffer.from(resultsJson, "utf8"), meta }, true);
  if (!reply.ok) throw serviceError(reply.error);
  if (reply.kind !== "v2-result") throw new Error("offload: unexpected reply");
  return reply.text;
}
