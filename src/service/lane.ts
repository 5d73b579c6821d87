/**
 * The embedded service's in-process lane: what `POST /v3/<analysis>` does, for many requests of
 * the process that started the service whose rows are ranges of one table (a backtest's windows),
 * without HTTP, JSON bodies or per-request copies of the data.
 *
 * The contract, request by request the same as the HTTP route's:
 * - Each window is one request: the rows `[from, to)` of the table, its theta rows and the
 *   options. It is checked as POST checks it (the options' shape, dialect and values once, since
 *   every window has the same attributes; the data and each theta row with the engine's
 *   `checkData`; the service's limits with `checkBeforeQueue`), paid for (one unit per theta row)
 *   and stored as one job, or an experiment for several rows, with real ids and codes: the jobs
 *   are read over HTTP afterwards like any other.
 * - All or nothing before anything runs: every window is checked, and the plan's remaining units
 *   compared with the whole batch's, before the first is paid for; a refusal throws the error the
 *   route would have answered (`InvalidInputError` naming the field, prefixed with the window; a
 *   429 `ServiceError` for the quota) and nothing is charged. The windows are then paid for one
 *   request at a time, as POSTs are: with the in-memory store nothing else runs in between (no
 *   store call waits for I/O); with a durable store another request may take units between two,
 *   and a window then refused (429) leaves the ones before it paid for and running.
 * - The jobs run on the service's pool like every job (the store's fair queue, the time limit);
 *   the table is copied once into shared memory, so handing a job to a worker copies no rows.
 * - Results are the stored JSON, rounded as the service publishes them, with each job's yhat as
 *   the store keeps it beside (the same numbers): a caller parses a result only when it needs it.
 *
 * What differs from HTTP: no body is sent, so `maxBodyBytes` does not apply (the caller is the
 * service's own process); v3 only (the caller falls back to HTTP for v2).
 */
import { OptionsObjectSchema } from "../api/schemas.js";
import { invalidFromZod, type ParsedRequest } from "../api/request.js";
import { capWarnings, warningText } from "../api/warnings.js";
import { normalizeOptions, resolveOptions, type Analysis } from "../api/options.js";
import { checkData, type Dataset } from "../engine/data.js";
import { InvalidInputError } from "../engine/errors.js";
import type { PredictionService } from "./core.js";
import { digest, type Org } from "./credentials.js";
import { errorBody, httpError, ServiceError } from "./http.js";
import { inputError } from "./input-error.js";
import { completedHead, experimentView, receiptBody, unfinishedReply } from "./v3.js";
import { checkBeforeQueue } from "./preflight.js";
import { runsInline } from "./inline.js";
import { readDecoded, readDecodedColumns, type Decoded } from "./encode.js";
import { publicFailure } from "./reasons.js";
import type { JobRecord } from "./store/records.js";
import type { QuotaStatus } from "./quota.js";

/** One request of a batch: rows `[from, to)` of the table and its circumstances (K numbers each). */
export interface LaneWindow {
  from: number;
  to: number;
  thetas: ReadonlyArray<ArrayLike<number>>;
}

/** A batch of requests over one table: y (N), X (N rows of K; null or NaN missing), v3 options. */
export interface LaneBatch {
  analysis: Analysis;
  y: ArrayLike<number>;
  X: ReadonlyArray<ArrayLike<number | null>>;
  options?: Record<string, unknown>;
  windows: ReadonlyArray<LaneWindow>;
}

/**
 * One theta row's job as it ended: its results as the service stored them (JSON, rounded as it
 * publishes them) with its yhat (the same numbers, read without parsing the rest), or the reason
 * it failed.
 */
export type LaneRow =
  | { row: number; job_id: number; job_code: string; status: "completed"; json: string; yhat: Array<number | null> }
  | { row: number; job_id: number; job_code: string; status: "failed"; reason: string };

/** One window's receipt (a job, or an experiment for several theta rows), its notes, and its rows once they end. */
export interface LaneSubmitted {
  job_id: number;
  job_code: string;
  experiment?: { experiment_id: number; experiment_code: string };
  warnings: string[];
  /** Resolves when every job of the window has ended, in row order. */
  rows: Promise<LaneRow[]>;
}

export class Lane {
  readonly #service: PredictionService;
  readonly #org: Org;
  #endpoint: LaneEndpoint | undefined;

  /** @internal The lane of `service` for the organisation `org` (startLocalService makes it). */
  constructor(service: PredictionService, org: Org) {
    this.#service = service;
    this.#org = org;
  }

  /** The v3 routes for a client in this process (client/in-process.ts), for the same organisation. */
  get endpoint(): LaneEndpoint {
    return (this.#endpoint ??= new LaneEndpoint(this.#service, this.#org));
  }

  /** The organisation's quota, as GET /v3/quota reads it (free). */
  quota(): Promise<QuotaStatus> {
    return this.#service.quotaStatus(this.#org);
  }

  /**
   * Checks every window, pays for all of them and queues their jobs; answers one receipt per
   * window, each with a promise of its rows. Nothing is charged when a window is refused.
   *
   * @example
   * const [w] = await lane.submit({ analysis: "psr", y, X, options: { threshold: 0.8 }, windows: [{ from: 0, to: 100, thetas: [X[100]] }] });
   * const [row] = await w.rows; // { status: "completed", json: "{...}", yhat: [71.2], job_id, job_code, row: 0 }
   */
  async submit(batch: LaneBatch, settings: { signal?: AbortSignal } = {}): Promise<LaneSubmitted[]> {
    const requests = this.#check(batch);
    const units = requests.reduce((s, r) => s + r.thetas.length, 0);
    const status = await this.quota();
    if (status.remaining < units) {
      throw new ServiceError(
        429,
        "quota_exceeded",
        `Limit Exceeded: this batch costs ${units} unit${units === 1 ? "" : "s"} and the plan has ${status.remaining} left (quota ${status.quota}, used ${status.used})`,
        { extra: { quota: status.quota, used: status.used, remaining: status.remaining, required: units, unit: "prediction_task" } },
      );
    }
    const out: LaneSubmitted[] = [];
    for (const request of requests) {
      const submission = await this.#service.submit(this.#org, request).catch((error: unknown) => Promise.reject(httpError(error) ?? error));
      const first = submission.jobs[0];
      out.push({
        job_id: first.id,
        job_code: first.code,
        ...(submission.experiment ? { experiment: { experiment_id: submission.experiment.id, experiment_code: submission.experiment.code } } : {}),
        warnings: submission.warnings,
        rows: Promise.all(submission.jobs.map((job) => this.#ended(job, settings.signal))),
      });
    }
    return out;
  }

  /** Every window as a parsed request, checked as POST checks it. */
  #check(batch: LaneBatch): ParsedRequest[] {
    const { analysis } = batch;
    const N = batch.y.length;
    if (batch.X.length !== N) throw new InvalidInputError("X", `${N} rows, one per value of y`, `got ${batch.X.length}`);
    const K = N > 0 ? batch.X[0].length : 0;
    // The table once, in shared memory: a job handed to a worker carries views of it, not copies.
    const y = new Float64Array(new SharedArrayBuffer(8 * N));
    const X = new Float64Array(new SharedArrayBuffer(8 * N * K));
    for (let i = 0; i < N; i++) {
      y[i] = batch.y[i];
      const row = batch.X[i];
      if (row.length !== K) throw new InvalidInputError(`X[${i}]`, `${K} values like the first row`, `got ${row.length}`);
      for (let j = 0; j < K; j++) X[i * K + j] = row[j] ?? NaN;
    }
    // The options: the same for every window (same attributes), so checked once.
    const shape = OptionsObjectSchema.nullish().safeParse(batch.options);
    if (!shape.success) throw prefixed(invalidFromZod(shape.error), "options");
    const normalized = normalizeOptions(analysis, { ...(shape.data ?? {}) }, "v3");
    const warnings = capWarnings(normalized.notes).map(warningText);
    const resolved = resolveOptions(analysis, normalized.options, K);
    return batch.windows.map((w, n) => {
      try {
        if (!(Number.isInteger(w.from) && Number.isInteger(w.to) && 0 <= w.from && w.from < w.to && w.to <= N))
          throw new InvalidInputError("rows", `a range of rows within 0 to ${N}`, `got ${w.from} to ${w.to}`);
        if (w.thetas.length === 0) throw new InvalidInputError("theta", `K=${K} numbers`, "missing");
        const data: Dataset = { y: y.subarray(w.from, w.to), X: X.subarray(w.from * K, w.to * K), rows: w.to - w.from, cols: K };
        const thetas = w.thetas.map((t) => Float64Array.from(t));
        thetas.forEach((theta, r) => {
          try {
            checkData(data, theta);
          } catch (e) {
            if (e instanceof InvalidInputError && thetas.length > 1 && e.field.startsWith("theta")) throw prefixed(e, `theta[${r}]`, "theta");
            throw e;
          }
        });
        const request = {
          analysis,
          accessId: "",
          data,
          thetas,
          thetaGiven: true,
          options: normalized.options,
          resolved,
          notes: normalized.notes,
          warnings,
        } as ParsedRequest;
        checkBeforeQueue(request, this.#service.config.limits);
        return request;
      } catch (e) {
        if (e instanceof InvalidInputError) throw new LaneWindowError(n, e);
        throw e;
      }
    });
  }

  /** Waits for a job to end (no polling: the service wakes its waiters) and reads its outcome. */
  async #ended(job: JobRecord, signal: AbortSignal | undefined): Promise<LaneRow> {
    let current: JobRecord | undefined = job;
    while (current !== undefined && current.status !== "completed" && current.status !== "failed") {
      if (signal?.aborted) throw signal.reason ?? new Error("aborted");
      await this.#service.waitForJob(current, 60_000, signal);
      current = await this.#service.findJob(this.#org, job.id, job.code);
    }
    const base = { row: job.row, job_id: job.id, job_code: job.code };
    if (current === undefined) return { ...base, status: "failed", reason: "the job is no longer known to the service" };
    if (current.status === "failed") {
      const failure = publicFailure(current.failure ?? { message: "the job failed", error_code: 2, status_code: 10 }).failure;
      return { ...base, status: "failed", reason: failure.message };
    }
    const json = await this.#service.resultJson(current);
    const yhat = current.compact?.yhat ?? (JSON.parse(json) as { yhat: Array<number | null> }).yhat;
    return { ...base, status: "completed", json, yhat };
  }
}

/**
 * The v3 routes of the embedded service for its own process's client (client/in-process.ts): each
 * method answers what the route answers over HTTP (status, JSON body, headers), built by the same
 * functions as the route's reply, for the lane's organisation. A request arrives already parsed
 * by the service's parser, from values that JSON would carry unchanged.
 */
export class LaneEndpoint {
  readonly #service: PredictionService;
  readonly #org: Org;
  /** The last access id's digest (the client of this process sends the same one each time). */
  #accessDigest: { accessId: string; digest: Buffer } | undefined;

  /** @internal */
  constructor(service: PredictionService, org: Org) {
    this.#service = service;
    this.#org = org;
  }

  get maxBodyBytes(): number {
    return this.#service.config.maxBodyBytes;
  }

  /** POST /v3/{analysis}, after the body's parse: the access id, the limits, the quota, the jobs. */
  submit(request: ParsedRequest): Promise<LaneReply> {
    return replyOf(async () => {
      this.#service.auth.checkAccessId(this.#org, { access_id: request.accessId }, Date.now(), (accessId) => {
        if (this.#accessDigest?.accessId !== accessId) this.#accessDigest = { accessId, digest: digest(accessId) };
        return this.#accessDigest.digest;
      });
      let estimate;
      try {
        estimate = checkBeforeQueue(request, this.#service.config.limits);
      } catch (error) {
        throw inputError(error);
      }
      const submission = await this.#service.submit(this.#org, inSharedMemory(request), { decoded: true, inline: runsInline(request, estimate) });
      return { status: 200, body: receiptBody(submission, request.notes) };
    });
  }

  /**
   * GET /v3/results/{id}/{code}, once the job has ended or `holdMs` has passed. A result that
   * reached the service decoded before its worker wrote the text is answered at once, the first
   * time, without the text (`parsed`, with `resultsBytesAtMost` and `scan`) and with the envelope
   * the route answers once the store has it; a later read waits for the store.
   */
  job(jobId: number, jobCode: string, holdMs: number, signal?: AbortSignal): Promise<LaneReply> {
    return replyOf(async () => {
      const service = this.#service;
      const running = (j: JobRecord) => j.status === "queued" || j.status === "running";
      let job = await this.#find(jobId, jobCode, false);
      if (holdMs > 0 && running(job) && !service.isAhead(job.id)) {
        await service.waitForJob(job, holdMs, signal, { orAhead: true });
        job = await this.#find(jobId, jobCode, false);
      }
      if (running(job) && service.isAhead(job.id)) {
        const early = service.takeAhead(job);
        if (early !== undefined) {
          return withDecoded({ status: 200, body: completedHead(early.job), resultsBytesAtMost: early.bytesAtMost, scan: early.scan }, early.decoded);
        }
        job = await this.#find(jobId, jobCode, true);
      }
      const unfinished = unfinishedReply(job);
      if (unfinished !== undefined) return unfinished;
      const results = await this.#service.resultJson(job);
      // What JSON.parse reads from `results`, when the worker sent it decoded (a job this endpoint submitted).
      const decoded = this.#service.takeDecoded(job.id);
      const reply: LaneReply = { status: 200, body: completedHead(job), results };
      return decoded !== undefined ? withDecoded(reply, decoded) : reply;
    });
  }

  /** GET /v3/experiments/{id}/{code}, once its first unfinished row has ended (or every row had) or `holdMs` has passed. */
  experiment(experimentId: number, experimentCode: string, holdMs: number, signal?: AbortSignal): Promise<LaneReply> {
    return replyOf(async () => {
      const find = async () => {
        const found = await this.#service.findExperiment(this.#org, experimentId, experimentCode);
        if (!found) throw new ServiceError(404, "not_found", `no experiment ${experimentId} with this code for this API key`);
        return found;
      };
      const experiment = await find();
      if (holdMs > 0) {
        // The first row still to end (rows run in order, about): the view is read again when it ends.
        const next = (await this.#service.experimentJobs(experiment)).find((j) => j.status === "queued" || j.status === "running");
        if (next !== undefined) await this.#service.waitForJob(next, holdMs, signal);
      }
      const body = await experimentView(this.#service, await find());
      const headers: Record<string, string> = body.status === "running" ? { "retry-after": "1" } : {};
      return { status: body.status === "running" ? 202 : 200, body, headers };
    });
  }

  /** GET /v3/quota. */
  quota(): Promise<LaneReply> {
    return replyOf(async () => ({ status: 200, body: { ...(await this.#service.quotaStatus(this.#org)), unit: "prediction_task" } }));
  }

  /** The job; `settled`: once the store has a result that reached the service ahead of its text. */
  async #find(jobId: number, jobCode: string, settled: boolean): Promise<JobRecord> {
    const job = settled ? await this.#service.findJob(this.#org, jobId, jobCode) : await this.#service.findJobNow(this.#org, jobId, jobCode);
    if (!job) throw new ServiceError(404, "not_found", `no job ${jobId} with this code for this API key`);
    return job;
  }
}

/**
 * The request with its data copied once into shared memory (the same values): a job handed to a
 * worker then carries views of it, where an ordinary buffer is copied for every worker of a spread
 * Grid (20 ms on the main thread for N=100,000, K=10 on two workers, and as much in the workers).
 */
function inSharedMemory(request: ParsedRequest): ParsedRequest {
  const shared = (values: Float64Array): Float64Array => {
    if (values.buffer instanceof SharedArrayBuffer) return values;
    const copy = new Float64Array(new SharedArrayBuffer(values.byteLength));
    copy.set(values);
    return copy;
  };
  return { ...request, data: { ...request.data, y: shared(request.data.y), X: shared(request.data.X) } };
}

/** One reply of a v3 route: status, JSON body, headers; a completed job's stored results text beside. */
export interface LaneReply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  results?: string;
  /**
   * What JSON.parse reads from `results`, when the service has it decoded (without `results`: the
   * text is not written yet): read when asked, a new value each time.
   */
  readonly parsed?: unknown;
  /** With `parsed`: the same value with its long columns held (`readDecodedColumns`), for a reader that holds results compactly. */
  columns?: () => unknown;
  /** Without `results`: at least the text's length. */
  resultsBytesAtMost?: number;
  /** Without `results`: the JSON of the result's strings and keys. */
  scan?: string;
}

/** The reply with the job's decoded result: `parsed` and `columns` read it when asked (a reader wants one of the two). */
function withDecoded(reply: LaneReply, decoded: Decoded): LaneReply {
  return Object.defineProperties(reply, {
    parsed: { get: () => readDecoded(decoded), enumerable: true },
    columns: { value: () => readDecodedColumns(decoded), enumerable: true },
  });
}

/** The reply of `route`, a refusal as its error reply, anything else as the router's 500. */
async function replyOf(route: () => Promise<LaneReply>): Promise<LaneReply> {
  try {
    return await route();
  } catch (error) {
    const refusal = httpError(error) ?? new ServiceError(500, "internal_error", "the service failed unexpectedly; see its log");
    return { status: refusal.status, body: errorBody(refusal), headers: refusal.init.headers ?? {} };
  }
}

/** A window refused as POST would refuse it; `window` is its position in the batch. */
export class LaneWindowError extends InvalidInputError {
  readonly window: number;
  constructor(window: number, cause: InvalidInputError) {
    super(cause.field, cause.expected, detailOf(cause));
    this.window = window;
  }
}

function detailOf(e: InvalidInputError): string | undefined {
  const prefix = `${e.field}: expected ${e.expected}`;
  const rest = e.message.startsWith(prefix) ? e.message.slice(prefix.length).replace(/^;\s*/, "") : "";
  return rest === "" ? undefined : rest;
}

/** The error with its field under `under` (`options` + `threshold` = `options.threshold`; `theta[2]` for theta). */
function prefixed(e: InvalidInputError, under: string, replacing?: string): InvalidInputError {
  const field = replacing !== undefined ? `${under}${e.field.slice(replacing.length)}` : e.field === "body" ? under : `${under}.${e.field}`;
  return new InvalidInputError(field, e.expected, detailOf(e));
}
