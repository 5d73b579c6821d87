/**
 * `saveReport(prediction or list, path)`: one HTML file with every table and chart of each
 * prediction; each prediction gets a section with its options, notes, summary, charts and
 * observations. Where plotly.js comes from is the `plotly` option, picked knowingly:
 * - `"inline"` (default): the minified plotly.js, gzipped, once in the head (about 2 MB; the file
 *   stands alone and opens offline);
 * - `"file"`: `plotly-<version>.min.js` written beside the report and loaded from there (the report
 *   is then tens of KB, but the two files travel together);
 * - a URL (`"https://cdn.plot.ly/plotly-3.7.0.min.js"`): loaded from there (small; needs the network).
 */
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import type { Result } from "../api/result.js";
import { analysisLabel } from "../engine/result.js";
import { figureHtml, plotlyFileName, plotlyInlineScript, plotlyMinifiedSource, plotlyVersion } from "./bundle.js";
import { analysisOf, type DisplayContext } from "./context.js";
import { canExplore, experimentFigure, exploreFigure, resultFigures, type Figure, type FigureOptions } from "./figures.js";
import { escapeHtml, formatCount, formatNumber } from "./format.js";
import { analysisName, experimentLabels, experimentTable, observationTable, optionsTable, summaryTable, TABLE_CSS } from "./tables.js";

/** What a report shows of one prediction (the notebook layer's prediction objects provide this). */
export interface Reportable {
  title: string;
  /** One result, or one per theta row of an experiment. */
  result: Result | ReadonlyArray<Result>;
  context: DisplayContext;
  /** The options sent, shown as given. */
  options?: Record<string, unknown>;
  /** Notes on the data (dropped rows, skipped columns: FrameRequest.notes). */
  notes?: ReadonlyArray<string>;
}

export interface ReportOptions {
  /** The page title (default: the prediction's title, or "Relevance-based predictions"). */
  title?: string;
  /** The date in the header (default: now). */
  date?: Date;
  /** Observation rows per table before truncating (default 100). */
  maxRows?: number;
  /** Passed to every chart (WebGL threshold, height). */
  figures?: FigureOptions;
  /** Where the page gets plotly.js: "inline" (default), "file" (beside the report), or a URL (see the module comment). */
  plotly?: ReportPlotly;
}

/** Where a report gets plotly.js: inlined, a file beside it, or a URL (http, https, or relative). */
export type ReportPlotly = "inline" | "file" | (string & {});

/** The `<script>` giving the page plotly.js, and the words for the header. */
function plotlyHead(choice: ReportPlotly): { script: string; words: string } {
  const version = plotlyVersion();
  if (choice === "inline") return { script: plotlyInlineScript(), words: `plotly.js ${version} inlined` };
  const src = choice === "file" ? plotlyFileName() : choice;
  if (choice !== "file" && (src.trim() === "" || /^\s*(javascript|data|vbscript):/i.test(src))) {
    throw new Error(`saveReport: plotly is "inline", "file" or a URL of plotly.js; got ${JSON.stringify(choice)}`);
  }
  return {
    script: `<script type="text/javascript" src="${escapeHtml(src)}" data-rbp-plotly-url="${escapeHtml(src)}"></script>`,
    words: choice === "file" ? `plotly.js ${version} from ${src} beside this file` : `plotly.js from ${src}`,
  };
}

const PAGE_CSS = `body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#222;margin:0;background:#fafafa}
main{max-width:1100px;margin:0 auto;padding:1.5em 2em 4em;background:#fff}
h1{font-size:1.6em;margin:.2em 0}h2{font-size:1.3em;margin:1.6em 0 .3em;border-bottom:2px solid #1f77b4;padding-bottom:.2em}
h3{font-size:1.05em;margin:1.2em 0 .3em}
.rbp-meta,.rbp-notes{color:#555;margin:.3em 0}
.rbp-figure{margin:.8em 0;border:1px solid #eee}
details{margin:.4em 0}summary{cursor:pointer}
nav ol{margin:.3em 0 0 1.2em;padding:0}
${TABLE_CSS}`;

function isList(items: Reportable | ReadonlyArray<Reportable>): items is ReadonlyArray<Reportable> {
  return Array.isArray(items);
}

function sectionHtml(item: Reportable, index: number, options: ReportOptions, figureId: () => string, pageTitle: string): string {
  const { context } = item;
  const results: ReadonlyArray<Result> = Array.isArray(item.result) ? (item.result as ReadonlyArray<Result>) : [item.result as Result];
  if (results.length === 0) throw new Error(`saveReport: "${item.title}" has no result`);
  const first = results[0];
  const analysis = analysisName(first, context);
  const parts: string[] = [];
  // The page's H1 already says the title of a one-prediction report: the section's H2 says what it holds.
  const heading = item.title === pageTitle ? `${analysis} prediction of ${context.outcome}: options, summary, charts and observations` : item.title;
  parts.push(`<section class="rbp-section" id="prediction-${index + 1}"><h2>${escapeHtml(heading)}</h2>`);
  const meta = [
    `analysis: ${analysis}`,
    `outcome: ${context.outcome}`,
    `attributes (K = ${context.attributes.length}): ${context.attributes.join(", ")}`,
    `N = ${formatCount(first.weights.length)}`,
  ];
  if (Array.isArray(item.result)) meta.push(`${formatCount(results.length)} theta rows`);
  parts.push(`<p class="rbp-meta">${meta.map(escapeHtml).join(" · ")}</p>`);
  if (item.notes !== undefined && item.notes.length > 0) parts.push(`<p class="rbp-notes">${item.notes.map((n) => `Note: ${escapeHtml(n)}`).join("<br>")}</p>`);
  parts.push(optionsTable(item.options ?? {}, "Options", false).html);
  const figure = (f: Figure) => figureHtml(f, { plotly: false, id: figureId() });
  const maxRows = options.maxRows ?? 100;
  if (!Array.isArray(item.result)) {
    const result = first;
    parts.push(summaryTable(result, context, { style: false }).html);
    for (const f of resultFigures(result, context, options.figures)) parts.push(figure(f));
    // A PSR over several thresholds: the slider figure, which moves in the saved file with no kernel.
    if (canExplore(result, context)) parts.push(figure(exploreFigure(result, context, options.figures)));
    parts.push(observationTable(result, context, { style: false, maxRows }).html);
  } else {
    parts.push(experimentTable(results, context, { style: false }).html);
    parts.push(figure(experimentFigure(results, context, options.figures)));
    const labels = experimentLabels(results.length, context);
    results.forEach((r, j) => {
      const best = r.yhat.length === 1 ? r.yhat[0] : null;
      parts.push(
        `<details><summary>${escapeHtml(labels[j])}${best !== null ? `: yhat ${escapeHtml(formatNumber(best))}` : ""}</summary>` +
          summaryTable(r, context, { style: false }).html +
          observationTable(r, context, { style: false, maxRows: Math.min(maxRows, 20) }).html +
          `</details>`,
      );
    });
  }
  parts.push(`</section>`);
  return parts.join("\n");
}

/** The report as one HTML string (plotly.js by the `plotly` option: inlined once by default). */
export function reportHtml(items: Reportable | ReadonlyArray<Reportable>, options: ReportOptions = {}): string {
  const list = isList(items) ? items : [items];
  if (list.length === 0) throw new Error("saveReport: nothing to report (an empty list)");
  const title = options.title ?? (list.length === 1 ? list[0].title : "Relevance-based predictions");
  const head = plotlyHead(options.plotly ?? "inline");
  const date = options.date ?? new Date();
  let n = 0;
  const figureId = () => `rbp-report-fig-${++n}`;
  const sections = list.map((item, i) => sectionHtml(item, i, options, figureId, title));
  const analyses = [
    ...new Set(
      list
        .map((item) => analysisOf(Array.isArray(item.result) ? (item.result as Result[])[0] : (item.result as Result), item.context))
        .filter((a) => a !== undefined),
    ),
  ];
  const nav =
    list.length > 1
      ? `<nav><strong>Predictions</strong><ol>${list.map((item, i) => `<li><a href="#prediction-${i + 1}">${escapeHtml(item.title)}</a></li>`).join("")}</ol></nav>`
      : "";
  return [
    `<!DOCTYPE html>`,
    `<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">`,
    `<meta name="generator" content="rbp-notebook"><title>${escapeHtml(title)}</title>`,
    `<style>${PAGE_CSS}</style>`,
    head.script,
    `</head><body><main>`,
    `<header><h1>${escapeHtml(title)}</h1><p class="rbp-meta">${escapeHtml(
      `Generated ${date
        .toISOString()
        .replace("T", " ")
        .replace(/\.\d+Z$/, " UTC")} by rbp-notebook` +
        (analyses.length > 0 ? ` · ${analyses.map((a) => analysisLabel(a!)).join(", ")}` : "") +
        ` · ${formatCount(list.length)} ${list.length === 1 ? "prediction" : "predictions"} · ${head.words}`,
    )}</p></header>`,
    nav,
    ...sections,
    `</main></body></html>`,
  ].join("\n");
}

/**
 * Writes the report to `path` (folders created as needed), and with `plotly: "file"` plotly.js
 * beside it; returns the absolute path of the report.
 *
 * @example
 * await saveReport(prediction, "reports/grid.html");                     // one file, plotly.js inlined (about 2 MB)
 * await saveReport(prediction, "reports/grid.html", { plotly: "file" }); // grid.html + plotly-3.7.0.min.js
 */
export async function saveReport(items: Reportable | ReadonlyArray<Reportable>, path: string, options: ReportOptions = {}): Promise<string> {
  const html = reportHtml(items, options);
  const target = resolve(path);
  await mkdir(dirname(target), { recursive: true });
  if (options.plotly === "file") await writeFile(join(dirname(target), plotlyFileName()), plotlyMinifiedSource(), "utf8");
  await writeFile(target, html, "utf8");
  return target;
}
