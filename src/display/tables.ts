/**
 * HTML tables over a normalised Result: the summary (yhat, fit, adjusted fit, K, n, threshold and
 * censor per calibration) and the per-observation table (relevance, similarity, informativeness,
 * weight and include), truncated with a count for large N. Every string is escaped.
 */
import type { Num, Result } from "../api/result.js";
import { analysisLabel } from "../engine/result.js";
import {
  analysisOf,
  calibrationLabel,
  calibrations,
  calibrationThresholds,
  defaultCalibration,
  observations,
  rowLabelsOf,
  type DisplayContext,
} from "./context.js";
import { escapeHtml, formatCount, formatNumber, MISSING, textTable } from "./format.js";

/** CSS for the tables (scoped to .rbp-table); included once per output. */
export const TABLE_CSS = `.rbp-table{border-collapse:collapse;margin:.5em 0;font:13px/1.35 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;font-variant-numeric:tabular-nums}
.rbp-table caption{caption-side:top;text-align:left;font-weight:600;padding:.25em 0}
.rbp-table th,.rbp-table td{padding:.2em .6em;border-bottom:1px solid #ddd;text-align:right;white-space:nowrap}
.rbp-table th{background:#f4f5f7;font-weight:600}
.rbp-table th:first-child,.rbp-table td:first-child{text-align:left}
.rbp-table tr.rbp-excluded td{color:#888}
.rbp-table tr.rbp-more td{text-align:left;font-style:italic;color:#555}
.rbp-notes{font:13px/1.35 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#555;margin:.2em 0 .6em}`;

export interface HtmlTable {
  /** The table as HTML (with its <style> unless asked not to). */
  html: string;
  /** The same as aligned plain text. */
  text: string;
}

function cellsHtml(tag: "td" | "th", cells: string[]): string {
  return cells.map((c) => `<${tag}>${escapeHtml(c)}</${tag}>`).join("");
}

function tableHtml(caption: string, header: string[], rows: { cells: string[]; cls?: string }[], footer?: string, style = true): string {
  const head = `<thead><tr>${cellsHtml("th", header)}</tr></thead>`;
  const body = rows.map((r) => `<tr${r.cls ? ` class="${r.cls}"` : ""}>${cellsHtml("td", r.cells)}</tr>`).join("");
  const foot = footer !== undefined ? `<tr class="rbp-more"><td colspan="${header.length}">${escapeHtml(footer)}</td></tr>` : "";
  return `${style ? `<style>${TABLE_CSS}</style>` : ""}<div class="rbp-scroll" style="overflow-x:auto;max-width:100%"><table class="rbp-table"><caption>${escapeHtml(caption)}</caption>${head}<tbody>${body}${foot}</tbody></table></div>`;
}

export function analysisName(result: Result, context: DisplayContext): string {
  const a = analysisOf(result, context);
  return a !== undefined ? analysisLabel(a) : "Prediction";
}

export interface TableOptions {
  /** Include the <style> element (default true; a report includes the CSS once and passes false). */
  style?: boolean;
  /** The caption's title (default: the analysis and the outcome, e.g. "Grid prediction of Points"). */
  title?: string;
}

/**
 * The summary: one row per calibration (per threshold for PSR; MaxFit's winner; a Grid's
 * composite) with threshold, censor, yhat, fit, adjusted fit, K and n.
 */
export function summaryTable(result: Result, context: DisplayContext, options: TableOptions = {}): HtmlTable {
  const T = calibrations(result);
  const N = observations(result);
  const grid = analysisOf(result, context) === "grid";
  const thresholds = calibrationThresholds(result, context);
  const evaluated = result.thresholds ?? context.thresholds;
  const censors = result.censor_type ?? [];
  const header = ["threshold", "censor", `yhat (${context.outcome})`, "fit", "adjusted fit", "K", "n"];
  const rows: { cells: string[] }[] = [];
  for (let t = 0; t < T; t++) {
    const threshold = grid
      ? evaluated !== undefined
        ? `grid of ${evaluated.map((v) => formatNumber(v)).join(", ")}`
        : "grid"
      : thresholds !== undefined
        ? formatNumber(thresholds[t])
        : MISSING;
    const censor = grid || censors.length !== T ? censors.join(", ") : censors[t];
    const k = result.k !== undefined ? (result.k.length === T ? result.k[t] : result.k[0]) : context.attributes.length;
    // A Grid composite drops no observation: it averages PSR cells that each keep their own n.
    const n = grid ? `all ${formatCount(N)}` : result.n !== undefined && result.n.length === T ? formatCount(result.n[t]) : MISSING;
    rows.push({
      cells: [
        threshold,
        censor === "" ? MISSING : censor,
        formatNumber(result.yhat[t]),
        formatNumber(result.fit[t]),
        formatNumber(result.adjusted_fit[t]),
        String(k),
        n,
      ],
    });
  }
  const title = options.title ?? `${analysisName(result, context)} prediction of ${context.outcome}`;
  const caption = `${title}: N = ${formatCount(N)} observations, K = ${context.attributes.length} attributes (${context.attributes.join(", ")})`;
  const extra: string[] = [];
  // The n column explained where it holds counts (a result without n shows only dashes there).
  if (grid) {
    extra.push(
      "n: observations kept. A Grid composite keeps all of them: it averages PSR cells, each of which keeps its own n, so every observation gets a weight.",
    );
  } else if (result.n !== undefined && result.n.length === T) {
    extra.push("n: observations kept by the censor at that threshold (the rest share one small weight).");
  }
  if (result.yhat_linear !== undefined && result.yhat_linear !== null) extra.push(`linear regression prediction: ${formatNumber(result.yhat_linear)}`);
  if (result.info_theta !== undefined && result.info_theta !== null) extra.push(`informativeness of theta: ${formatNumber(result.info_theta)}`);
  for (const w of result.warnings ?? []) extra.push(`warning: ${w}`);
  let html = tableHtml(caption, header, rows, undefined, options.style !== false);
  if (extra.length > 0) html += `<p class="rbp-notes">${extra.map(escapeHtml).join("<br>")}</p>`;
  const text = [
    caption,
    textTable(
      header,
      rows.map((r) => r.cells),
    ),
    ...extra,
  ].join("\n");
  return { html, text };
}

export interface ObservationTableOptions extends TableOptions {
  /** Rows shown before truncating (default 50); the rest are counted ("... and 9,000 more rows"). */
  maxRows?: number;
  /** Which calibrations' weight and include columns to show: an index, or "all" (default "all" up to 4 calibrations, else the best). */
  calibration?: number | "all";
  /** Row order: as given (default), or by relevance or |weight| descending. */
  sort?: "none" | "relevance" | "weight";
}

/** The per-observation table: outcome, relevance, similarity, informativeness, weight and include. */
export function observationTable(result: Result, context: DisplayContext, options: ObservationTableOptions = {}): HtmlTable {
  const N = observations(result);
  const T = calibrations(result);
  const maxRows = Math.max(0, Math.floor(options.maxRows ?? 50));
  const labels = rowLabelsOf(result, context);
  const y = context.y !== undefined && context.y.length === N ? context.y : undefined;
  let shown: number[];
  const choice = options.calibration ?? (T <= 4 ? "all" : defaultCalibration(result));
  if (choice === "all") shown = Array.from({ length: T }, (_, t) => t);
  else {
    if (!Number.isInteger(choice) || choice < 0 || choice >= T) throw new Error(`observationTable: calibration ${choice} is not one of 0..${T - 1}`);
    shown = [choice];
  }
  const header = ["observation"];
  if (y !== undefined) header.push(context.outcome);
  header.push("relevance", "similarity", "informativeness");
  const include = result.include;
  for (const t of shown) {
    const label = calibrationLabel(result, context, t);
    header.push(label ? `weight (${label})` : "weight");
    if (include !== undefined) header.push(label ? `include (${label})` : "include");
  }
  const value = (v: Num[] | undefined, i: number) => formatNumber(v?.[i] ?? null);
  const order = Array.from({ length: N }, (_, i) => i);
  const sort = options.sort ?? "none";
  if (sort !== "none") {
    const t = shown[shown.length - 1];
    const key = (i: number): number => {
      const v = sort === "relevance" ? (result.relevance?.[i] ?? null) : result.weights[i][t];
      return v === null ? -Infinity : sort === "weight" ? Math.abs(v) : v;
    };
    order.sort((a, b) => key(b) - key(a) || a - b);
  }
  const rows = order.slice(0, maxRows).map((i) => {
    const cells = [labels[i]];
    if (y !== undefined) cells.push(formatNumber(y[i]));
    cells.push(value(result.relevance, i), value(result.similarity, i), value(result.info_x, i));
    for (const t of shown) {
      cells.push(formatNumber(result.weights[i][t]));
      if (include !== undefined) cells.push(include[i][t] === 1 ? "yes" : "no");
    }
    const excluded = include !== undefined && shown.length === 1 && include[i][shown[0]] === 0;
    return { cells, ...(excluded ? { cls: "rbp-excluded" } : {}) };
  });
  const more = N - rows.length;
  const footer = more > 0 ? `… and ${formatCount(more)} more ${more === 1 ? "row" : "rows"}` : undefined;
  const caption = `Observations (N = ${formatCount(N)})${sort !== "none" ? `, by ${sort === "weight" ? "|weight|" : sort} descending` : ""}`;
  const html = tableHtml(caption, header, rows, footer, options.style !== false);
  const text = [
    caption,
    textTable(
      header,
      rows.map((r) => r.cells),
    ),
    ...(footer ? [footer] : []),
  ].join("\n");
  return { html, text };
}

/** A summary across an experiment: one row per theta row (its best calibration unless one is chosen). */
export function experimentTable(results: ReadonlyArray<Result>, context: DisplayContext, options: TableOptions & { calibration?: number } = {}): HtmlTable {
  const labels = experimentLabels(results.length, context);
  const header = ["theta", "threshold", `yhat (${context.outcome})`, "fit", "adjusted fit", "n"];
  const rows = results.map((r, j) => {
    const t = options.calibration ?? defaultCalibration(r);
    const th = calibrationThresholds(r, context);
    const grid = analysisOf(r, context) === "grid";
    return {
      cells: [
        labels[j],
        grid ? "grid" : th !== undefined ? formatNumber(th[t]) : MISSING,
        formatNumber(r.yhat[t]),
        formatNumber(r.fit[t]),
        formatNumber(r.adjusted_fit[t]),
        r.n !== undefined && r.n.length === calibrations(r) ? formatCount(r.n[t]) : MISSING,
      ],
    };
  });
  const first = results[0];
  const caption =
    options.title ?? `${first ? analysisName(first, context) : "Prediction"} of ${context.outcome} for ${formatCount(results.length)} circumstances`;
  return {
    html: tableHtml(caption, header, rows, undefined, options.style !== false),
    text: [
      caption,
      textTable(
        header,
        rows.map((r) => r.cells),
      ),
    ].join("\n"),
  };
}

/** Labels for the theta rows of an experiment: the context's, else "theta 1".."theta M". */
export function experimentLabels(count: number, context: DisplayContext): string[] {
  const given = context.thetaLabels;
  if (given !== undefined && given.length === count) return [...given];
  return Array.from({ length: count }, (_, j) => `theta ${j + 1}`);
}

/** Options as a two-column table (for the report header). */
export function optionsTable(options: Record<string, unknown>, caption = "Options", style = true): HtmlTable {
  const rows = Object.entries(options)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => ({ cells: [k, typeof v === "string" ? v : JSON.stringify(v)] }));
  return {
    html: rows.length > 0 ? tableHtml(caption, ["option", "value"], rows, undefined, style) : `<p class="rbp-notes">${escapeHtml(caption)}: the defaults</p>`,
    text:
      rows.length > 0
        ? [
            caption,
            textTable(
              ["option", "value"],
              rows.map((r) => r.cells),
            ),
          ].join("\n")
        : `${caption}: the defaults`,
  };
}
