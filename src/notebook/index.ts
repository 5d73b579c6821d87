/**
 * The notebook helper: connect once per kernel, run Grid, MaxFit and PSR from data frames with a
 * progress line, and get prediction objects with tables, charts and an HTML report.
 *
 * ```ts
 * import * as rbp from "rbp-notebook";
 * const p = await rbp.grid(df, { y: "Points", theta: { Age: 24, Experience: 5, ... } });
 * p.yhat; p.fit; p.adjustedFit;      // numbers
 * p.show();                          // summary table and charts in the cell
 * await rbp.saveReport(p, "reports/quickstart.html");
 * ```
 */
import type { QuotaStatus } from "../client/index.js";
import { connect, schedulePrestart } from "./connect.js";

export { connect, disconnect, currentConnection, Connection, type ConnectOptions, type ServiceKind } from "./connect.js";
export {
  grid,
  maxfit,
  psr,
  predict,
  isExperiment,
  type AnyPrediction,
  type CellValue,
  type PredictionSpec,
  type RunSettings,
  type SingleTheta,
  type SinglePredictionSpec,
} from "./run.js";
export {
  Prediction,
  ExperimentPrediction,
  toReportable,
  type AttributeImpact,
  type Calibration,
  type ExperimentPredictionInit,
  type FailedRow,
  type PredictionInit,
  type ReportItem,
  type SentRequest,
  type FrameOut,
  type PredictionFrameOptions,
  type PredictionCsvOptions,
} from "./prediction.js";
export { useDataFrames, type DanfoModule, type FrameColumns, type FrameForm, type ToFrameOptions } from "../frame/index.js";
export { PredictionError, type ProblemKind } from "./errors.js";
export { progressText, type ProgressEvent, type ProgressMode, type ProgressSetting, type ProgressStatus } from "./progress.js";
export { defaults } from "./defaults.js";
export { backtest, Backtest, type BacktestMetrics, type BacktestOptions, type BacktestPlan, type BacktestRow, type BacktestSpec } from "./backtest.js";
export { saveReport } from "./report.js";
export { displayFigure, displayTable, type DisplayFigure, type DisplayTable } from "./displayable.js";

/** The plan's quota on the current connection (connects first): units, used, remaining. */
export async function quota(): Promise<QuotaStatus> {
  const connection = await connect();
  return connection.quota();
}

// In a notebook kernel, importing the helper starts the embedded service and warms its workers in
// the background (connect.ts, prestartWanted: RBP_PRESTART=0 turns it off, =1 on in a script).
schedulePrestart();
