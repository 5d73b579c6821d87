/**
 * The accuracy of a backtest's forecasters over its evaluation rows: MAE, RMSE, correlation and
 * hit rate, for the model, the regression baseline and (with a lagged column) persistence.
 */
import type { Analysis } from "../client/index.js";
import type { BacktestMetricsView } from "../display/index.js";
import { analysisLabel } from "./errors.js";

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

/** Accuracy of one forecaster over the evaluation rows it forecast (its fields: display/backtest-views.ts). */
export type BacktestMetrics = BacktestMetricsView;

/**
 * The metrics of a backtest: the model, linear regression and (with `lagged`) persistence.
 *
 * @example
 * backtestMetrics("psr", bt.rows, false).map((m) => m.mae);
 */
export function backtestMetrics(analysis: Analysis, rows: ReadonlyArray<BacktestRow>, hasLagged: boolean): BacktestMetrics[] {
  const m = [metricsOf(analysisLabel(analysis), rows, (r) => r.predicted), metricsOf("linear regression (same window)", rows, (r) => r.regression)];
  // Persistence forecasts no change: it has no direction to hit.
  if (hasLagged) m.push({ ...metricsOf("persistence", rows, (r) => r.persistence), hitRate: null });
  return m;
}

/**
 * MAE, RMSE, correlation and hit rate of one forecaster.
 *
 * @example
 * metricsOf("PSR", bt.rows, (r) => r.predicted).rmse;
 */
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
