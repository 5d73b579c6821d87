/**
 * What `grid`, `maxfit` and `psr` return: a `Prediction` for one circumstance, an
 * `ExperimentPrediction` for several (one Prediction per theta row).
 *
 * Scalars follow one convention: `yhat`, `fit`, `adjustedFit`, `weights` and `include` are the
 * first calibration's (MaxFit and a Grid have exactly one; a PSR over several thresholds has one
 * per threshold, all in `calibrations`, the largest adjusted fit in `best`). The full normalised
 * `result` is there too.
 *
 * In a notebook: `show()` displays the summary table and the analysis' charts; `table()`,
 * `observations()` and the chart methods return a table or a plotly figure that `display()` draws
 * (Deno draws them as a cell's value); `report(path)` writes the HTML report. Deno's kernel
 * displays a prediction itself (`Symbol.for("Jupyter.display")`); tslab prints a cell's last value
 * as text, which for a prediction is its headline numbers.
 */
import type { ExperimentReceipt, ExperimentState, JobReceipt, Num, Result, Analysis } from "../client/index.js";
import {
  JUPYTER_DISPLAY,
  RBP_BUNDLE,
  analysisOf,
  cellValue,
  calibrationThresholds,
  defaultCalibration,
  experimentColumns,
  experimentFigure,
  formatCount,
  headline,
  impactColumns,
  impactFigure,
  observationColumns,
  observationTable,
  outcomeVsRelevanceFigure,
  predictionBundle,
  predictionBundles,
  predictionText,
  resultFigures,
  showAll,
  summaryTable,
  experimentTable,
  exploreFigure,
  thresholdFigure,
  weightsFigure,
  type DisplayContext,
  type Figure,
  type FigureOptions,
  type HtmlTable,
  type MimeBundle,
  type ObservationTableOptions,
  type Reportable,
} from "../display/index.js";
import { saveVerifiableReport as writeReport, type VerifiableReportable, type VerifiableReportOptions } from "../display/index.js";
import { outputFrame, writeFrameCsv, type FrameColumns, type ToFrameOptions } from "../frame/index.js";
import { rowsChanged, type ColumnObject, type DataFrameLike } from "../frame/index.js";
import { displayFigure, displayTable, type DisplayFigure, type DisplayTable } from "./displayable.js";
import { PredictionError, analysisLabel } from "./errors.js";
import type { ServiceKind } from "./connect.js";
import { CompactResult } from "./compact-result.js";

const INSPECT = Symbol.for("nodejs.util.inspect.custom");

/** One calibration of a result: a PSR threshold, MaxFit's winner, a Grid's composite. */
export interface Calibration {
  /** Position in the result's per-threshold vectors. */
  index: number;
  /** The threshold (undefined for a Grid composite, or when the service did not say). */
  threshold: number | undefined;
  /** The censor: relevance or similarity (a Grid lists those it evaluated). */
  censor: string | undefined;
  yhat: Num;
  fit: Num;
  adjustedFit: Num;
  /** Observations kept (undefined for a Grid composite). */
  n: number | undefined;
  /** Attributes used. */
  k: number | undefined;
}

/** Grid insights by attribute name. */
export interface AttributeImpact {
  attribute: string;
  impactOnFit: Num;
  impactOnPrediction: Num;
}

/** The request a prediction was computed from, as sent: what a report embeds and `rbp verify` recomputes. */
export interface SentRequest {
  y: ReadonlyArray<number>;
  X: ReadonlyArray<ReadonlyArray<number | null>>;
  /** One circumstance, or several (an experiment); absent when a Grid used the last row of X. */
  theta?: ReadonlyArray<number> | ReadonlyArray<ReadonlyArray<number>>;
  options: Readonly<Record<string, unknown>>;
}

/** A frame out: a danfo DataFrame when danfo is loaded in the session, plain column objects otherwise. */
export type FrameOut = DataFrameLike | ColumnObject;

/** What `toFrame()` of a Prediction takes. */
export interface PredictionFrameOptions extends ToFrameOptions {
  /** The calibration whose weights and inclusion are given (default 0, the first: as `weights` and `include`). */
  calibration?: number;
}

/** What `toCSV()` of a Prediction writes: the observations (default) or a Grid's attribute impacts. */
export interface PredictionCsvOptions {
  what?: "observations" | "impact";
  calibration?: number;
}

/** What a Prediction is made from (the notebook runner builds it). */
export interface PredictionInit {
  analysis: Analysis;
  title: string;
  result: Result;
  context: DisplayContext;
  receipt: JobReceipt;
  /** The options as given (v3 names). */
  options: Record<string, unknown>;
  notes: string[];
  theta?: number[];
  thetaLabel?: string;
  elapsedMs: number;
  service: ServiceKind;
  /** The request as sent (y, X, theta, options): reports embed it so that `rbp verify` can recompute. */
  request?: SentRequest;
  /** When the call started (ISO 8601). */
  startedAt?: string;
  /** The service's address (hosted) or "embedded". */
  serviceUrl?: string;
  /** The name of the label column (spec.index), for frames out. */
  indexName?: string;
}

function usage(subject: string, detail: string, hint?: string): PredictionError {
  return new PredictionError({ kind: "usage", subject, detail, ...(hint !== undefined ? { hint } : {}) });
}

/** Where a report's result came from: the result(s), the request as sent, the receipt. */
interface ReportSource {
  result: VerifiableReportable["result"];
  request: SentRequest | undefined;
  receipt: Record<string, unknown>;
}

/**
 * What Prediction and ExperimentPrediction share: where they ran, and the code that shows them
 * (show, bundle, text), reports them (toReportable, report) and writes them as JSON. A subclass
 * says only what differs: its summary table, its figures, its first line and its report source.
 */
abstract class PredictionBase {
  readonly analysis: Analysis;
  readonly title: string;
  /** Names and data that label the tables and charts. */
  readonly context: DisplayContext;
  /** The options as given (v3 names); the service's defaults fill the rest (`defaults(analysis)`). */
  readonly options: Readonly<Record<string, unknown>>;
  /** What was done to the data and what the service noted (dropped rows, skipped columns, ignored options). */
  readonly notes: ReadonlyArray<string>;
  /** From the call to the result, in ms. */
  readonly elapsedMs: number;
  /** Where it ran. */
  readonly service: ServiceKind;
  /** The request as sent (undefined for predictions built by hand). */
  readonly request: SentRequest | undefined;
  /** When the call started (ISO 8601). */
  readonly startedAt: string | undefined;
  /** The service's address, or "embedded" for the local service. */
  readonly serviceUrl: string | undefined;

  constructor(init: PredictionInit | ExperimentPredictionInit) {
    this.analysis = init.analysis;
    this.title = init.title;
    this.context = init.context;
    this.options = init.options;
    this.notes = init.notes;
    this.elapsedMs = init.elapsedMs;
    this.service = init.service;
    this.request = init.request;
    this.startedAt = init.startedAt;
    this.serviceUrl = init.serviceUrl;
  }

  abstract get outcome(): string;
  abstract get attributes(): ReadonlyArray<string>;
  abstract table(): DisplayTable;
  /** The summary table (HTML and text). */
  protected abstract summary(): HtmlTable;
  /** The figures shown under the summary. */
  protected abstract figures(options: FigureOptions): Figure[];
  /** The first line of text(). */
  protected abstract firstLine(): string;
  protected abstract reportSource(): ReportSource;
  /** The fields of toJSON between `attributes` and `notes`, and after `elapsedMs`. */
  protected abstract jsonFields(): { middle: Record<string, unknown>; receipt: unknown; tail: Record<string, unknown> };

  /** The notes shown: the notes, and for an experiment its failed rows. */
  protected shownNotes(): string[] {
    return [...this.notes];
  }

  /**
   * Displays the notes, the summary table and the charts in the cell (prints the summary outside a
   * notebook). In Deno it returns the promise of the outputs sent: `await p.show()`.
   *
   * @example
   * await p.show();   // tslab and Deno alike
   */
  show(options: FigureOptions = {}): Promise<void> | undefined {
    const view = { notes: this.shownNotes(), summary: this.summary(), figures: this.figures(options), firstLine: this.firstLine() };
    return showAll(predictionBundles(view), predictionText(view));
  }

  /** The summary, the notes and the charts as one mime bundle (HTML and text). */
  bundle(options: FigureOptions = {}): MimeBundle {
    return predictionBundle({ notes: this.shownNotes(), summary: this.summary(), figures: this.figures(options), firstLine: this.firstLine() });
  }

  [RBP_BUNDLE](): MimeBundle {
    return this.bundle();
  }

  /** A cell's value: the bundle (in Deno sent as awaited display data, bundle.ts cellValue). */
  [JUPYTER_DISPLAY](): MimeBundle | Promise<MimeBundle> {
    return cellValue(this.bundle());
  }

  text(): string {
    return predictionText({ firstLine: this.firstLine(), summary: this.summary(), notes: this.shownNotes() });
  }

  /** What saveReport writes, with where it came from (the report's provenance). */
  toReportable(): VerifiableReportable {
    this.#checkRequest();
    const { result, request, receipt } = this.reportSource();
    return {
      title: this.title,
      result,
      context: this.context,
      options: { ...this.options },
      notes: this.shownNotes(),
      source: {
        analysis: this.analysis,
        ...(request !== undefined ? { request } : {}),
        service: this.service,
        ...(this.serviceUrl !== undefined ? { serviceUrl: this.serviceUrl } : {}),
        receipt,
        ...(this.startedAt !== undefined ? { startedAt: this.startedAt } : {}),
        elapsedMs: this.elapsedMs,
      },
    };
  }

  /**
   * Writes the HTML report, which `rbp verify` can check; returns the absolute path.
   *
   * @example
   * await p.report("reports/quickstart.html"); // then: rbp verify reports/quickstart.html
   */
  async report(path: string, options: VerifiableReportOptions = {}): Promise<string> {
    return writeReport(this.toReportable(), path, options);
  }

  /**
   * A request that keeps the caller's rows of X (frame/kept.ts) must still hold them as sent: a
   * report of X changed after the call would not be the data its result was computed from.
   */
  #checkRequest(): void {
    if (this.request === undefined || !rowsChanged(this.request)) return;
    throw new PredictionError({
      kind: "data",
      subject: analysisLabel(this.analysis),
      detail: "X was changed after the call: the prediction keeps the rows it was given (not a copy), and they no longer hold the values it was computed from",
      field: "X",
      hint: "Run the call again on the data as it is now, or pass a copy of X to calls whose data you change afterwards (X.map((row) => row.slice())).",
    });
  }

  toJSON(): Record<string, unknown> {
    const { middle, receipt, tail } = this.jsonFields();
    return {
      analysis: this.analysis,
      title: this.title,
      outcome: this.outcome,
      attributes: [...this.attributes],
      ...middle,
      notes: [...this.notes],
      options: this.options,
      receipt,
      service: this.service,
      elapsedMs: this.elapsedMs,
      ...tail,
    };
  }
}

/** A prediction for one circumstance (one job). */
export class Prediction extends PredictionBase {
  /** The result, held compactly (compact-result.ts): `result` makes the plain one when read. */
  readonly #result: CompactResult;
  /** The job: id and code (keep it to read the job again, e.g. `connection.client.field(receipt, path)`). */
  readonly receipt: JobReceipt;
  /** The circumstance predicted for (undefined when a Grid used the last row of X). */
  readonly theta: ReadonlyArray<number> | undefined;
  readonly thetaLabel: string | undefined;
  /** The name of the input's label column (spec.index), when one was named. */
  readonly indexName: string | undefined;

  constructor(init: PredictionInit) {
    super(init);
    this.#result = CompactResult.of(init.result);
    this.receipt = init.receipt;
    this.theta = init.theta;
    this.thetaLabel = init.thetaLabel;
    this.indexName = init.indexName;
  }

  /**
   * The normalised result (v3 and v2 alike): a plain object, the same while anything holds it.
   * The Prediction keeps it compactly and makes it again when read after nothing held it (a
   * change made to it then is gone: docs/limits.md).
   */
  get result(): Result {
    return this.#result.result();
  }
  /** The prediction (first calibration; see `calibrations` and `best` for a PSR over several thresholds). */
  get yhat(): number | null {
    return this.#result.small("yhat")[0] ?? null;
  }
  get fit(): number | null {
    return this.#result.small("fit")[0] ?? null;
  }
  get adjustedFit(): number | null {
    return this.#result.small("adjusted_fit")[0] ?? null;
  }
  /** The outcome's name. */
  get outcome(): string {
    return this.context.outcome;
  }
  /** Attribute names, one per column of X. */
  get attributes(): ReadonlyArray<string> {
    return this.context.attributes;
  }
  /** One label per observation. */
  get rowLabels(): ReadonlyArray<string> {
    return this.context.rowLabels ?? Array.from({ length: this.observationCount }, (_, i) => String(i));
  }
  /** Number of observations (N). */
  get observationCount(): number {
    return this.#result.rows("weights") ?? 0;
  }
  /** The thresholds: a PSR's (one per calibration), MaxFit's winner, those a Grid evaluated. */
  get thresholds(): ReadonlyArray<number> | undefined {
    return this.result.thresholds ?? this.context.thresholds;
  }
  /** Attributes used: a Grid's K, or the first calibration's. */
  get k(): number | undefined {
    return this.#result.small("k")?.[0];
  }
  /** Combinations a Grid evaluated (undefined for PSR and MaxFit, or when the service does not say). */
  get combinations(): number | undefined {
    return this.#result.small("grid_search")?.combinations;
  }
  /** Each observation's weight (first calibration). */
  get weights(): Num[] {
    return this.#result.firstOfRows("weights") ?? [];
  }
  /** Whether each observation is kept (first calibration); undefined for a Grid composite. */
  get include(): boolean[] | undefined {
    return this.#result.firstOfRows("include")?.map((v) => v === 1);
  }
  get relevance(): Num[] | undefined {
    return this.result.relevance;
  }
  get similarity(): Num[] | undefined {
    return this.result.similarity;
  }
  /** Informativeness of each observation. */
  get informativeness(): Num[] | undefined {
    return this.result.info_x;
  }
  /** The linear-regression prediction, when the service computed it. */
  get yhatLinear(): Num | undefined {
    return this.result.yhat_linear;
  }
  /** Every calibration (per threshold for a PSR). */
  get calibrations(): Calibration[] {
    const r = this.#view();
    const T = r.yhat.length;
    const grid = analysisOf(r, this.context) === "grid";
    const th = calibrationThresholds(r, this.context);
    return Array.from({ length: T }, (_, t) => ({
      index: t,
      threshold: th?.[t],
      censor: grid ? r.censor_type?.join(", ") : r.censor_type !== undefined && r.censor_type.length === T ? r.censor_type[t] : r.censor_type?.[0],
      yhat: r.yhat[t] ?? null,
      fit: r.fit[t] ?? null,
      adjustedFit: r.adjusted_fit[t] ?? null,
      n: r.n !== undefined && r.n.length === T ? r.n[t] : undefined,
      k: r.k !== undefined ? (r.k.length === T ? r.k[t] : r.k[0]) : undefined,
    }));
  }
  /** The calibration with the largest adjusted fit (the one the charts show). */
  get best(): Calibration {
    return this.calibrations[defaultCalibration(this.#view())];
  }
  /** A Grid's Impact on Fit and Impact on Prediction by attribute; undefined for PSR and MaxFit. */
  get impact(): AttributeImpact[] | undefined {
    const gi = this.#view().grid_insights;
    if (gi === undefined) return undefined;
    return this.context.attributes.map((attribute, j) => ({
      attribute,
      impactOnFit: gi.impact_on_fit[j] ?? null,
      impactOnPrediction: gi.impact_on_prediction[j] ?? null,
    }));
  }

  // -------------------------------------------------------------------------------------------
  // Frames out

  /**
   * One row per observation, indexed by the input's row labels: outcome, relevance, similarity,
   * informativeness, weight and included (of one calibration, the first by default). A danfo
   * DataFrame when danfo is loaded in the session, plain column objects otherwise.
   *
   * @example
   * const df = p.toFrame();          // dfd.DataFrame indexed by date
   * df.sortValues("weight", { ascending: false }).head(5).print();
   */
  toFrame(options: PredictionFrameOptions = {}): FrameOut {
    return outputFrame(this.observationColumns(options.calibration), options);
  }

  /**
   * A Grid's Impact on Fit and Impact on Prediction, one row per attribute (indexed by name).
   *
   * @example
   * const impact = p.impactFrame(); // { attribute: [...], impact_on_fit: [...], impact_on_prediction: [...] }
   */
  impactFrame(options: ToFrameOptions = {}): FrameOut {
    return outputFrame(this.impactColumns(), options);
  }

  /**
   * Writes the observations (or, with `{ what: "impact" }`, a Grid's impacts) as CSV; returns the absolute path.
   *
   * @example
   * await p.toCSV("out/observations.csv");
   */
  toCSV(path: string, options: PredictionCsvOptions = {}): Promise<string> {
    return writeFrameCsv(options.what === "impact" ? this.impactColumns() : this.observationColumns(options.calibration), path);
  }

  /** The per-observation columns behind toFrame() and toCSV(). */
  observationColumns(calibration = 0): FrameColumns {
    const T = this.#view().yhat.length;
    if (!Number.isInteger(calibration) || calibration < 0 || calibration >= T) {
      throw usage(this.#label, `calibration ${String(calibration)} is not one of the result's (0 to ${T - 1})`);
    }
    const rows = { y: this.request?.y ?? this.context.y, rowLabels: this.rowLabels, indexName: this.indexName };
    return observationColumns(this.#view(), rows, calibration);
  }

  /** The impact columns behind impactFrame() and toCSV({ what: "impact" }). */
  impactColumns(): FrameColumns {
    const impact = this.impact;
    if (impact === undefined) throw this.#gridOnly();
    return impactColumns(impact);
  }

  // -------------------------------------------------------------------------------------------
  // Tables and charts

  /** The summary: yhat, fit, adjusted fit, K and n per calibration. */
  table(): DisplayTable {
    return displayTable(summaryTable(this.#view(), this.context, { title: this.title }));
  }

  /** The per-observation table: outcome, relevance, similarity, informativeness, weight, include. */
  observations(options: ObservationTableOptions = {}): DisplayTable {
    return displayTable(observationTable(this.#view(), this.context, options));
  }

  /** The weight of each observation. */
  weightsChart(options: FigureOptions = {}): DisplayFigure {
    return displayFigure(weightsFigure(this.#view(), this.context, options));
  }

  /** The outcome against relevance, coloured by inclusion (by weight for a Grid). */
  relevanceChart(options: FigureOptions = {}): DisplayFigure {
    const result = this.#view();
    if (result.relevance === undefined) throw usage(this.#label, "the result has no relevance to chart");
    return displayFigure(outcomeVsRelevanceFigure(result, this.context, options));
  }

  /** A Grid's Impact on Fit and Impact on Prediction by attribute. */
  impactChart(options: FigureOptions = {}): DisplayFigure {
    const result = this.#view();
    if (result.grid_insights === undefined) throw this.#gridOnly();
    return displayFigure(impactFigure(result, this.context, options));
  }

  /** yhat and fit across a PSR's thresholds. */
  thresholdChart(options: FigureOptions = {}): DisplayFigure {
    if (this.analysis === "grid") {
      throw usage(
        this.#label,
        "a Grid gives one composite prediction, not one per threshold",
        "Run psr(..., { threshold: [0, 0.2, 0.5, 0.8] }) to see yhat and fit across thresholds.",
      );
    }
    return displayFigure(thresholdFigure(this.#view(), this.context, options));
  }

  /**
   * A PSR over several thresholds as one figure with a slider: moving it shows, threshold by
   * threshold, the observations kept and dropped (with the relevance cut), yhat and fit, and the
   * weights. Every position is computed in advance, so it moves in a saved notebook, an HTML export
   * or a report with no kernel running.
   *
   * @example
   * const p = await rbp.psr(rows, spec, { threshold: [0, 0.2, 0.5, 0.8] });
   * await rbp.display(p.explore());
   */
  explore(options: FigureOptions = {}): DisplayFigure {
    if (this.analysis === "grid" || this.#view().yhat.length < 2) {
      throw usage(
        this.#label,
        this.analysis === "grid"
          ? "a Grid gives one composite prediction, not one per threshold"
          : "explore() needs several thresholds; this prediction has one calibration",
        "Run psr(..., { threshold: [0, 0.2, 0.5, 0.8] }) to explore the thresholds.",
      );
    }
    return displayFigure(exploreFigure(this.#view(), this.context, options));
  }

  /** The charts that suit this analysis (what show() draws). */
  charts(options: FigureOptions = {}): DisplayFigure[] {
    return resultFigures(this.#view(), this.context, options).map(displayFigure);
  }

  protected summary(): HtmlTable {
    return summaryTable(this.#view(), this.context, { title: this.title });
  }

  protected figures(options: FigureOptions): Figure[] {
    return resultFigures(this.#view(), this.context, options);
  }

  [JUPYTER_DISPLAY](): MimeBundle | Promise<MimeBundle> {
    return cellValue(this.bundle());
  }

  /** The headline numbers in one line. */
  headline(): string {
    return headline({ yhat: this.yhat, fit: this.fit, adjustedFit: this.adjustedFit, k: this.k, combinations: this.combinations });
  }

  protected firstLine(): string {
    return `${this.title}: ${this.headline()} (N = ${formatCount(this.observationCount)}, job ${this.receipt.job_id}, ${this.service} service)`;
  }

  protected reportSource(): ReportSource {
    return { result: this.result, request: this.request, receipt: { job_id: this.receipt.job_id } };
  }

  protected jsonFields() {
    return {
      middle: {
        yhat: this.yhat,
        fit: this.fit,
        adjustedFit: this.adjustedFit,
        k: this.k,
        combinations: this.combinations,
        thresholds: this.thresholds,
        calibrations: this.calibrations,
        theta: this.theta,
        thetaLabel: this.thetaLabel,
      },
      receipt: { job_id: this.receipt.job_id, job_code: this.receipt.job_code },
      tail: { result: this.result },
    };
  }

  [INSPECT](): string {
    return `${this.title}: ${this.headline()}\n(N = ${formatCount(this.observationCount)}, K = ${this.attributes.length}; show() draws the tables and charts)`;
  }

  /** The result for the tables and charts: columns made only when read (compact-result.ts `view`). */
  #view(): Result {
    return this.#result.view();
  }

  get #label(): string {
    return analysisLabel(this.analysis);
  }

  /** The refusal of a Grid's impacts on another analysis' prediction. */
  #gridOnly(): PredictionError {
    const label = this.#label;
    return usage(label, `Impact on Fit and Impact on Prediction come from a Grid; this is a ${label} prediction`, "Run grid(...) for the attribute impacts.");
  }
}

/** A failed row of an experiment. */
export interface FailedRow {
  /** Position of the theta row. */
  row: number;
  label: string;
  reason: string;
}

export interface ExperimentPredictionInit {
  analysis: Analysis;
  title: string;
  receipt: ExperimentReceipt;
  state: ExperimentState;
  rows: Prediction[];
  failures: FailedRow[];
  context: DisplayContext;
  options: Record<string, unknown>;
  notes: string[];
  elapsedMs: number;
  service: ServiceKind;
  /** The request as sent (every theta row). */
  request?: SentRequest;
  startedAt?: string;
  serviceUrl?: string;
}

/** Predictions for several circumstances (an experiment: one job per theta row). */
export class ExperimentPrediction extends PredictionBase {
  readonly receipt: ExperimentReceipt;
  /** The final state of every row (status, compact yhat and fit, a failed row's reason). */
  readonly state: ExperimentState;
  /** One Prediction per completed row, in row order. */
  readonly rows: ReadonlyArray<Prediction>;
  /** The rows that failed, with the service's reason. */
  readonly failures: ReadonlyArray<FailedRow>;

  constructor(init: ExperimentPredictionInit) {
    super(init);
    this.receipt = init.receipt;
    this.state = init.state;
    this.rows = init.rows;
    this.failures = init.failures;
  }

  /**
   * One row per completed theta row, indexed by its label: yhat, fit and adjusted fit of the chosen
   * calibration (the largest adjusted fit), with its threshold, censor, n and K. A danfo DataFrame
   * when danfo is loaded in the session, plain column objects otherwise.
   *
   * @example
   * const df = e.toFrame(); // indexed by date when the data named an index column
   */
  toFrame(options: ToFrameOptions = {}): FrameOut {
    return outputFrame(this.rowColumns(), options);
  }

  /** Writes toFrame()'s rows as CSV; returns the absolute path. */
  toCSV(path: string): Promise<string> {
    return writeFrameCsv(this.rowColumns(), path);
  }

  /** The per-row columns behind toFrame() and toCSV(). */
  rowColumns(): FrameColumns {
    return experimentColumns(
      this.labels,
      this.rows.map((p) => p.best),
      this.rows[0]?.indexName,
    );
  }

  /** Each completed row's result. */
  get results(): Result[] {
    return this.rows.map((p) => p.result);
  }
  /** Each completed row's label. */
  get labels(): string[] {
    return this.rows.map((p, j) => p.thetaLabel ?? `theta ${j + 1}`);
  }
  /** yhat per completed row (first calibration of each). */
  get yhat(): Array<number | null> {
    return this.rows.map((p) => p.yhat);
  }
  get fit(): Array<number | null> {
    return this.rows.map((p) => p.fit);
  }
  get adjustedFit(): Array<number | null> {
    return this.rows.map((p) => p.adjustedFit);
  }
  get outcome(): string {
    return this.context.outcome;
  }
  get attributes(): ReadonlyArray<string> {
    return this.context.attributes;
  }

  /** One row per circumstance: threshold, yhat, fit, adjusted fit, n. */
  table(): DisplayTable {
    return displayTable(experimentTable(this.results, this.context, { title: this.title }));
  }

  /** yhat and fit per theta row. */
  chart(options: FigureOptions = {}): DisplayFigure {
    return displayFigure(experimentFigure(this.results, this.context, options));
  }

  protected summary(): HtmlTable {
    return experimentTable(this.results, this.context, { title: this.title });
  }

  protected figures(options: FigureOptions): Figure[] {
    return [experimentFigure(this.results, this.context, options)];
  }

  protected firstLine(): string {
    return `${this.title}: ${formatCount(this.rows.length)} of ${formatCount(this.state.n_rows)} rows completed (${this.service} service)`;
  }

  protected override shownNotes(): string[] {
    return [...this.notes, ...this.failures.map((f) => `row ${f.label} failed: ${f.reason}`)];
  }

  protected reportSource(): ReportSource {
    // The completed rows' circumstances.
    const request = this.request !== undefined ? { ...this.request, theta: this.rows.map((p) => [...(p.theta ?? [])]) } : undefined;
    return { result: this.results, request, receipt: { experiment_id: this.receipt.experiment_id } };
  }

  protected jsonFields() {
    return {
      middle: { labels: this.labels, yhat: this.yhat, fit: this.fit, adjustedFit: this.adjustedFit, failures: [...this.failures] },
      receipt: this.receipt,
      tail: { rows: this.rows.map((p) => p.toJSON()) },
    };
  }

  [INSPECT](): string {
    const rows = this.rows.map((p, j) => `  ${this.labels[j]}: ${p.headline()}`);
    return [`${this.title}: ${this.rows.length} of ${this.state.n_rows} rows completed`, ...rows, "(show() draws the table and the chart)"].join("\n");
  }
}

/** Anything saveReport takes: predictions, or Reportables built by hand. */
export type ReportItem = Prediction | ExperimentPrediction | Reportable;

export function toReportable(item: ReportItem): VerifiableReportable {
  return item instanceof Prediction || item instanceof ExperimentPrediction ? item.toReportable() : item;
}
