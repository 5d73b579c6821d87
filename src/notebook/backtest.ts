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
 *
 * By role: backtest-plan.ts makes the steps from the arguments; engine/baseline.ts is the
 * regression baseline; backtest-transport.ts runs the steps (one interface: the embedded
 * connection's lane, or the client); backtest-metrics.ts scores the forecasters;
 * display/backtest-views.ts draws the result. This file holds the result (`Backtest`) and the
 * runner that ties them together.
 */
import type { Analysis, GridOptionsInput, MaxFitOptionsInput, PsrOptionsInput } from "../client/index.js";
import {
  backtestColumns,
  backtestErrorFigure,
  backtestFigure,
  backtestNotes,
  backtestTable,
  backtestText,
  cellValue,
  formatCount,
  JUPYTER_DISPLAY,
  RBP_BUNDLE,
  showAll,
  type BacktestView,
  type MimeBundle,
} from "../display/index.js";
import { regressionBaselines } from "../engine/baseline.js";
import { toRequest, type FrameInput } from "../frame/index.js";
import { outputFrame, writeFrameCsv, type FrameColumns, type ToFrameOptions } from "../frame/index.js";
import { backtestMetrics, type BacktestMetrics, type BacktestRow } from "./backtest-metrics.js";
import { planSteps, usage, type Step } from "./backtest-plan.js";
import { transportOf, type Forecast, type StepTable } from "./backtest-transport.js";
import { connect, type Connection, type ServiceKind } from "./connect.js";
import { displayFigure, displayTable, type DisplayFigure, type DisplayTable } from "./displayable.js";
import { analysisLabel } from "./errors.js";
import { Prediction, type FrameOut } from "./prediction.js";
import { Progress } from "./progress.js";
import type { RunSettings } from "./run.js";

export type { BacktestMetrics, BacktestRow } from "./backtest-metrics.js";

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
    this.metrics = backtestMetrics(init.analysis, init.rows, init.hasLagged);
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
    return displayTable(backtestTable(this.#view()));
  }

  /** Actual against predicted over time, with the baselines. */
  chart(options: { height?: number } = {}): DisplayFigure {
    return displayFigure(backtestFigure(this.#view(), options.height));
  }

  /** Cumulative absolute error over time, per forecaster (the steeper, the worse). */
  errorChart(options: { height?: number } = {}): DisplayFigure {
    return displayFigure(backtestErrorFigure(this.#view(), options.height));
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
    return backtestText(this.#view());
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
    return [...backtestNotes(this.notes), this.table()[RBP_BUNDLE](), this.chart()[RBP_BUNDLE](), this.errorChart()[RBP_BUNDLE]()];
  }

  #columns(): FrameColumns {
    return backtestColumns(this.#view());
  }

  /** What the views (src/display/backtest-views.ts) are made from. */
  #view(): BacktestView {
    return {
      title: this.title,
      model: analysisLabel(this.analysis),
      outcome: this.outcome,
      indexName: this.#indexName,
      hasLagged: this.#hasLagged,
      rows: this.rows,
      metrics: this.metrics,
      notes: this.notes,
      jobs: this.plan.jobs,
      service: this.plan.service,
    };
  }
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
  const index = spec.index !== undefined ? { index: spec.index } : {};
  const frame = toRequest(data, { ...(spec.y !== undefined ? { y: spec.y } : {}), ...(spec.X !== undefined ? { X: spec.X } : {}), ...index });
  const lagged = spec.lagged !== undefined ? toRequest(data, { y: frame.outcome, X: [spec.lagged], ...index }).X.map((row) => row[0]) : undefined;
  const plan = planSteps({ X: frame.X, rowLabels: frame.rowLabels, K: frame.attributes.length }, options);
  const { steps, jobs } = plan;

  const connection = options.connection ?? (await connect());
  if (connection.mode === "hosted") await checkCost(connection, steps.length, jobs, options);

  const indexName = spec.index ?? "label";
  const table: StepTable = {
    analysis,
    title: spec.title ?? `Backtest of ${analysisLabel(analysis)} on ${frame.outcome}`,
    outcome: frame.outcome,
    attributes: frame.attributes,
    y: frame.y,
    X: frame.X,
    labels: frame.rowLabels,
    labelKey: [indexName, `${indexName}_`, "__label"].find((n) => n !== frame.outcome && !frame.attributes.includes(n)) ?? "__rbp_label",
    options: options.options as Record<string, unknown> | undefined,
  };
  // One progress line for the whole backtest (the rows: evaluation rows forecast so far).
  const progress = new Progress(analysis, options.progress ?? "auto");
  await progress.begin({ service: connection.mode, status: "running", rows: { done: 0, failed: 0, total: jobs } });
  const baselines = regressionBaselines(frame.y, frame.X, steps, plan.window === undefined);
  let done = 0;
  let failedRows = 0;
  const predicted = await transportOf(connection, plan.concurrency)
    .run(
      table,
      steps,
      (ended) => {
        done += ended.step.rows.length;
        failedRows += ended.failed;
        progress.update({ rows: { done, failed: failedRows, total: jobs } });
      },
      options.signal,
    )
    .catch(async (error: unknown) => {
      await progress.end("failed");
      throw error;
    });

  const reference = (i: number) => (lagged !== undefined ? (lagged[i] ?? null) : i > 0 ? frame.y[i - 1] : null);
  const { rows, forecasts } = evaluationRows(table, steps, predicted, plan.calibration, (i, c) => ({
    regression: baselines[c](frame.X[i] as number[]),
    persistence: lagged?.[i] ?? null,
    reference: reference(i),
  }));
  const failed = jobs - rows.length;
  await progress.end(failed > 0 ? "partial_failed" : "completed", { rows: { done: jobs, failed, total: jobs } });
  const notes = [...frame.notes, ...plan.notes];
  if (failed > 0) notes.push(`${formatCount(failed)} ${failed === 1 ? "row" : "rows"} failed on the service and ${failed === 1 ? "is" : "are"} left out`);
  return new Backtest({
    analysis,
    title: table.title,
    outcome: frame.outcome,
    rows,
    predictions: () => forecasts.map((f) => f.prediction()),
    plan: { jobs, requests: steps.length, units: jobs, service: connection.mode },
    notes,
    elapsedMs: Date.now() - started,
    indexName,
    hasLagged: lagged !== undefined,
  });
}

/**
 * The hosted service's cost check, before anything is submitted: says the requests, jobs and
 * units; above `confirmAbove` units (default 100) refuses without `confirm: true`; refuses what
 * the plan's remaining quota cannot pay.
 */
async function checkCost(connection: Connection, requests: number, jobs: number, options: BacktestOptions<Analysis>): Promise<void> {
  const log = options.log ?? ((line: string) => console.log(line));
  log(
    `backtest: ${formatCount(jobs)} predictions in ${formatCount(requests)} requests: ${formatCount(jobs)} jobs, ${formatCount(jobs)} quota units on the hosted service at ${connection.baseUrl}`,
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

/** Each evaluation row forecast (a failed row of an experiment left out), with the forecasts in row order. */
function evaluationRows(
  table: StepTable,
  steps: ReadonlyArray<Step>,
  predicted: ReadonlyArray<ReadonlyArray<Forecast>>,
  calibration: number | "best",
  baselinesAt: (i: number, step: number) => Pick<BacktestRow, "regression" | "persistence" | "reference">,
): { rows: BacktestRow[]; forecasts: Forecast[] } {
  const { labels } = table;
  const rows: BacktestRow[] = [];
  const forecasts: Forecast[] = [];
  steps.forEach((step, c) => {
    const ps = predicted[c];
    step.rows.forEach((i, j) => {
      const p = ps.find((q) => q.thetaLabel === labels[i]) ?? ps[j];
      if (p === undefined) return; // a failed row of an experiment
      forecasts.push(p);
      const t = calibration === "best" ? p.prediction().best.index : calibration;
      if (t >= p.yhat.length) throw usage(`calibration ${t} is not one of the result's (0 to ${p.yhat.length - 1})`);
      rows.push({
        label: labels[i],
        position: i,
        actual: table.y[i],
        predicted: p.yhat[t] ?? null,
        ...baselinesAt(i, c),
        trainRows: step.to - step.from,
        trainFrom: labels[step.from],
        trainTo: labels[step.to - 1],
      });
    });
  });
  return { rows, forecasts };
}
