/**
 * `backtest(data, spec, options)`: an honest out-of-sample evaluation of time-ordered data in one
 * call. Every evaluation row is predicted from rows strictly before it, never from itself or a
 * later row, and compared with what happened, beside two baselines on the same information.
 *
 * The plan (docs/research.md):
 * - Rows are in time order (the data's order). Rows whose outcome is missing are dropped first,
 *   as every call does; an evaluation row with a missing attribute is skipped with a note.
 * - Evaluation rows: from `start` (a row position, negative from the end, or a row label) to
 *   `end` (default: the last row).
 * - Training rows: an expanding window (every row before) or, with `window: N`, the N rows before.
 * - `step` (default 1): the training window moves every `step` rows. The evaluation rows of one
 *   step share their training rows (those strictly before the first of them) and go to the
 *   service as one request: one job for one row, an experiment for several. With `step: 1` every
 *   row sees all of its past; a larger step trades that for fewer, larger requests.
 * - Baselines: ordinary least squares with an intercept on the same training rows (complete rows
 *   only), and, when `lagged` names the outcome's last known value (today's value of tomorrow's
 *   outcome), persistence. The direction of change is measured from the lagged value, else from
 *   the previous row's outcome.
 * - Cost: one job and one quota unit per evaluation row. Locally (the embedded service, v3) the
 *   steps go through the service's in-process lane (service/lane.ts): checked, paid and stored as
 *   their POSTs would be, all or nothing, the data shared with the worker pool instead of sent,
 *   each forecast read from its job's yhat and its Prediction built when first read. Against the
 *   hosted service (or v2) each step is a POST: the call first says how many requests, jobs and
 *   units it will spend, checks the quota, and above `confirmAbove` units (default 100) refuses
 *   without `confirm: true`.
 */
import { availableParallelism } from "node:os";
import type { Analysis, GridOptionsInput, MaxFitOptionsInput, PsrOptionsInput } from "../client/index.js";
import { mapLimit } from "../internal/group.js";
import {
  cellValue,
  JUPYTER_DISPLAY,
  RBP_BUNDLE,
  escapeHtml,
  formatCount,
  formatNumber,
  htmlBundle,
  TABLE_CSS,
  textTable,
  type Figure,
  type MimeBundle,
} from "../display/index.js";
import { toRequest, type FrameInput } from "../frame/index.js";
import { outputFrame, writeFrameCsv, type FrameColumns, type ToFrameOptions } from "../frame/index.js";
import { connect, type Connection, type ServiceKind } from "./connect.js";
import { displayFigure, displayTable, type DisplayFigure, type DisplayTable } from "./displayable.js";
import { PredictionError, analysisLabel, toPredictionError } from "./errors.js";
import { ExperimentPrediction, Prediction, showAll, type FrameOut } from "./prediction.js";
import { Progress } from "./progress.js";
import { predict, resolvedOf, thresholdsOf, type RunSettings } from "./run.js";
import { fromOwnV3Results } from "../api/result.js";
import { InvalidInputError } from "../engine/errors.js";
import { laneAt, LaneWindowError, ServiceError, type Lane, type LaneSubmitted } from "../service/index.js";

/** The columns of a backtest: the outcome, the attributes, the row labels and the lagged outcome. */
export interface BacktestSpec {
  /** The outcome column (required for tables). */
  y?: string;
  /** The attribute columns (default: every other numeric column but `index`; `lagged` is an attribute unless X leaves it out). */
  X?: string | ReadonlyArray<string>;
  /** A column of row labels (a date): it labels every row of the table, the charts and toFrame(). */
  index?: string;
  /** A column holding the outcome's last known value at each row: the persistence baseline and the reference for the direction of change. */
  lagged?: string;
  /** The title of the table and charts (default: "Backtest of <analysis> on <outcome>"). */
  title?: string;
}

/** How a backtest runs. */
export interface BacktestOptions<A extends Analysis = Analysis> {
  /** psr (default), maxfit or grid. */
  analysis?: A;
  /** The analysis' options, as for psr/maxfit/grid. */
  options?: A extends "grid" ? GridOptionsInput : A extends "maxfit" ? MaxFitOptionsInput : PsrOptionsInput;
  /** The first evaluation row: a position (negative from the end) or a row label. Default: the first row with `minTrain` rows before it. */
  start?: number | string;
  /** The last evaluation row: a position or a label. Default: the last row. */
  end?: number | string;
  /** A rolling window of this many rows before each step; default: expanding (every row before). */
  window?: number;
  /** Evaluation rows per training window (default 1: each row sees all of its past). */
  step?: number;
  /** The fewest training rows a prediction is made from (default: the number of attributes + 2). */
  minTrain?: number;
  /** Which calibration's yhat is the forecast: a position (default 0, the first: `p.yhat`) or "best" (the largest adjusted fit). */
  calibration?: number | "best";
  /** Required above `confirmAbove` quota units on the hosted service. */
  confirm?: boolean;
  /** Quota units above which the hosted service needs `confirm: true` (default 100). */
  confirmAbove?: number;
  /** Requests in flight at once over HTTP (default: hosted, 8; a local v2 connection, twice the cores, at most 16). The embedded service's lane takes every step at once; its worker pool bounds what runs. */
  concurrency?: number;
  /** The connection; default: connect(). */
  connection?: Connection;
  /** The progress line: "auto" (default), "none", or a function of each event (see RunSettings). */
  progress?: RunSettings["progress"];
  signal?: AbortSignal;
  /** Where the plan's sentence goes (default: console.log). */
  log?: (line: string) => void;
}

/** What a backtest will spend, said before it submits. */
export interface BacktestPlan {
  /** Evaluation rows (one job and one quota unit each). */
  jobs: number;
  /** POSTs: one per step. */
  requests: number;
  units: number;
  service: ServiceKind;
}

/** One evaluation row. */
export interface BacktestRow {
  label: string;
  /** Position among the rows kept (those with an outcome). */
  position: number;
  actual: number;
  predicted: number | null;
  /** OLS on the same training rows (null when their attributes are collinear). */
  regression: number | null;
  /** The lagged outcome (null without `lagged`, or where it is missing). */
  persistence: number | null;
  /** The reference of the direction of change: the lagged outcome, else the previous row's outcome. */
  reference: number | null;
  /** Training rows used. */
  trainRows: number;
  /** Label of the first and last training row. */
  trainFrom: string;
  trainTo: string;
}

/** Accuracy of one forecaster over the evaluation rows it forecast. */
export interface BacktestMetrics {
  forecaster: string;
  /** Rows forecast (a null forecast is not counted). */
  n: number;
  mae: number | null;
  rmse: number | null;
  /** Pearson correlation of forecasts and actuals. */
  correlation: number | null;
  /**
   * Share of rows whose forecast moved from the reference in the direction the outcome did (rows
   * where the outcome did not move are left out; a forecast of no change is a miss). Null for
   * persistence, which never forecasts a change.
   */
  hitRate: number | null;
}

/** The result of `backtest()`: predictions against actuals, metrics, a table and two charts. */
export class Backtest {
  readonly analysis: Analysis;
  readonly title: string;
  readonly outcome: string;
  /** One per evaluation row, in time order. */
  readonly rows: ReadonlyArray<BacktestRow>;
  /** The model, linear regression and (with `lagged`) persistence. */
  readonly metrics: ReadonlyArray<BacktestMetrics>;
  readonly #predictions: () => ReadonlyArray<Prediction>;
  readonly plan: BacktestPlan;
  readonly notes: ReadonlyArray<string>;
  readonly elapsedMs: number;
  readonly #indexName: string;
  readonly #hasLagged: boolean;

  constructor(init: {
    analysis: Analysis;
    title: string;
    outcome: string;
    rows: BacktestRow[];
    /** The Predictions, or how to make them when first read (the local lane parses each result only then). */
    predictions: Prediction[] | (() => Prediction[]);
    plan: BacktestPlan;
    notes: string[];
    elapsedMs: number;
    indexName: string;
    hasLagged: boolean;
  }) {
    this.analysis = init.analysis;
    this.title = init.title;
    this.outcome = init.outcome;
    this.rows = init.rows;
    const make = init.predictions;
    let made: Prediction[] | undefined = typeof make === "function" ? undefined : make;
    this.#predictions = () => (made ??= (make as () => Prediction[])());
    this.plan = init.plan;
    this.notes = init.notes;
    this.elapsedMs = init.elapsedMs;
    this.#indexName = init.indexName;
    this.#hasLagged = init.hasLagged;
    const m = [
      metricsOf(analysisLabel(init.analysis), init.rows, (r) => r.predicted),
      metricsOf("linear regression (same window)", init.rows, (r) => r.regression),
    ];
    // Persistence forecasts no change: it has no direction to hit.
    if (init.hasLagged) m.push({ ...metricsOf("persistence", init.rows, (r) => r.persistence), hitRate: null });
    this.metrics = m;
  }

  /** The Prediction of every evaluation row (its weights, relevance, report), in row order. */
  get predictions(): ReadonlyArray<Prediction> {
    return this.#predictions();
  }

  /** The row labels (dates) of the evaluation rows. */
  get labels(): string[] {
    return this.rows.map((r) => r.label);
  }
  get actual(): number[] {
    return this.rows.map((r) => r.actual);
  }
  get predicted(): Array<number | null> {
    return this.rows.map((r) => r.predicted);
  }

  /** The metrics as a table: forecasts, MAE, RMSE, correlation, hit rate per forecaster. */
  table(): DisplayTable {
    const header = ["forecaster", "forecasts", "MAE", "RMSE", "correlation", "hit rate"];
    const rows = this.metrics.map((m) => [
      m.forecaster,
      formatCount(m.n),
      fmt(m.mae),
      fmt(m.rmse),
      fmt(m.correlation),
      m.hitRate === null ? "—" : `${(100 * m.hitRate).toFixed(1)} %`,
    ]);
    const caption = `${this.title}: ${formatCount(this.rows.length)} rows, ${this.rows[0]?.label ?? ""} to ${this.rows[this.rows.length - 1]?.label ?? ""}`;
    const html =
      `<style>${TABLE_CSS}</style><table class="rbp-table"><caption>${escapeHtml(caption)}</caption><thead><tr>${header.map((h) => `<th>${escapeHtml(h)}</th>`).join("")}</tr></thead>` +
      `<tbody>${rows.map((r) => `<tr>${r.map((c) => `<td>${escapeHtml(c)}</td>`).join("")}</tr>`).join("")}</tbody></table>`;
    return displayTable({ html, text: `${caption}\n${textTable(header, rows)}` });
  }

  /** Actual against predicted over time, with the baselines. */
  chart(options: { height?: number } = {}): DisplayFigure {
    const x = this.labels;
    const data: Figure["data"] = [
      { type: "scatter", mode: "lines+markers", name: "actual", x, y: this.actual, line: { color: "#222" } },
      { type: "scatter", mode: "lines", name: analysisLabel(this.analysis), x, y: this.predicted, line: { color: "#1f77b4" } },
      { type: "scatter", mode: "lines", name: "linear regression", x, y: this.rows.map((r) => r.regression), line: { color: "#ff7f0e", dash: "dot" } },
    ];
    if (this.#hasLagged)
      data.push({ type: "scatter", mode: "lines", name: "persistence", x, y: this.rows.map((r) => r.persistence), line: { color: "#2ca02c", dash: "dash" } });
    return displayFigure({
      data,
      layout: {
        title: { text: `${this.title}: actual and predicted` },
        xaxis: { title: { text: this.#indexName } },
        yaxis: { title: { text: this.outcome } },
        height: options.height ?? 380,
      },
    });
  }

  /** Cumulative absolute error over time, per forecaster (the steeper, the worse). */
  errorChart(options: { height?: number } = {}): DisplayFigure {
    const x = this.labels;
    const cumulative = (pick: (r: BacktestRow) => number | null): number[] => {
      let sum = 0;
      return this.rows.map((r) => {
        const f = pick(r);
        if (f !== null) sum += Math.abs(f - r.actual);
        return sum;
      });
    };
    const data: Figure["data"] = [
      { type: "scatter", mode: "lines", name: analysisLabel(this.analysis), x, y: cumulative((r) => r.predicted), line: { color: "#1f77b4" } },
      { type: "scatter", mode: "lines", name: "linear regression", x, y: cumulative((r) => r.regression), line: { color: "#ff7f0e", dash: "dot" } },
    ];
    if (this.#hasLagged)
      data.push({ type: "scatter", mode: "lines", name: "persistence", x, y: cumulative((r) => r.persistence), line: { color: "#2ca02c", dash: "dash" } });
    return displayFigure({
      data,
      layout: {
        title: { text: `${this.title}: cumulative absolute error` },
        xaxis: { title: { text: this.#indexName } },
        yaxis: { title: { text: `sum of |error| (${this.outcome})` } },
        height: options.height ?? 340,
      },
    });
  }

  /** Displays the notes, the metrics table and both charts (prints the table outside a notebook). */
  show(): Promise<void> | undefined {
    return showAll(this.#bundles(), this.text());
  }

  /** One row per evaluation row, indexed by its label: actual, predicted, regression, persistence, training rows. */
  toFrame(options: ToFrameOptions = {}): FrameOut {
    return outputFrame(this.#columns(), options);
  }

  /** Writes toFrame()'s rows as CSV; returns the absolute path. */
  toCSV(path: string): Promise<string> {
    return writeFrameCsv(this.#columns(), path);
  }

  text(): string {
    const lines = [
      `${this.title}: ${formatCount(this.rows.length)} forecasts, ${formatCount(this.plan.jobs)} jobs on the ${this.plan.service} service`,
      this.table().text,
    ];
    for (const n of this.notes) lines.push(`Note: ${n}`);
    return lines.join("\n");
  }

  /** The notes, table and both charts as one bundle. */
  [RBP_BUNDLE](): MimeBundle {
    const bundles = this.#bundles();
    return { "text/html": bundles.map((b) => String(b["text/html"] ?? "")).join(""), "text/plain": this.text() };
  }

  [JUPYTER_DISPLAY](): MimeBundle | Promise<MimeBundle> {
    return cellValue(this[RBP_BUNDLE]());
  }

  toJSON(): Record<string, unknown> {
    return {
      analysis: this.analysis,
      title: this.title,
      outcome: this.outcome,
      plan: this.plan,
      metrics: this.metrics,
      rows: this.rows,
      notes: this.notes,
      elapsedMs: this.elapsedMs,
    };
  }

  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return this.text();
  }

  #bundles(): MimeBundle[] {
    const out: MimeBundle[] = [];
    if (this.notes.length > 0)
      out.push(
        htmlBundle(`<p class="rbp-notes">${this.notes.map((n) => `Note: ${escapeHtml(n)}`).join("<br>")}</p>`, this.notes.map((n) => `Note: ${n}`).join("\n")),
      );
    out.push(this.table()[RBP_BUNDLE](), this.chart()[RBP_BUNDLE](), this.errorChart()[RBP_BUNDLE]());
    return out;
  }

  #columns(): FrameColumns {
    const columns = ["actual", "predicted", "regression", ...(this.#hasLagged ? ["persistence"] : []), "train_rows", "train_from", "train_to"];
    const r = this.rows;
    return {
      indexName: this.#indexName,
      index: this.labels,
      columns,
      data: {
        actual: r.map((x) => x.actual),
        predicted: r.map((x) => x.predicted),
        regression: r.map((x) => x.regression),
        persistence: r.map((x) => x.persistence),
        train_rows: r.map((x) => x.trainRows),
        train_from: r.map((x) => x.trainFrom),
        train_to: r.map((x) => x.trainTo),
      },
    };
  }
}

/** One evaluation row's forecast: its yhat per calibration, and its Prediction (made when first asked for). */
interface Forecast {
  thetaLabel: string | undefined;
  yhat: ReadonlyArray<number | null>;
  prediction(): Prediction;
}

function forecastOf(p: Prediction): Forecast {
  return { thetaLabel: p.thetaLabel, yhat: p.result.yhat, prediction: () => p };
}

function fmt(v: number | null): string {
  return v === null ? "—" : formatNumber(v, 4);
}

/** MAE, RMSE, correlation and hit rate of one forecaster. */
export function metricsOf(forecaster: string, rows: ReadonlyArray<BacktestRow>, pick: (r: BacktestRow) => number | null): BacktestMetrics {
  const pairs = rows.flatMap((r) => {
    const f = pick(r);
    return f === null || !Number.isFinite(f) ? [] : [{ f, a: r.actual, ref: r.reference }];
  });
  const n = pairs.length;
  if (n === 0) return { forecaster, n, mae: null, rmse: null, correlation: null, hitRate: null };
  let abs = 0;
  let sq = 0;
  for (const { f, a } of pairs) {
    abs += Math.abs(f - a);
    sq += (f - a) ** 2;
  }
  const mf = pairs.reduce((s, p) => s + p.f, 0) / n;
  const ma = pairs.reduce((s, p) => s + p.a, 0) / n;
  let sfa = 0;
  let sff = 0;
  let saa = 0;
  for (const { f, a } of pairs) {
    sfa += (f - mf) * (a - ma);
    sff += (f - mf) ** 2;
    saa += (a - ma) ** 2;
  }
  const correlation = sff > 0 && saa > 0 ? sfa / Math.sqrt(sff * saa) : null;
  const moved = pairs.filter((p) => p.ref !== null && p.a !== p.ref);
  const hits = moved.filter((p) => Math.sign(p.f - (p.ref as number)) === Math.sign(p.a - (p.ref as number))).length;
  return { forecaster, n, mae: abs / n, rmse: Math.sqrt(sq / n), correlation, hitRate: moved.length > 0 ? hits / moved.length : null };
}

/**
 * Ordinary least squares with an intercept on the complete rows, evaluated at theta; null when
 * there are fewer complete rows than coefficients or the attributes are collinear.
 */
export function olsPredict(y: ReadonlyArray<number>, X: ReadonlyArray<ReadonlyArray<number | null>>, theta: ReadonlyArray<number>): number | null {
  const normal = new NormalEquations(theta.length);
  normal.add(y, X, 0, y.length);
  return normal.predict(theta);
}

/**
 * The normal equations of OLS with an intercept, summed row by row (complete rows only). Adding
 * rows [0, a) and then [a, b) sums in the same order as adding [0, b) at once: an expanding
 * window's equations grow from the previous step's, with the same numbers as summed anew.
 */
class NormalEquations {
  readonly #P: number;
  readonly #A: Float64Array[];
  #rows = 0;

  constructor(K: number, from?: NormalEquations) {
    this.#P = K + 1;
    this.#A = from !== undefined ? from.#A.map((r) => r.slice()) : Array.from({ length: K + 1 }, () => new Float64Array(K + 2));
    this.#rows = from !== undefined ? from.#rows : 0;
  }

  add(y: ReadonlyArray<number>, X: ReadonlyArray<ReadonlyArray<number | null>>, from: number, to: number): void {
    const P = this.#P;
    const A = this.#A;
    for (let i = from; i < to; i++) {
      const x = X[i];
      if (x.some((v) => v === null)) continue;
      this.#rows++;
      const z = [1, ...(x as number[])];
      for (let a = 0; a < P; a++) {
        for (let b = 0; b < P; b++) A[a][b] += z[a] * z[b];
        A[a][P] += z[a] * y[i];
      }
    }
  }

  /** The fit at theta (the equations are kept: the elimination works on a copy). */
  predict(theta: ReadonlyArray<number>): number | null {
    const K = theta.length;
    const P = this.#P;
    if (this.#rows < P) return null;
    const A = this.#A.map((r) => r.slice());
    // Gaussian elimination with partial pivoting on the normal equations.
    const scale = Math.max(...A.map((r, a) => Math.abs(r[a])), 1e-300);
    for (let c = 0; c < P; c++) {
      let p = c;
      for (let r = c + 1; r < P; r++) if (Math.abs(A[r][c]) > Math.abs(A[p][c])) p = r;
      if (Math.abs(A[p][c]) <= 1e-12 * scale) return null;
      [A[c], A[p]] = [A[p], A[c]];
      for (let r = 0; r < P; r++) {
        if (r === c) continue;
        const f = A[r][c] / A[c][c];
        if (f !== 0) for (let k = c; k <= P; k++) A[r][k] -= f * A[c][k];
      }
    }
    let yhat = A[0][P] / A[0][0];
    for (let j = 0; j < K; j++) yhat += (A[j + 1][P] / A[j + 1][j + 1]) * theta[j];
    return Number.isFinite(yhat) ? yhat : null;
  }
}

/**
 * The regression baseline of every step: OLS on the step's training rows. An expanding window's
 * equations are carried from step to step (each row summed once, the same numbers as anew); a
 * rolling window's are summed over its rows.
 */
function regressionBaselines(
  y: ReadonlyArray<number>,
  X: ReadonlyArray<ReadonlyArray<number | null>>,
  chunks: ReadonlyArray<{ from: number; to: number }>,
  expanding: boolean,
): Array<(theta: ReadonlyArray<number>) => number | null> {
  const K = X[0]?.length ?? 0;
  let running = new NormalEquations(K);
  let at = 0;
  return chunks.map(({ from, to }) => {
    let normal: NormalEquations;
    if (expanding && from === 0 && to >= at) {
      running.add(y, X, at, to);
      at = to;
      normal = running;
      running = new NormalEquations(K, running);
    } else {
      normal = new NormalEquations(K);
      normal.add(y, X, from, to);
    }
    return (theta) => normal.predict(theta);
  });
}

/** A refusal of the in-process lane (nothing was charged) as the error `predict` would have thrown for that step. */
function laneRefusal(error: unknown, labelOf: (window: number) => string): PredictionError {
  if (error instanceof InvalidInputError) {
    // A refused window names its step; the table as a whole (LaneWindowError's parent) does not.
    const step = error instanceof LaneWindowError ? `the step from row ${labelOf(error.window)}: ` : "";
    return new PredictionError({
      kind: "invalid-request",
      subject: "backtest",
      detail: `${step}${error.message}`,
      field: error.field,
      hint: "Nothing was submitted or charged.",
      cause: error,
    });
  }
  if (error instanceof ServiceError && error.status === 429)
    return new PredictionError({
      kind: "quota",
      subject: "backtest",
      detail: error.message,
      status: 429,
      hint: "Nothing was charged. quota() shows what is left of the plan.",
      cause: error,
    });
  return toPredictionError(error, { subject: "backtest", service: "local", scrub: (text) => text });
}

function usage(detail: string, hint?: string): PredictionError {
  return new PredictionError({ kind: "usage", subject: "backtest", detail, ...(hint !== undefined ? { hint } : {}) });
}

function positionOf(at: number | string, labels: ReadonlyArray<string>, what: string): number {
  if (typeof at === "number") {
    if (!Number.isInteger(at) || at >= labels.length || at < -labels.length)
      throw usage(`${what}: row position ${at} is not a row of the data (0 to ${labels.length - 1}, or negative from the end)`);
    return at < 0 ? labels.length + at : at;
  }
  const i = labels.indexOf(String(at));
  if (i < 0) throw usage(`${what}: no row is labelled "${at}"`, "Name the label column with spec.index, or give a row position.");
  return i;
}

function positiveInteger(v: unknown, name: string): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1) throw usage(`${name} must be a positive integer, got ${String(v)}`);
  return v;
}

/**
 * Backtests an analysis on time-ordered data: each evaluation row predicted from the rows
 * strictly before it, against what happened and two baselines.
 *
 * @example
 * const bt = await rbp.backtest(days, { y: "tomorrow_max", X: attributes, index: "date", lagged: "temp_max" },
 *   { analysis: "psr", options: { threshold: 0.8 }, start: "2015-01-01", end: "2015-01-31" });
 * await bt.show();      // metrics table, actual vs predicted, cumulative error
 * bt.metrics[0].mae;    // the model's MAE
 */
export async function backtest<A extends Analysis = "psr">(data: FrameInput, spec: BacktestSpec, options: BacktestOptions<A> = {}): Promise<Backtest> {
  const started = Date.now();
  const analysis = (options.analysis ?? "psr") as Analysis;
  if (!["psr", "maxfit", "grid"].includes(analysis)) throw usage(`analysis must be psr, maxfit or grid, got ${String(analysis)}`);
  const frame = toRequest(data, {
    ...(spec.y !== undefined ? { y: spec.y } : {}),
    ...(spec.X !== undefined ? { X: spec.X } : {}),
    ...(spec.index !== undefined ? { index: spec.index } : {}),
  });
  const K = frame.attributes.length;
  const N = frame.y.length;
  const labels = frame.rowLabels;
  const notes = [...frame.notes];

  let lagged: Array<number | null> | undefined;
  if (spec.lagged !== undefined) {
    const lag = toRequest(data, { y: frame.outcome, X: [spec.lagged], ...(spec.index !== undefined ? { index: spec.index } : {}) });
    lagged = lag.X.map((row) => row[0]);
  }

  const window = positiveInteger(options.window, "window");
  const step = positiveInteger(options.step, "step") ?? 1;
  const minTrain = positiveInteger(options.minTrain, "minTrain") ?? K + 2;
  if (window !== undefined && window < minTrain)
    throw usage(`window (${window}) is smaller than minTrain (${minTrain})`, "A window needs at least the number of attributes + 2 rows.");
  const start = options.start !== undefined ? positionOf(options.start, labels, "start") : minTrain;
  const end = options.end !== undefined ? positionOf(options.end, labels, "end") : N - 1;
  if (start < minTrain) throw usage(`start (row ${labels[start] ?? start}) has ${start} rows before it; at least ${minTrain} (minTrain) are needed`);
  if (start > end) throw usage(`start (row ${labels[start] ?? start}) comes after end (row ${labels[end] ?? end})`);
  const calibration = options.calibration ?? 0;
  if (calibration !== "best" && (!Number.isInteger(calibration) || calibration < 0))
    throw usage(`calibration must be a non-negative integer or "best", got ${String(calibration)}`);

  // The steps: evaluation rows sharing one training window.
  interface Chunk {
    from: number; // first training row
    to: number; // one past the last training row (the first evaluation row)
    rows: number[];
  }
  const chunks: Chunk[] = [];
  const skipped: string[] = [];
  for (let s = start; s <= end; s += step) {
    const rows: number[] = [];
    for (let i = s; i < Math.min(s + step, end + 1); i++) {
      if (frame.X[i].some((v) => v === null)) skipped.push(labels[i]);
      else rows.push(i);
    }
    if (rows.length > 0) chunks.push({ from: window !== undefined ? Math.max(0, s - window) : 0, to: s, rows });
  }
  if (skipped.length > 0)
    notes.push(
      `skipped ${skipped.length === 1 ? "an evaluation row" : `${skipped.length} evaluation rows`} with a missing attribute: ${skipped.slice(0, 10).join(", ")}${skipped.length > 10 ? ", ..." : ""}`,
    );
  if (chunks.length === 0) throw usage("no evaluation row has every attribute");

  const connection = options.connection ?? (await connect());
  const jobs = chunks.reduce((s, c) => s + c.rows.length, 0);
  const plan: BacktestPlan = { jobs, requests: chunks.length, units: jobs, service: connection.mode };
  if (connection.mode === "hosted") {
    const log = options.log ?? ((line: string) => console.log(line));
    log(
      `backtest: ${formatCount(jobs)} predictions in ${formatCount(chunks.length)} requests: ${formatCount(jobs)} jobs, ${formatCount(jobs)} quota units on the hosted service at ${connection.baseUrl}`,
    );
    const threshold = options.confirmAbove ?? 100;
    if (jobs > threshold && options.confirm !== true) {
      throw usage(
        `this backtest would spend ${formatCount(jobs)} quota units on the hosted service (more than ${formatCount(threshold)}); nothing was submitted`,
        "Pass confirm: true to spend them, or a larger step or later start for fewer jobs.",
      );
    }
    const quota = await connection.quota();
    if (quota.remaining < jobs) {
      throw usage(
        `this backtest needs ${formatCount(jobs)} quota units but the plan has ${formatCount(quota.remaining)} left; nothing was submitted`,
        "Start later, or end earlier, for fewer jobs.",
      );
    }
  }

  const indexName = spec.index ?? "label";
  const labelKey = [indexName, `${indexName}_`, "__label"].find((n) => n !== frame.outcome && !frame.attributes.includes(n)) ?? "__rbp_label";
  const columnsOf = (positions: ReadonlyArray<number>, withOutcome: boolean): Record<string, unknown[]> => {
    const cols: Record<string, unknown[]> = { [labelKey]: positions.map((i) => labels[i]) };
    if (withOutcome) cols[frame.outcome] = positions.map((i) => frame.y[i]);
    frame.attributes.forEach((name, j) => (cols[name] = positions.map((i) => frame.X[i][j])));
    return cols;
  };

  const local = connection.mode === "local";
  const concurrency = positiveInteger(options.concurrency, "concurrency") ?? (local ? Math.min(16, 2 * availableParallelism()) : 8);
  // One progress line for the whole backtest (the rows: evaluation rows forecast so far).
  const progress = new Progress(analysis, options.progress ?? "auto");
  progress.update({ service: connection.mode, status: "running", rows: { done: 0, failed: 0, total: jobs } });
  const title = spec.title ?? `Backtest of ${analysisLabel(analysis)} on ${frame.outcome}`;
  const baselines = regressionBaselines(frame.y, frame.X, chunks, window === undefined);

  // The embedded service of this process (v3): its in-process lane, the table shared by every window.
  const lane = local && connection.apiVersion === "v3" ? laneAt(connection.baseUrl) : undefined;
  const run: Promise<Forecast[][]> = lane !== undefined ? viaLane(lane) : viaHttp().then((ps) => ps.map((row) => row.map(forecastOf)));
  const predicted = await run.catch((error: unknown) => {
    progress.finish("failed");
    throw error;
  });

  /** Every step as a request through the client (the hosted service, or v2), `concurrency` at a time. */
  function viaHttp(): Promise<Prediction[][]> {
    let done = 0;
    return mapLimit(chunks, concurrency, async (chunk) => {
      const train = Array.from({ length: chunk.to - chunk.from }, (_, k) => chunk.from + k);
      const p = await predict(
        analysis,
        columnsOf(train, true) as never,
        { y: frame.outcome, X: frame.attributes, index: labelKey, theta: columnsOf(chunk.rows, false) as never, title },
        options.options as never,
        { progress: "none", connection, showErrors: false, ...(options.signal !== undefined ? { signal: options.signal } : {}) },
      );
      done += chunk.rows.length;
      progress.update({ rows: { done, failed: 0, total: jobs } });
      return p instanceof ExperimentPrediction ? [...p.rows] : [p];
    });
  }

  /**
   * Every step as one request of the embedded service's in-process lane (service/lane.ts): checked,
   * paid and stored as the same POST would be (one job and one unit per evaluation row), all at
   * once, the data shared instead of sent; each Prediction built as `predict` builds it.
   */
  async function viaLane(lane: Lane): Promise<Forecast[][]> {
    const startedAt = new Date().toISOString();
    const given = { ...((options.options as Record<string, unknown> | undefined) ?? {}) };
    const resolved = resolvedOf(analysis, given, K, "v3");
    let submitted: LaneSubmitted[];
    try {
      submitted = await lane.submit(
        {
          analysis,
          y: frame.y,
          X: frame.X,
          options: given,
          windows: chunks.map((c) => ({ from: c.from, to: c.to, thetas: c.rows.map((i) => frame.X[i] as number[]) })),
        },
        { ...(options.signal !== undefined ? { signal: options.signal } : {}) },
      );
    } catch (error) {
      throw laneRefusal(error, (n) => labels[chunks[n].rows[0]]);
    }
    let done = 0;
    let failedRows = 0;
    const t0 = performance.now();
    return Promise.all(
      submitted.map(async (w, c) => {
        const chunk = chunks[c];
        const ended = await w.rows;
        const elapsedMs = Math.round(performance.now() - t0);
        const y = frame.y.slice(chunk.from, chunk.to);
        const X = frame.X.slice(chunk.from, chunk.to);
        const rowLabels = labels.slice(chunk.from, chunk.to);
        const experiment = w.experiment !== undefined;
        const out: Forecast[] = [];
        for (const row of ended) {
          const i = chunk.rows[row.row];
          if (row.status === "failed") {
            if (!experiment || ended.every((r) => r.status === "failed"))
              throw new PredictionError({
                kind: "job-failed",
                subject: analysisLabel(analysis),
                detail: `${experiment ? "every row of the experiment failed; " : ""}row ${labels[i]}: ${row.reason}`,
                jobId: row.job_id,
              });
            failedRows++;
            continue;
          }
          const theta = frame.X[i] as number[];
          const { json, job_id, job_code } = row;
          // Built, and its result parsed, when first read (bt.predictions); the forecast needs only yhat.
          const build = (): Prediction => {
            const result = fromOwnV3Results(JSON.parse(json));
            const thresholds = thresholdsOf(analysis, resolved, result);
            const shown = new Set(result.warnings ?? []);
            return new Prediction({
              analysis,
              title: experiment ? `${title} for ${/^\d+$/.test(labels[i]) ? `row ${labels[i]}` : labels[i]}` : title,
              result,
              context: { outcome: frame.outcome, attributes: frame.attributes, y, rowLabels, analysis, ...(thresholds !== undefined ? { thresholds } : {}) },
              receipt: { job_id, job_code },
              options: given,
              notes: experiment ? [] : w.warnings.filter((n) => !shown.has(n)),
              theta,
              thetaLabel: labels[i],
              elapsedMs,
              service: "local",
              request: { y, X, theta, options: given },
              startedAt,
              serviceUrl: "embedded",
              indexName: labelKey,
            });
          };
          let made: Prediction | undefined;
          out.push({ thetaLabel: labels[i], yhat: row.yhat, prediction: () => (made ??= build()) });
        }
        done += chunk.rows.length;
        progress.update({ rows: { done, failed: failedRows, total: jobs } });
        return out;
      }),
    );
  }

  const rows: BacktestRow[] = [];
  const forecasts: Forecast[] = [];
  chunks.forEach((chunk, c) => {
    const ps = predicted[c];
    chunk.rows.forEach((i, j) => {
      const p = ps.find((q) => q.thetaLabel === labels[i]) ?? ps[j];
      if (p === undefined) return; // a failed row of an experiment
      forecasts.push(p);
      const t = calibration === "best" ? p.prediction().best.index : calibration;
      if (t >= p.yhat.length) throw usage(`calibration ${t} is not one of the result's (0 to ${p.yhat.length - 1})`);
      const persistence = lagged?.[i] ?? null;
      rows.push({
        label: labels[i],
        position: i,
        actual: frame.y[i],
        predicted: p.yhat[t] ?? null,
        regression: baselines[c](frame.X[i] as number[]),
        persistence,
        reference: lagged !== undefined ? persistence : i > 0 ? frame.y[i - 1] : null,
        trainRows: chunk.to - chunk.from,
        trainFrom: labels[chunk.from],
        trainTo: labels[chunk.to - 1],
      });
    });
  });
  const failed = jobs - rows.length;
  progress.finish(failed > 0 ? "partial_failed" : "completed", { rows: { done: jobs, failed, total: jobs } });
  if (failed > 0) notes.push(`${formatCount(failed)} ${failed === 1 ? "row" : "rows"} failed on the service and ${failed === 1 ? "is" : "are"} left out`);
  return new Backtest({
    analysis,
    title,
    outcome: frame.outcome,
    rows,
    predictions: () => forecasts.map((f) => f.prediction()),
    plan,
    notes,
    elapsedMs: Date.now() - started,
    indexName,
    hasLagged: lagged !== undefined,
  });
}
