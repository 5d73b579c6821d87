/**
 * rbp-notebook: relevance-based prediction (Grid, MaxFit, PSR) from TypeScript notebooks and
 * scripts.
 *
 * The package root is the notebook helper (connect, grid, maxfit, psr, quota, saveReport,
 * defaults, the prediction objects and their errors), plus the client and the display helpers a
 * notebook needs beside it. The layers have their own entry points too: `rbp-notebook/client`,
 * `rbp-notebook/display`, `rbp-notebook/frame`, `rbp-notebook/service`, `rbp-notebook/engine`.
 */
export * from "./notebook/index.js";

// The client: for receipts, single fields, v2 and typed errors.
export {
  createClient,
  RbpClient,
  RbpError,
  AbortError,
  ApiError,
  AuthenticationError,
  ConfigurationError,
  ConnectionError,
  FieldTooLargeError,
  JobFailedError,
  JobPendingError,
  NotFoundError,
  PayloadTooLargeError,
  QuotaExceededError,
  RateLimitError,
  TimeoutError,
  ValidationError,
  isExperimentReceipt,
} from "./client/index.js";
export type {
  Analysis,
  ApiVersion,
  ClientOptions,
  CommonOptionsInput,
  ExperimentReceipt,
  ExperimentRow,
  ExperimentState,
  FieldValue,
  GridOptionsInput,
  JobReceipt,
  MaxFitOptionsInput,
  Num,
  OptionsInputFor,
  PsrOptionsInput,
  QuotaStatus,
  Receipt,
  Result,
  ResultGridInsights,
  ResultGridSearch,
  ResultSoloStatistics,
} from "./client/index.js";

// The root of every error (instanceof by brand across copies of the module; a stable `code`).
export { RbpBaseError } from "./errors/index.js";

// Data in.
export {
  toRequest,
  FrameError,
  type FrameInput,
  type FrameRequest,
  type FrameSpec,
  type ThetaSpec,
  type DataFrameLike,
  type RowObject,
  type ColumnObject,
  type PlainArrays,
} from "./frame/index.js";

// Results out: display in a kernel, tables, charts, bundles, reports.
export {
  display,
  jupyterKernel,
  contextFromRequest,
  summaryTable,
  observationTable,
  experimentTable,
  optionsTable,
  weightsFigure,
  outcomeVsRelevanceFigure,
  impactFigure,
  thresholdFigure,
  experimentFigure,
  exploreFigure,
  resultFigures,
  checkAnswer,
  textBlock,
  valuesTable,
  figureBundle,
  tableBundle,
  htmlBundle,
  toBundle,
  setPlotlySource,
  resetPlotlySession,
  reportHtml,
  formatNumber,
  formatCount,
  escapeHtml,
  JUPYTER_DISPLAY,
  PLOTLY_MIME,
  type DisplayContext,
  type DisplayOptions,
  type Displayable,
  type DisplayBundle,
  type Figure,
  type FigureOptions,
  type HtmlTable,
  type MimeBundle,
  type ObservationTableOptions,
  type PlotlySource,
  type Reportable,
  type ReportOptions,
  type ReportPlotly,
  type CheckOptions,
  type CheckVerdict,
  type TableCell,
} from "./display/index.js";
