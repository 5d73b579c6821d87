/**
 * `grid(data, spec, options)`, `maxfit(...)`, `psr(...)`: one call from a data frame to a
 * prediction. Each turns the data into y, X and theta (src/frame: the spec names the outcome, the
 * attributes and the circumstances), connects (`connect()`: hosted or the embedded service),
 * submits, waits with a progress line updated in place, and returns a `Prediction` (one
 * circumstance) or an `ExperimentPrediction` (several theta rows: one job per row).
 *
 * A failure of any step (the data, the request, the credentials, the quota, the job, the
 * connection) is thrown as a `PredictionError` with a readable message; in a notebook kernel it is
 * also displayed in the cell as a short HTML box (see errors.ts).
 */
import { nextTurn } from "./turns.js";
import {
  JobFailedError,
  isExperimentReceipt,
  type Analysis,
  type ExperimentReceipt,
  type GridOptionsInput,
  type JobReceipt,
  type MaxFitOptionsInput,
  type OptionsInputFor,
  type PsrOptionsInput,
  type RequestFor,
  type Result,
  type WaitOptions,
} from "../client/index.js";
import { normalizeOptions, resolveForVersion, type ResolvedOptionsFor } from "../api/options.js";
import { readsColumns } from "../api/columns.js";
import { GROUP_CONCURRENCY, mapLimit } from "../internal/group.js";
import { contextFromRequest, display, jupyterKernel, type DisplayContext } from "../display/index.js";
import { keptRequest, toKeptRequest, type FrameInput, type FrameRequest, type FrameSpec } from "../frame/index.js";
import { argumentError, checkArguments, reportArgumentProblems } from "./arguments.js";
import { connect, type Connection } from "./connect.js";
import { PredictionError, analysisLabel, dropStderrEcho, toPredictionError } from "./errors.js";
import { ExperimentPrediction, Prediction, type FailedRow } from "./prediction.js";
import { Progress, type ProgressSetting } from "./progress.js";

/** The columns of a call (outcome, attributes, circumstances) and an optional title. */
export interface PredictionSpec extends FrameSpec {
  /** The title of the prediction in tables, charts and reports (default: "Grid prediction of <outcome>"). */
  title?: string;
}

/** A cell value of a row object: what one circumstance given as `{ Age: 24, ... }` may hold. */
export type CellValue = string | number | boolean | bigint | Date | null | undefined;

/** Theta specs that always give one circumstance: "last", one row position, or one row object. */
export type SingleTheta = "last" | number | Readonly<Record<string, CellValue>>;

/** A spec whose theta is one circumstance (the call returns a Prediction). */
export interface SinglePredictionSpec extends PredictionSpec {
  theta?: SingleTheta;
}

/** How a call runs (not sent to the service). */
export interface RunSettings {
  /** The progress line: "auto" (default), "display", "terminal", "line", "none", or a function of each event. */
  progress?: ProgressSetting;
  /** Cancels the wait (the job goes on in the service). */
  signal?: AbortSignal;
  /** Gives up waiting after this long (ms); default: no limit. */
  timeoutMs?: number;
  /** The connection to use; default: connect(). */
  connection?: Connection;
  /** In a notebook kernel, display a failure in the cell before throwing it (default true). */
  showErrors?: boolean;
  /**
   * A key of the spec, options or run settings that the call does not read (a typo, an option put
   * in the spec) is an error instead of a warning (default false: shown in the cell, or on stderr
   * in a script, and ignored). See arguments.ts.
   */
  strict?: boolean;
}

/** A Prediction or an ExperimentPrediction. */
export type AnyPrediction = Prediction | ExperimentPrediction;

/** Whether a call gave several circumstances' predictions. */
export function isExperiment(p: AnyPrediction): p is ExperimentPrediction {
  return p instanceof ExperimentPrediction;
}

/**
 * Grid: every admissible combination of attributes, censor and threshold, and their
 * adjusted-fit-weighted composite, with each attribute's Impact on Fit and Impact on Prediction.
 * Without theta the service predicts for the last row of X.
 */
export function grid(data: FrameInput, spec?: SinglePredictionSpec, options?: GridOptionsInput, run?: RunSettings): Promise<Prediction>;
export function grid(data: FrameInput, spec?: PredictionSpec, options?: GridOptionsInput, run?: RunSettings): Promise<AnyPrediction>;
export function grid(data: FrameInput, spec: PredictionSpec = {}, options?: GridOptionsInput, run: RunSettings = {}): Promise<AnyPrediction> {
  return predict("grid", data, spec, options, run);
}

/** MaxFit: the threshold and censor with the best objective (kfit by default). Needs theta. */
export function maxfit(data: FrameInput, spec: SinglePredictionSpec, options?: MaxFitOptionsInput, run?: RunSettings): Promise<Prediction>;
export function maxfit(data: FrameInput, spec: PredictionSpec, options?: MaxFitOptionsInput, run?: RunSettings): Promise<AnyPrediction>;
export function maxfit(data: FrameInput, spec: PredictionSpec, options?: MaxFitOptionsInput, run: RunSettings = {}): Promise<AnyPrediction> {
  return predict("maxfit", data, spec, options, run);
}

/** PSR (partial sample regression) at each threshold given (default 0.5). Needs theta. */
export function psr(data: FrameInput, spec: SinglePredictionSpec, options?: PsrOptionsInput, run?: RunSettings): Promise<Prediction>;
export function psr(data: FrameInput, spec: PredictionSpec, options?: PsrOptionsInput, run?: RunSettings): Promise<AnyPrediction>;
export function psr(data: FrameInput, spec: PredictionSpec, options?: PsrOptionsInput, run: RunSettings = {}): Promise<AnyPrediction> {
  return predict("psr", data, spec, options, run);
}

/** Runs one analysis (what grid, maxfit and psr call). */
export async function predict<A extends Analysis>(
  analysis: A,
  data: FrameInput,
  spec: PredictionSpec = {},
  options?: OptionsInputFor[A],
  run: RunSettings = {},
): Promise<AnyPrediction> {
  const label = analysisLabel(analysis);
  const progress = new Progress(analysis, run.progress ?? "auto");
  const startedAt = new Date().toISOString();
  let connection: Connection | undefined;
  try {
    // Where it runs is settled first, so that every later failure is scrubbed with the connection's secrets.
    connection = run.connection ?? (await connect());
    // Plain JavaScript: keys the call does not read are reported (or, strict, refused) before anything is sent.
    const unread = checkArguments(analysis, spec, options, run);
    if (unread.length > 0 && run.strict === true) throw argumentError(analysis, unread);
    reportArgumentProblems(analysis, unread);
    const { title, ...frameSpec } = spec ?? {};
    const frame = toKeptRequest(data, frameSpec);
    frame.notes.push(...unread.filter((u) => u.field.startsWith("spec.")).map((u) => `ignored spec key: ${u.message}`));
    await progress.begin({ service: connection.mode, status: "submitting" });
    const request = {
      y: frame.y,
      X: frame.X,
      ...(frame.theta !== undefined ? { theta: frame.theta } : {}),
      ...(options !== undefined && options !== null ? { options } : {}),
    } as RequestFor<A>;
    const receipt = await connection.client.submit(analysis, request, { signal: run.signal });
    const given = { ...(options ?? {}) } as Record<string, unknown>;
    const resolved = resolvedOf(analysis, given, frame.attributes.length, connection.client.apiVersion);
    const common = { analysis, frame, options: given, resolved, title, connection, progress, run, startedAt };
    // Object.assign, not `{ ...common, receipt }`: V8 gives an object spread and then extended a new shape each time (docs/architecture.md).
    return isExperimentReceipt(receipt) ? await experiment(Object.assign({}, common, { receipt })) : await single(Object.assign({}, common, { receipt }));
  } catch (error) {
    if (progress.started) await progress.end("failed");
    // The connection's settings scrub the failure (a failure to connect was scrubbed by connect itself).
    const by = connection;
    const scrub = (text: string) => (by !== undefined ? by.scrub(text) : text);
    const failure = toPredictionError(error, { subject: label, service: connection?.mode, scrub });
    if (run.showErrors !== false && jupyterKernel() !== "none") {
      try {
        await nextTurn();
        await display(failure.bundle());
        await nextTurn();
        // tslab prints a thrown error again on stderr: shown once is enough (errors.ts).
        if (jupyterKernel() === "tslab") dropStderrEcho(failure);
      } catch {
        // the error is thrown anyway
      }
    }
    throw failure;
  }
}

interface Step<A extends Analysis, R> {
  analysis: A;
  frame: FrameRequest;
  options: Record<string, unknown>;
  /** The options as the service resolved them (undefined if they cannot be read; the service then refused them). */
  resolved: ResolvedOptionsFor<Analysis> | undefined;
  title: string | undefined;
  connection: Connection;
  progress: Progress;
  run: RunSettings;
  receipt: R;
  startedAt: string;
}

/** Where a prediction was computed, for its report: the hosted service's address, or "embedded". */
function serviceUrlOf(connection: Connection): string {
  return connection.mode === "local" ? "embedded" : connection.baseUrl;
}

/** What every Prediction of a call records besides its result (the request, the clock, the service). */
function provenanceOf(s: Step<Analysis, unknown>, theta: number[] | number[][] | undefined) {
  const { frame } = s;
  return {
    // The caller's rows of X when the frame kept them, with their fingerprint (frame/kept.ts).
    request: keptRequest(frame, { y: frame.y, X: frame.X, ...(theta !== undefined ? { theta } : {}), options: s.options }),
    startedAt: s.startedAt,
    serviceUrl: serviceUrlOf(s.connection),
    ...(frame.indexName !== undefined ? { indexName: frame.indexName } : {}),
  };
}

/**
 * The options a job runs with: the caller's options read as the client sends them and resolved as
 * the service resolves them for the connection's API version (threshold_range and stepsize, the
 * defaults, v2's PSR default thresholds): `resolveForVersion` in src/api.
 */
export function resolvedOf(analysis: Analysis, options: Record<string, unknown>, k: number, version: "v2" | "v3"): ResolvedOptionsFor<Analysis> | undefined {
  try {
    return resolveForVersion(analysis, normalizeOptions(analysis, options, "v3").options, k, version);
  } catch {
    return undefined;
  }
}

/**
 * The thresholds a result's calibrations are labelled with: a PSR's and a Grid's as resolved;
 * MaxFit's winner, which v3 states and v2 reports as r_star_percent (r_star in score units), the
 * candidate it equals up to the service's six decimals. Without a result (an experiment), the
 * thresholds as resolved.
 */
export function thresholdsOf(analysis: Analysis, resolved: ResolvedOptionsFor<Analysis> | undefined, result?: Result): number[] | undefined {
  if (resolved === undefined) return result?.thresholds;
  if (analysis !== "maxfit" || result === undefined) return [...resolved.threshold];
  if (result.thresholds !== undefined) return result.thresholds;
  const reported = resolved.censor_unit === "percent" ? result.r_star_percent?.[0] : result.r_star?.[0];
  if (reported === undefined || reported === null) return undefined;
  const winner = resolved.threshold.find((t) => Math.abs(t - reported) <= 5e-7 + 1e-12 * Math.max(1, Math.abs(t)));
  return winner !== undefined ? [winner] : undefined;
}

function contextOf<A extends Analysis>(s: Step<A, unknown>, result?: Result, thetaLabels?: string[]): DisplayContext {
  const { analysis, frame } = s;
  const thresholds = thresholdsOf(analysis, s.resolved, result);
  const context = contextFromRequest(Object.assign({}, frame, { thetaLabels }), { analysis, ...(thresholds !== undefined ? { thresholds } : {}) });
  if (thetaLabels === undefined) delete context.thetaLabels;
  return context;
}

function defaultTitle(analysis: Analysis, outcome: string, thetaLabel?: string): string {
  const base = `${analysisLabel(analysis)} prediction of ${outcome}`;
  return thetaLabel !== undefined && thetaLabel !== "theta" ? `${base} for ${thetaLabel}` : base;
}

function notesOf(frame: FrameRequest, warnings: ReadonlyArray<string> | undefined, result?: Result): string[] {
  const shown = new Set(result?.warnings ?? []);
  return [...frame.notes, ...(warnings ?? []).filter((w) => !shown.has(w))];
}

async function single<A extends Analysis>(s: Step<A, JobReceipt>): Promise<Prediction> {
  const { connection, progress, receipt, frame } = s;
  progress.update({ jobId: receipt.job_id, status: "queued" });
  // The Prediction holds the result compactly: in process it may come with its long columns held (src/api/columns.ts).
  const result = await connection.client.wait(
    receipt,
    readsColumns<WaitOptions>({
      signal: s.run.signal,
      timeoutMs: s.run.timeoutMs,
      onProgress: (p) => progress.update({ status: p.status === "completed" ? "running" : p.status }),
    }),
  );
  const theta = Array.isArray(frame.theta) && !Array.isArray(frame.theta[0]) ? (frame.theta as number[]) : undefined;
  const lastRow = receipt.theta_source === "last_row_of_X" || (theta === undefined && s.analysis === "grid");
  const thetaLabel = theta !== undefined ? frame.thetaLabels?.[0] : lastRow ? `the last row (${frame.rowLabels[frame.rowLabels.length - 1]})` : undefined;
  const elapsedMs = progress.freeze();
  await progress.end("completed");
  return new Prediction({
    analysis: s.analysis,
    title: s.title ?? defaultTitle(s.analysis, frame.outcome, theta !== undefined ? thetaLabel : undefined),
    result,
    context: contextOf(s, result),
    receipt: { job_id: receipt.job_id, job_code: receipt.job_code, ...(receipt.theta_source !== undefined ? { theta_source: receipt.theta_source } : {}) },
    options: s.options,
    notes: notesOf(frame, receipt.warnings, result),
    ...(theta !== undefined ? { theta } : {}),
    ...(thetaLabel !== undefined ? { thetaLabel } : {}),
    elapsedMs,
    service: connection.mode,
    ...provenanceOf(s, theta),
  });
}

async function experiment<A extends Analysis>(s: Step<A, ExperimentReceipt>): Promise<ExperimentPrediction> {
  const { connection, progress, receipt, frame } = s;
  const client = connection.client;
  const total = receipt.n_rows;
  progress.update({ experimentId: receipt.experiment_id, rows: { done: 0, failed: 0, total }, status: "running" });
  const state = await client.waitExperiment(receipt, {
    signal: s.run.signal,
    timeoutMs: s.run.timeoutMs,
    onProgress: (p) => progress.update({ rows: { done: p.done, failed: p.failed, total: p.total }, status: "running" }),
  });
  const thetas = frame.theta as number[][];
  const labels = frame.thetaLabels ?? thetas.map((_, j) => `theta ${j + 1}`);
  const failures: FailedRow[] = [];
  // Fetching the rows' results takes a while for many rows: the line says so, and its clock keeps moving.
  let fetched = 0;
  const finished = { done: state.n_completed + state.n_failed, failed: state.n_failed, total };
  progress.update({ rows: finished, status: "fetching", fetched });
  const results = await mapLimit(state.rows, GROUP_CONCURRENCY, async (row) => {
    if (row.status !== "completed") {
      failures.push({ row: row.row, label: labels[row.row] ?? `theta ${row.row + 1}`, reason: connection.scrub(row.message ?? `the job ended ${row.status}`) });
      return null;
    }
    try {
      const result = await client.result({ job_id: row.job_id, job_code: row.job_code }, readsColumns({ signal: s.run.signal }));
      progress.update({ fetched: ++fetched });
      return result;
    } catch (error) {
      if (!(error instanceof JobFailedError)) throw error;
      failures.push({ row: row.row, label: labels[row.row] ?? `theta ${row.row + 1}`, reason: connection.scrub(error.reason || error.message) });
      return null;
    }
  });
  failures.sort((a, b) => a.row - b.row);
  const elapsedMs = progress.freeze();
  const rows: Prediction[] = [];
  const kept: string[] = [];
  state.rows.forEach((row, j) => {
    const result = results[j];
    if (result === null) return;
    const label = labels[row.row] ?? `theta ${row.row + 1}`;
    kept.push(label);
    rows.push(
      new Prediction({
        analysis: s.analysis,
        // A bare position reads as a count ("for 2"): name it a row.
        title: `${s.title ?? defaultTitle(s.analysis, frame.outcome)} for ${/^\d+$/.test(label) ? `row ${label}` : label}`,
        result,
        context: contextOf(s, result),
        receipt: { job_id: row.job_id, job_code: row.job_code },
        options: s.options,
        notes: [],
        theta: thetas[row.row],
        thetaLabel: label,
        elapsedMs,
        service: connection.mode,
        ...provenanceOf(s, thetas[row.row]),
      }),
    );
  });
  const done = { rows: { done: state.n_completed + state.n_failed, failed: failures.length, total } };
  if (rows.length === 0) {
    await progress.end("failed", done);
    const first = failures[0];
    throw new PredictionError({
      kind: "job-failed",
      subject: analysisLabel(s.analysis),
      detail: `every row of the experiment failed; row ${first?.label ?? 1}: ${first?.reason ?? "no reason given"}`,
    });
  }
  await progress.end(failures.length > 0 ? "partial_failed" : "completed", done);
  return new ExperimentPrediction({
    analysis: s.analysis,
    title: s.title ?? `${analysisLabel(s.analysis)} of ${frame.outcome} for ${total} circumstances`,
    receipt,
    state,
    rows,
    failures,
    context: contextOf(s, undefined, kept),
    options: s.options,
    notes: notesOf(frame, receipt.warnings),
    elapsedMs,
    service: connection.mode,
    ...provenanceOf(s, thetas),
  });
}
