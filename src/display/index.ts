/** Results out: HTML tables, plotly charts, Jupyter mime bundles and the HTML report. */
export {
  analysisOf,
  calibrationThresholds,
  contextFromRequest,
  defaultCalibration,
  type DisplayContext,
} from "./context.js";
export { escapeHtml, formatCount, formatNumber, MISSING } from "./format.js";
export {
  analysisName,
  experimentTable,
  observationTable,
  optionsTable,
  summaryTable,
  TABLE_CSS,
  type HtmlTable,
  type ObservationTableOptions,
  type TableOptions,
} from "./tables.js";
export {
  COLORS,
  DEFAULT_WEBGL_THRESHOLD,
  experimentFigure,
  figureTitle,
  impactFigure,
  outcomeVsRelevanceFigure,
  resultFigures,
  thresholdFigure,
  traceTypes,
  weightsFigure,
  type Figure,
  type FigureOptions,
  type Trace,
} from "./figures.js";
export {
  JUPYTER_DISPLAY,
  NO_PLOTLY_NOTE,
  NO_SCRIPT_NOTE,
  PLOTLY_MIME,
  displayable,
  figureBundle,
  figureHtml,
  htmlBundle,
  isDisplayable,
  plotlyFileName,
  plotlyInlineScript,
  plotlyMinifiedSource,
  plotlySent,
  plotlyUrlScript,
  plotlyVersion,
  resetPlotlySession,
  setPlotlySource,
  tableBundle,
  toBundle,
  type DisplayBundle,
  type Displayable,
  type FigureHtmlOptions,
  type MimeBundle,
  type PlotlyJson,
  type PlotlySource,
} from "./bundle.js";
export { display, jupyterKernel, tslabWriter, type DisplayOptions, type Kernel } from "./jupyter.js";
export { reportHtml, saveReport, type Reportable, type ReportOptions, type ReportPlotly } from "./report.js";
