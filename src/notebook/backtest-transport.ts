/**
 * How a backtest's steps reach the service: one interface, `BacktestTransport`, with two
 * implementations of the same contract.
 *
 * - `laneTransport`: the embedded service's in-process lane (service/lane.ts), which the connection
 *   holds (connect.ts: whoever holds the connection holds its service's lane). Every step checked,
 *   paid and stored as its POST would be, all or nothing before anything runs; the table shared
 *   with the worker pool instead of sent; each forecast read from its job's yhat and its Prediction
 *   built when first read.
 * - `clientTransport`: every step a request through the connection's client (the hosted service, or
 *   a local v2 connection), `concurrency` at a time, as `rbp.psr/maxfit/grid` sends it.
 *
 * The contract: `run` submits every step and waits for them; it resolves with each step's
 * forecasts in step order (an experiment's failed rows left out and counted), calling `ended` as
 * each step ends; it rejects with the PredictionError a refused or failed step gives (a refusal of
 * the service names the step; nothing is charged for what the lane refuses).
 */
import { availableParallelism } from "node:os";
import type { Analysis, InProcessEndpoint } from "../client/index.js";
import { fromOwnV3Results } from "../api/result.js";
import { InvalidInputError } from "../engine/errors.js";
import { mapLimit } from "../internal/group.js";
import { LaneWindowError, ServiceError } from "../service/index.js";
import type { Step } from "./backtest-plan.js";
import type { Connection, ServiceKind } from "./connect.js";
import { PredictionError, analysisLabel, toPredictionError } from "./errors.js";
import { ExperimentPrediction, Prediction } from "./prediction.js";
import { predict, resolvedOf, thresholdsOf } from "./run.js";

/** One evaluation row's forecast: its yhat per calibration, and its Prediction (made when first asked for). */
export interface Forecast {
  thetaLabel: string | undefined;
  yhat: ReadonlyArray<number | null>;
  prediction(): Prediction;
}

/** What every step reads: the kept rows, their names, and how its Predictions are titled and labelled. */
export interface StepTable {
  analysis: Analysis;
  /** The backtest's title (an experiment's Predictions add their row). */
  title: string;
  outcome: string;
  attributes: ReadonlyArray<string>;
  y: ReadonlyArray<number>;
  X: ReadonlyArray<ReadonlyArray<number | null>>;
  labels: ReadonlyArray<string>;
  /** The name of the label column in the requests (one no attribute and not the outcome has). */
  labelKey: string;
  /** The analysis' options as given. */
  options: Record<string, unknown> | undefined;
}

/** A step as it ended: its forecasts, and how many of its rows failed (an experiment's, left out). */
export interface StepEnded {
  step: Step;
  forecasts: Forecast[];
  failed: number;
}

/** The one way a backtest's steps run, on the embedded service or a remote one (the contract above). */
export interface BacktestTransport {
  /** Where the steps run. */
  readonly service: ServiceKind;
  run(table: StepTable, steps: ReadonlyArray<Step>, ended: (step: StepEnded) => void, signal?: AbortSignal): Promise<Forecast[][]>;
}

/**
 * What the embedded service's in-process lane offers (service/lane.ts `Lane` is one), in plain
 * types so that the connection's public declarations stay free of the service's.
 */
export interface StepLane {
  /** The v3 routes for the client of the process (client/in-process.ts). */
  readonly endpoint: InProcessEndpoint;
  submit(batch: LaneBatchOf, settings: { signal?: AbortSignal }): Promise<LaneWindowOf[]>;
}

/** Lane.submit's batch: one table, one window per step (rows `[from, to)` and its theta rows). */
interface LaneBatchOf {
  analysis: Analysis;
  y: ArrayLike<number>;
  X: ReadonlyArray<ArrayLike<number | null>>;
  options?: Record<string, unknown>;
  windows: ReadonlyArray<{ from: number; to: number; thetas: ReadonlyArray<ArrayLike<number>> }>;
}

/** Lane.submit's receipt of one window, with its rows once they end. */
interface LaneWindowOf {
  experiment?: object;
  warnings: string[];
  rows: Promise<
    Array<
      | { row: number; job_id: number; job_code: string; status: "completed"; json: string; yhat: Array<number | null> }
      | { row: number; job_id: number; job_code: string; status: "failed"; reason: string }
    >
  >;
}

/**
 * The transport of a connection: its embedded service's lane (v3), else its client, `concurrency`
 * requests at a time (default: hosted 8; local, twice the cores, at most 16).
 *
 * @example
 * const transport = transportOf(await connect(), undefined); // the lane of the embedded service
 */
export function transportOf(connection: Connection, concurrency: number | undefined): BacktestTransport {
  const local = connection.mode === "local";
  const lane = local && connection.apiVersion === "v3" ? connection.lane : undefined;
  if (lane !== undefined) return laneTransport(lane);
  return clientTransport(connection, concurrency ?? (local ? Math.min(16, 2 * availableParallelism()) : 8));
}

/** Every step as one request of the embedded service's in-process lane (the contract above). */
function laneTransport(lane: StepLane): BacktestTransport {
  return {
    service: "local",
    async run(table, steps, ended, signal) {
      const { analysis, labels } = table;
      const startedAt = new Date().toISOString();
      const given = { ...(table.options ?? {}) };
      const resolved = resolvedOf(analysis, given, table.attributes.length, "v3");
      let submitted: LaneWindowOf[];
      try {
        const windows = steps.map((c) => ({ from: c.from, to: c.to, thetas: c.rows.map((i) => table.X[i] as number[]) }));
        submitted = await lane.submit({ analysis, y: table.y, X: table.X, options: given, windows }, signal !== undefined ? { signal } : {});
      } catch (error) {
        throw laneRefusal(error, (n) => labels[steps[n].rows[0]]);
      }
      const t0 = performance.now();
      return Promise.all(
        submitted.map(async (w, c) => {
          const step = steps[c];
          const rows = await w.rows;
          const elapsedMs = Math.round(performance.now() - t0);
          const experiment = w.experiment !== undefined;
          // The step's training rows, copied only when a Prediction is built (bt.predictions).
          const slice = () => ({ y: table.y.slice(step.from, step.to), X: table.X.slice(step.from, step.to), rowLabels: labels.slice(step.from, step.to) });
          let window: ReturnType<typeof slice> | undefined;
          const forecasts: Forecast[] = [];
          let failed = 0;
          for (const row of rows) {
            const i = step.rows[row.row];
            if (row.status === "failed") {
              if (!experiment || rows.every((r) => r.status === "failed"))
                throw new PredictionError({
                  kind: "job-failed",
                  subject: analysisLabel(analysis),
                  detail: `${experiment ? "every row of the experiment failed; " : ""}row ${labels[i]}: ${row.reason}`,
                  jobId: row.job_id,
                });
              failed++;
              continue;
            }
            const theta = table.X[i] as number[];
            const { json, job_id, job_code } = row;
            // Built, and its result parsed, when first read (bt.predictions); the forecast needs only yhat.
            const build = (): Prediction => {
              const result = fromOwnV3Results(JSON.parse(json));
              const thresholds = thresholdsOf(analysis, resolved, result);
              const shown = new Set(result.warnings ?? []);
              const { y, X, rowLabels } = (window ??= slice());
              return new Prediction({
                analysis,
                title: experiment ? `${table.title} for ${/^\d+$/.test(labels[i]) ? `row ${labels[i]}` : labels[i]}` : table.title,
                result,
                context: { outcome: table.outcome, attributes: table.attributes, y, rowLabels, analysis, ...(thresholds !== undefined ? { thresholds } : {}) },
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
                indexName: table.labelKey,
              });
            };
            let made: Prediction | undefined;
            forecasts.push({ thetaLabel: labels[i], yhat: row.yhat, prediction: () => (made ??= build()) });
          }
          ended({ step, forecasts, failed });
          return forecasts;
        }),
      );
    },
  };
}

/** Every step as a request through the connection's client, `concurrency` at a time (the contract above). */
function clientTransport(connection: Connection, concurrency: number): BacktestTransport {
  return {
    service: connection.mode,
    run(table, steps, ended, signal) {
      const columnsOf = (positions: ReadonlyArray<number>, withOutcome: boolean): Record<string, unknown[]> => {
        const cols: Record<string, unknown[]> = { [table.labelKey]: positions.map((i) => table.labels[i]) };
        if (withOutcome) cols[table.outcome] = positions.map((i) => table.y[i]);
        table.attributes.forEach((name, j) => (cols[name] = positions.map((i) => table.X[i][j])));
        return cols;
      };
      return mapLimit(steps, concurrency, async (step) => {
        const train = Array.from({ length: step.to - step.from }, (_, k) => step.from + k);
        const p = await predict(
          table.analysis,
          columnsOf(train, true) as never,
          { y: table.outcome, X: [...table.attributes], index: table.labelKey, theta: columnsOf(step.rows, false) as never, title: table.title },
          table.options as never,
          { progress: "none", connection, showErrors: false, ...(signal !== undefined ? { signal } : {}) },
        );
        const predictions = p instanceof ExperimentPrediction ? [...p.rows] : [p];
        const forecasts = predictions.map((q): Forecast => ({ thetaLabel: q.thetaLabel, yhat: q.result.yhat, prediction: () => q }));
        ended({ step, forecasts, failed: p instanceof ExperimentPrediction ? p.failures.length : 0 });
        return forecasts;
      });
    },
  };
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
