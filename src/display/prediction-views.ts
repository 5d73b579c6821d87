/**
 * The views of a prediction, from plain data: how it is shown (the notes, the bundle of summary,
 * notes and charts, the text), its headline, and the columns its `toFrame()` and `toCSV()` write.
 * The notebook's `Prediction` and `ExperimentPrediction` (src/notebook/prediction.ts) hold the data
 * and delegate here; nothing here knows those classes.
 */
import type { Num, Result } from "../api/result.js";
import type { FrameColumns, OutCell } from "../frame/index.js";
import { figureBundle, figureHtml, htmlBundle, tableBundle, type MimeBundle } from "./bundle.js";
import type { Figure } from "./figures.js";
import { escapeHtml, formatCount, formatNumber } from "./format.js";
import { allShown, display, jupyterKernel } from "./jupyter.js";
import { TABLE_CSS, type HtmlTable } from "./tables.js";

/** The notes as a paragraph ("" without notes). */
export function notesHtml(notes: ReadonlyArray<string>): string {
  return notes.length > 0 ? `<p class="rbp-notes">${notes.map((n) => `Note: ${escapeHtml(n)}`).join("<br>")}</p>` : "";
}

/** The notes as a bundle of their own (HTML with the table styles, and text). */
export function notesBundle(notes: ReadonlyArray<string>): MimeBundle {
  return htmlBundle(`<style>${TABLE_CSS}</style>${notesHtml(notes)}`, notes.map((n) => `Note: ${n}`).join("\n"));
}

/**
 * Displays bundles in a kernel (a Promise where the kernel's display is one, as Deno's), or prints
 * `text` outside one.
 *
 * @example
 * await showAll([table[RBP_BUNDLE]()], table.text);
 */
export function showAll(bundles: MimeBundle[], text: string): Promise<void> | undefined {
  if (jupyterKernel() === "none") {
    process.stdout.write(`${text}\n`);
    return undefined;
  }
  return allShown(bundles.map((b) => display(b)));
}

/** What a prediction shows: its notes, its summary table, its charts, and its text. */
export interface PredictionView {
  notes: ReadonlyArray<string>;
  /** The summary table as HTML and text (what `table()` returns). */
  summary: HtmlTable;
  figures: ReadonlyArray<Figure>;
  /** The first line of the text (title and headline). */
  firstLine: string;
}

/**
 * What `show()` displays, one bundle each: the notes, the summary table, each chart.
 *
 * @example
 * showAll(predictionBundles(view), predictionText(view));
 */
export function predictionBundles(view: PredictionView): MimeBundle[] {
  const bundles: MimeBundle[] = [];
  if (view.notes.length > 0) bundles.push(notesBundle(view.notes));
  bundles.push(tableBundle(view.summary));
  for (const f of view.figures) bundles.push(figureBundle(f));
  return bundles;
}

/**
 * The notes, the summary and the charts as one bundle (HTML and text).
 *
 * @example
 * predictionBundle(view)["text/html"]; // <div class="rbp-prediction">...
 */
export function predictionBundle(view: PredictionView): MimeBundle {
  const html = [`<div class="rbp-prediction">`, notesHtml(view.notes), view.summary.html, ...view.figures.map((f) => figureHtml(f)), `</div>`].join("");
  return { "text/html": html, "text/plain": predictionText(view) };
}

/** The text of a prediction: its first line, the summary table, the notes. */
export function predictionText(view: Pick<PredictionView, "firstLine" | "summary" | "notes">): string {
  const lines = [view.firstLine, view.summary.text];
  for (const n of view.notes) lines.push(`Note: ${n}`);
  return lines.join("\n");
}

/** A prediction's headline numbers. */
export interface Headline {
  yhat: number | null;
  fit: number | null;
  adjustedFit: number | null;
  k: number | undefined;
  combinations: number | undefined;
}

/**
 * The headline numbers in one line.
 *
 * @example
 * headline({ yhat: 3.2, fit: 0.41, adjustedFit: 0.39, k: 4, combinations: undefined }); // "yhat 3.2, fit 0.41, adjusted fit 0.39, K 4"
 */
export function headline(h: Headline): string {
  const parts = [`yhat ${formatNumber(h.yhat)}`, `fit ${formatNumber(h.fit)}`, `adjusted fit ${formatNumber(h.adjustedFit)}`];
  if (h.k !== undefined) parts.push(`K ${h.k}`);
  if (h.combinations !== undefined) parts.push(`${formatCount(h.combinations)} combinations`);
  return parts.join(", ");
}

/**
 * The per-observation columns of one calibration (checked by the caller): outcome, relevance,
 * similarity, informativeness, weight and included, indexed by the row labels.
 *
 * @example
 * observationColumns(p.result, { y, rowLabels, indexName: "date" }, 0).columns; // ["outcome", "relevance", ...]
 */
export function observationColumns(
  r: Result,
  rows: { y: ReadonlyArray<Num> | undefined; rowLabels: ReadonlyArray<string>; indexName: string | undefined },
  calibration: number,
): FrameColumns {
  const N = r.weights.length;
  const pick = (v: ReadonlyArray<Num> | undefined): OutCell[] => Array.from({ length: N }, (_, i) => v?.[i] ?? null);
  return {
    indexName: rows.indexName ?? "label",
    index: [...rows.rowLabels],
    columns: ["outcome", "relevance", "similarity", "informativeness", "weight", "included"],
    data: {
      outcome: pick(rows.y),
      relevance: pick(r.relevance),
      similarity: pick(r.similarity),
      informativeness: pick(r.info_x),
      weight: r.weights.map((row) => row[calibration] ?? null),
      included: r.include !== undefined ? r.include.map((row) => row[calibration] === 1) : Array.from({ length: N }, () => null),
    },
  };
}

/** One attribute's Grid impacts. */
export interface ImpactRow {
  attribute: string;
  impactOnFit: Num;
  impactOnPrediction: Num;
}

/**
 * A Grid's impacts, one row per attribute (indexed by name).
 *
 * @example
 * impactColumns(p.impact).columns; // ["impact_on_fit", "impact_on_prediction"]
 */
export function impactColumns(impact: ReadonlyArray<ImpactRow>): FrameColumns {
  return {
    indexName: "attribute",
    index: impact.map((a) => a.attribute),
    columns: ["impact_on_fit", "impact_on_prediction"],
    data: { impact_on_fit: impact.map((a) => a.impactOnFit), impact_on_prediction: impact.map((a) => a.impactOnPrediction) },
  };
}

/** The chosen calibration of one experiment row, as a row of its frame. */
export interface ChosenCalibration {
  yhat: Num;
  fit: Num;
  adjustedFit: Num;
  threshold: number | undefined;
  censor: string | undefined;
  n: number | undefined;
  k: number | undefined;
}

/**
 * An experiment's rows: yhat, fit, adjusted fit, threshold, censor, n and K of each row's chosen calibration.
 *
 * @example
 * experimentColumns(e.labels, e.rows.map((p) => p.best), "date").index; // the rows' labels
 */
export function experimentColumns(labels: ReadonlyArray<string>, chosen: ReadonlyArray<ChosenCalibration>, indexName: string | undefined): FrameColumns {
  return {
    indexName: indexName ?? "label",
    index: [...labels],
    columns: ["yhat", "fit", "adjusted_fit", "threshold", "censor", "n", "k"],
    data: {
      yhat: chosen.map((c) => c.yhat),
      fit: chosen.map((c) => c.fit),
      adjusted_fit: chosen.map((c) => c.adjustedFit),
      threshold: chosen.map((c) => c.threshold ?? null),
      censor: chosen.map((c) => c.censor ?? null),
      n: chosen.map((c) => c.n ?? null),
      k: chosen.map((c) => c.k ?? null),
    },
  };
}
