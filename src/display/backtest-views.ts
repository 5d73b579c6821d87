/**
 * The views of a backtest, from plain data: the metrics table, the charts of actual against
 * predicted and of cumulative error, the text, the bundles `show()` displays, and the columns of
 * its `toFrame()` and `toCSV()`. The notebook's `Backtest` (src/notebook/backtest.ts) holds the data
 * and delegates here.
 */
import type { FrameColumns } from "../frame/index.js";
import { htmlBundle, type MimeBundle } from "./bundle.js";
import type { Figure } from "./figures.js";
import { escapeHtml, formatCount, formatNumber, MISSING, textTable } from "./format.js";
import { notesHtml } from "./prediction-views.js";
import { TABLE_CSS, type HtmlTable } from "./tables.js";

/** One evaluation row as the views read it. */
export interface BacktestRowView {
  label: string;
  actual: number;
  predicted: number | null;
  regression: number | null;
  persistence: number | null;
  trainRows: number;
  trainFrom: string;
  trainTo: string;
}

/** Accuracy of one forecaster over the evaluation rows it forecast (a backtest's `metrics`). */
export interface BacktestMetricsView {
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

/** What a backtest's views are made from. */
export interface BacktestView {
  title: string;
  /** The model's name in the charts ("PSR", "MaxFit", "Grid"). */
  model: string;
  outcome: string;
  /** The label column's name (the x axis, the frame's index). */
  indexName: string;
  /** Whether there is a persistence forecast (a lagged column). */
  hasLagged: boolean;
  rows: ReadonlyArray<BacktestRowView>;
  metrics: ReadonlyArray<BacktestMetricsView>;
  notes: ReadonlyArray<string>;
  /** Jobs spent and where (the text's first line). */
  jobs: number;
  service: string;
}

const fmt = (v: number | null): string => (v === null ? MISSING : formatNumber(v, 4));

/**
 * The metrics as a table: forecasts, MAE, RMSE, correlation, hit rate per forecaster.
 *
 * @example
 * backtestTable(view).text; // "Backtest of PSR on y: 100 rows, 900 to 999\nforecaster ..."
 */
export function backtestTable(view: BacktestView): HtmlTable {
  const header = ["forecaster", "forecasts", "MAE", "RMSE", "correlation", "hit rate"];
  const rows = view.metrics.map((m) => [
    m.forecaster,
    formatCount(m.n),
    fmt(m.mae),
    fmt(m.rmse),
    fmt(m.correlation),
    m.hitRate === null ? MISSING : `${(100 * m.hitRate).toFixed(1)} %`,
  ]);
  const r = view.rows;
  const caption = `${view.title}: ${formatCount(r.length)} rows, ${r[0]?.label ?? ""} to ${r[r.length - 1]?.label ?? ""}`;
  const html =
    `<style>${TABLE_CSS}</style><table class="rbp-table"><caption>${escapeHtml(caption)}</caption><thead><tr>${header.map((h) => `<th>${escapeHtml(h)}</th>`).join("")}</tr></thead>` +
    `<tbody>${rows.map((row) => `<tr>${row.map((c) => `<td>${escapeHtml(c)}</td>`).join("")}</tr>`).join("")}</tbody></table>`;
  return { html, text: `${caption}\n${textTable(header, rows)}` };
}

/** The series of each forecaster: the model, linear regression and (with a lagged column) persistence. */
function forecasterTraces(view: BacktestView, y: (pick: (r: BacktestRowView) => number | null) => Array<number | null>): Figure["data"] {
  const x = view.rows.map((r) => r.label);
  const data: Figure["data"] = [
    { type: "scatter", mode: "lines", name: view.model, x, y: y((r) => r.predicted), line: { color: "#1f77b4" } },
    { type: "scatter", mode: "lines", name: "linear regression", x, y: y((r) => r.regression), line: { color: "#ff7f0e", dash: "dot" } },
  ];
  if (view.hasLagged)
    data.push({ type: "scatter", mode: "lines", name: "persistence", x, y: y((r) => r.persistence), line: { color: "#2ca02c", dash: "dash" } });
  return data;
}

/**
 * Actual against predicted over time, with the baselines.
 *
 * @example
 * backtestFigure(view, 380).data.map((t) => t.name); // ["actual", "PSR", "linear regression"]
 */
export function backtestFigure(view: BacktestView, height = 380): Figure {
  const x = view.rows.map((r) => r.label);
  const actual = { type: "scatter", mode: "lines+markers", name: "actual", x, y: view.rows.map((r) => r.actual), line: { color: "#222" } };
  return {
    data: [actual, ...forecasterTraces(view, (pick) => view.rows.map(pick))],
    layout: {
      title: { text: `${view.title}: actual and predicted` },
      xaxis: { title: { text: view.indexName } },
      yaxis: { title: { text: view.outcome } },
      height,
    },
  };
}

/**
 * Cumulative absolute error over time, per forecaster (the steeper, the worse).
 *
 * @example
 * backtestErrorFigure(view, 340).layout.title; // { text: "...: cumulative absolute error" }
 */
export function backtestErrorFigure(view: BacktestView, height = 340): Figure {
  const cumulative = (pick: (r: BacktestRowView) => number | null): number[] => {
    let sum = 0;
    return view.rows.map((r) => {
      const f = pick(r);
      if (f !== null) sum += Math.abs(f - r.actual);
      return sum;
    });
  };
  return {
    data: forecasterTraces(view, cumulative),
    layout: {
      title: { text: `${view.title}: cumulative absolute error` },
      xaxis: { title: { text: view.indexName } },
      yaxis: { title: { text: `sum of |error| (${view.outcome})` } },
      height,
    },
  };
}

/** The text of a backtest: what it spent, the metrics table, the notes. */
export function backtestText(view: BacktestView, table: HtmlTable = backtestTable(view)): string {
  const lines = [`${view.title}: ${formatCount(view.rows.length)} forecasts, ${formatCount(view.jobs)} jobs on the ${view.service} service`, table.text];
  for (const n of view.notes) lines.push(`Note: ${n}`);
  return lines.join("\n");
}

/** The notes as a bundle (no bundle without notes). */
export function backtestNotes(notes: ReadonlyArray<string>): MimeBundle[] {
  return notes.length > 0 ? [htmlBundle(notesHtml(notes), notes.map((n) => `Note: ${n}`).join("\n"))] : [];
}

/**
 * One row per evaluation row, indexed by its label: actual, predicted, regression, persistence
 * (with a lagged column), training rows.
 *
 * @example
 * backtestColumns(view).columns; // ["actual", "predicted", "regression", "train_rows", "train_from", "train_to"]
 */
export function backtestColumns(view: Pick<BacktestView, "rows" | "indexName" | "hasLagged">): FrameColumns {
  const columns = ["actual", "predicted", "regression", ...(view.hasLagged ? ["persistence"] : []), "train_rows", "train_from", "train_to"];
  const r = view.rows;
  return {
    indexName: view.indexName,
    index: r.map((x) => x.label),
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
