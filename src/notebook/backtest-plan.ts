/**
 * A backtest's plan, from its arguments alone (no service, no I/O): the evaluation rows, grouped in
 * steps that share one training window, and the settings checked. `backtest()` (backtest.ts) runs
 * the plan over a transport (backtest-transport.ts); docs/research.md says why the plan is this one.
 */
import type { BacktestOptions } from "./backtest.js";
import { PredictionError } from "./errors.js";

/** One step: evaluation rows sharing one training window, `[from, to)` (`to` is the first evaluation row). */
export interface Step {
  /** The first training row. */
  from: number;
  /** One past the last training row (the first evaluation row of the step). */
  to: number;
  /** The evaluation rows (positions among the rows kept), every attribute present. */
  rows: number[];
}

/** What the plan reads of the data: each kept row's attributes and label. */
export interface PlanTable {
  X: ReadonlyArray<ReadonlyArray<number | null>>;
  /** One label per row (the index column's values, else the positions). */
  rowLabels: ReadonlyArray<string>;
  /** The number of attributes. */
  K: number;
}

/** The settings of backtest() the plan is made from. */
export type PlanSettings = Pick<BacktestOptions, "start" | "end" | "window" | "step" | "minTrain" | "calibration" | "concurrency">;

/** The steps, with the settings they were made from (checked) and a note of the rows left out. */
export interface StepPlan {
  steps: Step[];
  /** Evaluation rows in all: one job and one quota unit each. */
  jobs: number;
  /** The rolling window's rows; undefined for an expanding window. */
  window: number | undefined;
  calibration: number | "best";
  /** Requests in flight at once over HTTP, when given. */
  concurrency: number | undefined;
  /** What the plan left out (evaluation rows with a missing attribute). */
  notes: string[];
}

/**
 * The steps of a backtest: the evaluation rows from `start` to `end`, `step` at a time, each step
 * trained on the rows before it (all of them, or the `window` before it); a row with a missing
 * attribute is left out with a note. Throws a usage PredictionError naming a bad setting.
 *
 * @example
 * planSteps({ X, rowLabels, K: 2 }, { start: -3 }).steps; // [{ from: 0, to: N - 3, rows: [N - 3] }, ...]
 */
export function planSteps(table: PlanTable, settings: PlanSettings): StepPlan {
  const { X, rowLabels: labels, K } = table;
  const N = X.length;
  const window = positiveInteger(settings.window, "window");
  const step = positiveInteger(settings.step, "step") ?? 1;
  const minTrain = positiveInteger(settings.minTrain, "minTrain") ?? K + 2;
  if (window !== undefined && window < minTrain)
    throw usage(`window (${window}) is smaller than minTrain (${minTrain})`, "A window needs at least the number of attributes + 2 rows.");
  const start = settings.start !== undefined ? positionOf(settings.start, labels, "start") : minTrain;
  const end = settings.end !== undefined ? positionOf(settings.end, labels, "end") : N - 1;
  if (start < minTrain) throw usage(`start (row ${labels[start] ?? start}) has ${start} rows before it; at least ${minTrain} (minTrain) are needed`);
  if (start > end) throw usage(`start (row ${labels[start] ?? start}) comes after end (row ${labels[end] ?? end})`);
  const calibration = settings.calibration ?? 0;
  if (calibration !== "best" && (!Number.isInteger(calibration) || calibration < 0))
    throw usage(`calibration must be a non-negative integer or "best", got ${String(calibration)}`);

  const steps: Step[] = [];
  const skipped: string[] = [];
  for (let s = start; s <= end; s += step) {
    const rows: number[] = [];
    for (let i = s; i < Math.min(s + step, end + 1); i++) {
      if (X[i].some((v) => v === null)) skipped.push(labels[i]);
      else rows.push(i);
    }
    if (rows.length > 0) steps.push({ from: window !== undefined ? Math.max(0, s - window) : 0, to: s, rows });
  }
  const notes: string[] = [];
  if (skipped.length > 0)
    notes.push(
      `skipped ${skipped.length === 1 ? "an evaluation row" : `${skipped.length} evaluation rows`} with a missing attribute: ${skipped.slice(0, 10).join(", ")}${skipped.length > 10 ? ", ..." : ""}`,
    );
  if (steps.length === 0) throw usage("no evaluation row has every attribute");
  const jobs = steps.reduce((s, c) => s + c.rows.length, 0);
  return { steps, jobs, window, calibration, concurrency: positiveInteger(settings.concurrency, "concurrency"), notes };
}

/** A usage error of backtest(). */
export function usage(detail: string, hint?: string): PredictionError {
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
