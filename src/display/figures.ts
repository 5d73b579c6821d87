/**
 * Charts as plain plotly specs `{ data, layout, config }` (JSON-serialisable: undefined numbers are
 * null, never NaN), built from a normalised Result and its DisplayContext:
 *
 * - `weightsFigure`: the weight of every observation (one series per calibration);
 * - `outcomeVsRelevanceFigure`: outcome against relevance, coloured by inclusion (by weight for a
 *   Grid, which has no single inclusion);
 * - `impactFigure`: a Grid's Impact on Fit and Impact on Prediction by attribute name;
 * - `thresholdFigure`: yhat and fit across thresholds (PSR);
 * - `experimentFigure`: yhat and fit per theta row of an experiment;
 * - `exploreFigure`: a PSR over several thresholds with a slider (kept observations, weights, yhat
 *   and fit move together, no kernel needed).
 *
 * Above `webglThreshold` points (default 2,000) the point charts use WebGL traces (`scattergl`),
 * which draw on a canvas: SVG with thousands of nodes is slow in a notebook.
 */
import type { Num, Result } from "../api/result.js";
import {
  analysisOf,
  attributeNames,
  calibrationLabel,
  calibrations,
  calibrationThresholds,
  defaultCalibration,
  observations,
  rowLabelsOf,
  type DisplayContext,
} from "./context.js";
import { formatCount, formatNumber } from "./format.js";
import { analysisName, experimentLabels } from "./tables.js";

export type Trace = { type: string } & Record<string, unknown>;

/** A plotly figure: what `Plotly.newPlot(el, data, layout, config)` takes. */
export interface Figure {
  data: Trace[];
  layout: Record<string, unknown>;
  config?: Record<string, unknown>;
}

export interface FigureOptions {
  /** Point count above which WebGL traces are used (default 2,000). */
  webglThreshold?: number;
  /** Chart height in pixels (default 420). */
  height?: number;
  /** Which calibration (threshold column) to show; default: the one with the largest adjusted fit. */
  calibration?: number;
}

export const DEFAULT_WEBGL_THRESHOLD = 2000;

export const COLORS = {
  included: "#1f77b4",
  excluded: "#b8b8b8",
  yhat: "#1f77b4",
  fit: "#d62728",
  impactFit: "#2ca02c",
  impactPrediction: "#9467bd",
  series: ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"],
} as const;

export const FIGURE_CONFIG = { responsive: true, displaylogo: false } as const;

function layout(title: string, options: FigureOptions, extra: Record<string, unknown>): Record<string, unknown> {
  return {
    title: { text: title, x: 0.01, xanchor: "left", font: { size: 15 } },
    height: options.height ?? 420,
    margin: { l: 70, r: 40, t: 60, b: 60 },
    hovermode: "closest",
    paper_bgcolor: "#ffffff",
    plot_bgcolor: "#ffffff",
    legend: { orientation: "h", x: 0, y: 1.02, yanchor: "bottom", xanchor: "left", bgcolor: "rgba(0,0,0,0)" },
    ...extra,
  };
}

function axis(title: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { title: { text: title }, gridcolor: "#eee", zerolinecolor: "#999", automargin: true, ...extra };
}

function pointType(count: number, options: FigureOptions): "scatter" | "scattergl" {
  return count > (options.webglThreshold ?? DEFAULT_WEBGL_THRESHOLD) ? "scattergl" : "scatter";
}

function checkCalibration(result: Result, t: number | undefined, what: string): number {
  const T = calibrations(result);
  const c = t ?? defaultCalibration(result);
  if (!Number.isInteger(c) || c < 0 || c >= T) throw new Error(`${what}: calibration ${c} is not one of 0..${T - 1}`);
  return c;
}

function column(rows: ReadonlyArray<ReadonlyArray<Num>>, t: number): Num[] {
  return rows.map((r) => r[t] ?? null);
}

function suffix(label: string): string {
  return label ? ` (${label})` : "";
}

/** Row labels that are all dates (2015-12-31, optionally with a time): the axis is then a date axis. */
export function areDates(labels: ReadonlyArray<string>): boolean {
  return labels.length > 0 && labels.every((l) => /^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?Z?)?$/.test(l) && !Number.isNaN(Date.parse(l)));
}

/** Observation axis: dates on a date axis; labels as categories when few and unique; else positions (labels on hover). */
function observationAxis(labels: string[], webgl: boolean): { x: (string | number)[]; title: string; type: string } {
  const N = labels.length;
  if (areDates(labels)) return { x: labels, title: "date", type: "date" };
  if (!webgl && N <= 100 && new Set(labels).size === N) return { x: labels, title: "observation", type: "category" };
  return { x: labels.map((_, i) => i), title: "observation (position)", type: "linear" };
}

/** The relevance cut of calibration t, when the censor cut on relevance (a vertical line on a relevance axis). */
function relevanceCut(result: Result, t: number): number | undefined {
  const censor =
    result.censor_type !== undefined ? (result.censor_type.length === calibrations(result) ? result.censor_type[t] : result.censor_type[0]) : undefined;
  const cut = result.r_star?.[t];
  if (censor !== "relevance" || cut === null || cut === undefined || result.include === undefined) return undefined;
  // Threshold 0 keeps everyone: a cut at the smallest relevance says nothing.
  if (result.include.every((row) => row[t] === 1)) return undefined;
  return cut;
}

function cutShape(cut: number, xref = "x", yref = "paper"): Record<string, unknown> {
  return { type: "line", xref, x0: cut, x1: cut, yref, y0: 0, y1: 1, line: { color: "#d62728", width: 1.5, dash: "dot" } };
}

/** The weight of every observation, one series per calibration (all when up to 6, else the chosen one). */
export function weightsFigure(result: Result, context: DisplayContext, options: FigureOptions = {}): Figure {
  const N = observations(result);
  const T = calibrations(result);
  const labels = rowLabelsOf(result, context);
  const type = pointType(N, options);
  const webgl = type === "scattergl";
  const shown =
    options.calibration !== undefined
      ? [checkCalibration(result, options.calibration, "weightsFigure")]
      : T <= 6
        ? [...Array(T).keys()]
        : [defaultCalibration(result)];
  const ax = observationAxis(labels, webgl);
  // Several calibrations: one panel each (small multiples sharing the observation axis), never overplotted.
  const panels = shown.length;
  const gap = 0.04;
  const span = (1 - gap * (panels - 1)) / panels;
  const yName = (s: number) => (s === 0 ? "y" : `y${s + 1}`);
  const data: Trace[] = shown.map((t, s) => {
    const label = calibrationLabel(result, context, t);
    const common = {
      x: ax.x,
      y: column(result.weights, t),
      name: label || "weight",
      text: labels,
      xaxis: "x",
      yaxis: yName(s),
      hovertemplate: `%{text}<br>weight %{y:.4g}${label ? `<br>${label}` : ""}<extra></extra>`,
    };
    const color = COLORS.series[s % COLORS.series.length];
    // Bars read best for a few hundred observations; beyond, markers (WebGL above the threshold).
    return N <= 500
      ? { type: "bar", ...common, textposition: "none", marker: { color } }
      : { type, mode: "markers", ...common, marker: { color, size: 3, opacity: 0.8 } };
  });
  const axes: Record<string, unknown> = {};
  const annotations: unknown[] = [];
  shown.forEach((t, s) => {
    // Panel 0 at the top.
    const top = 1 - s * (span + gap);
    const domain = [Math.max(0, top - span), top];
    axes[s === 0 ? "yaxis" : `yaxis${s + 1}`] = axis(panels > 1 ? "" : "weight", { zeroline: true, exponentformat: "power", domain, anchor: "x" });
    if (panels > 1) {
      annotations.push({
        xref: "paper",
        x: 0,
        xanchor: "left",
        yref: "paper",
        y: top,
        yanchor: "top",
        text: `weights, ${calibrationLabel(result, context, t) || "calibration " + (t + 1)}`,
        showarrow: false,
        font: { size: 11, color: "#444" },
        bgcolor: "rgba(255,255,255,0.8)",
      });
    }
  });
  const height = options.height ?? (panels > 1 ? 110 + 130 * panels : 420);
  return {
    data,
    layout: layout(
      `${analysisName(result, context)}: weight of each observation${panels > 1 ? ", one panel per threshold" : ""}`,
      { ...options, height },
      {
        barmode: "group",
        showlegend: false,
        xaxis: axis(ax.title, { type: ax.type, anchor: panels > 1 ? yName(panels - 1) : "y" }),
        ...axes,
        annotations,
      },
    ),
    config: { ...FIGURE_CONFIG },
  };
}

/** Outcome against relevance, coloured by inclusion at one calibration (by weight for a Grid). */
export function outcomeVsRelevanceFigure(result: Result, context: DisplayContext, options: FigureOptions = {}): Figure {
  const N = observations(result);
  const y = context.y;
  if (y === undefined || y.length !== N) {
    throw new Error(`outcomeVsRelevanceFigure: needs the ${N} outcomes sent (context.y)${y !== undefined ? `, got ${y.length}` : ""}`);
  }
  if (result.relevance === undefined) throw new Error("outcomeVsRelevanceFigure: the result has no relevance");
  const t = checkCalibration(result, options.calibration, "outcomeVsRelevanceFigure");
  const labels = rowLabelsOf(result, context);
  const type = pointType(N, options);
  const size = type === "scattergl" ? 5 : 9;
  const relevance = result.relevance;
  const calib = calibrationLabel(result, context, t);
  const hover = `%{text}<br>relevance %{x:.4g}<br>${escapeTemplate(context.outcome)} %{y:.4g}<extra>%{fullData.name}</extra>`;
  const pick = (keep: (i: number) => boolean) => {
    const idx = [...Array(N).keys()].filter(keep);
    return { x: idx.map((i) => relevance[i]), y: idx.map((i) => y[i]), text: idx.map((i) => labels[i]) };
  };
  const data: Trace[] = [];
  if (result.include !== undefined) {
    const include = result.include;
    const inc = pick((i) => include[i][t] === 1);
    const exc = pick((i) => include[i][t] !== 1);
    data.push({
      type,
      mode: "markers",
      name: `included (${inc.x.length})`,
      ...inc,
      hovertemplate: hover,
      marker: { color: COLORS.included, size, line: { width: 0 } },
    });
    data.push({
      type,
      mode: "markers",
      name: `excluded (${exc.x.length})`,
      ...exc,
      hovertemplate: hover,
      marker: { color: COLORS.excluded, size, line: { width: 0 } },
    });
  } else {
    const all = pick(() => true);
    data.push({
      type,
      mode: "markers",
      name: "observations",
      ...all,
      hovertemplate: `%{text}<br>relevance %{x:.4g}<br>${escapeTemplate(context.outcome)} %{y:.4g}<br>weight %{marker.color:.4g}<extra></extra>`,
      marker: { color: column(result.weights, t), colorscale: "RdBu", cmid: 0, size, showscale: true, colorbar: { title: { text: "weight" } } },
    });
  }
  const yhat = result.yhat[t];
  const shapes: unknown[] = [];
  const annotations: unknown[] = [];
  const cut = relevanceCut(result, t);
  if (cut !== undefined) {
    shapes.push(cutShape(cut));
    annotations.push({
      xref: "x",
      x: cut,
      xanchor: "left",
      yref: "paper",
      y: 1,
      yanchor: "bottom",
      text: `cut ${formatNumber(cut, 4)}`,
      showarrow: false,
      font: { size: 11, color: "#d62728" },
    });
  }
  if (yhat !== null) {
    shapes.push({ type: "line", xref: "paper", x0: 0, x1: 1, yref: "y", y0: yhat, y1: yhat, line: { color: "#444", width: 1, dash: "dash" } });
    annotations.push({
      xref: "paper",
      x: 1,
      xanchor: "right",
      yref: "y",
      y: yhat,
      yanchor: "bottom",
      text: `yhat ${formatNumber(yhat, 4)}`,
      showarrow: false,
      font: { size: 11, color: "#444" },
    });
  }
  return {
    data,
    layout: layout(`${escapeTemplate(context.outcome)} against relevance${suffix(calib)}`, options, {
      showlegend: result.include !== undefined,
      xaxis: axis("relevance"),
      yaxis: axis(context.outcome),
      shapes,
      annotations,
    }),
    config: { ...FIGURE_CONFIG },
  };
}

/** A Grid's Impact on Fit and Impact on Prediction, side by side, by attribute name. */
export function impactFigure(result: Result, context: DisplayContext, options: FigureOptions = {}): Figure {
  const gi = result.grid_insights;
  if (gi === undefined) throw new Error("impactFigure: the result has no Grid insights (Impact on Fit and Impact on Prediction come from a Grid)");
  const names = attributeNames(context, gi.impact_on_fit.length, "impactFigure");
  // Listed top to bottom in the attributes' order.
  const y = [...names].reverse();
  const rev = (v: Num[]) => [...v].reverse();
  const height = options.height ?? Math.max(320, 120 + 32 * names.length);
  return {
    data: [
      {
        type: "bar",
        orientation: "h",
        name: "Impact on Fit",
        x: rev(gi.impact_on_fit),
        y,
        xaxis: "x",
        yaxis: "y",
        textposition: "none",
        marker: { color: COLORS.impactFit },
        hovertemplate: "%{y}<br>Impact on Fit %{x:.4g}<extra></extra>",
      },
      {
        type: "bar",
        orientation: "h",
        name: "Impact on Prediction",
        x: rev(gi.impact_on_prediction),
        y,
        xaxis: "x2",
        yaxis: "y2",
        textposition: "none",
        marker: { color: COLORS.impactPrediction },
        hovertemplate: `%{y}<br>Impact on Prediction %{x:.4g} (${escapeTemplate(context.outcome)})<extra></extra>`,
      },
    ],
    layout: layout(
      `Grid: Impact on Fit and Impact on Prediction by attribute`,
      { ...options, height },
      {
        showlegend: false,
        xaxis: axis("Impact on Fit", { domain: [0, 0.46], anchor: "y" }),
        yaxis: axis("", { type: "category", anchor: "x" }),
        xaxis2: axis(`Impact on Prediction (${context.outcome})`, { domain: [0.54, 1], anchor: "y2" }),
        yaxis2: axis("", { type: "category", anchor: "x2", showticklabels: false, matches: "y" }),
        margin: { l: 120, r: 40, t: 60, b: 60 },
      },
    ),
    config: { ...FIGURE_CONFIG },
  };
}

/** yhat (left axis) and fit (right axis) across the thresholds of a PSR. */
export function thresholdFigure(result: Result, context: DisplayContext, options: FigureOptions = {}): Figure {
  if (analysisOf(result, context) === "grid") {
    throw new Error("thresholdFigure: a Grid gives one composite prediction, not one per threshold; use a PSR result");
  }
  const T = calibrations(result);
  const th = calibrationThresholds(result, context);
  const x = th ?? Array.from({ length: T }, (_, t) => t + 1);
  const text = x.map((_, t) => calibrationLabel(result, context, t));
  return {
    data: [
      {
        type: "scatter",
        mode: "lines+markers",
        name: "yhat",
        x,
        y: [...result.yhat],
        text,
        yaxis: "y",
        line: { color: COLORS.yhat },
        marker: { size: 8 },
        hovertemplate: "%{text}<br>yhat %{y:.4g}<extra></extra>",
      },
      {
        type: "scatter",
        mode: "lines+markers",
        name: "fit",
        x,
        y: [...result.fit],
        text,
        yaxis: "y2",
        line: { color: COLORS.fit, dash: "dot" },
        marker: { size: 8, symbol: "diamond" },
        hovertemplate: "%{text}<br>fit %{y:.4g}<extra></extra>",
      },
    ],
    layout: layout(`${analysisName(result, context)}: yhat and fit across thresholds`, options, {
      xaxis: axis(th !== undefined ? "threshold" : "calibration", th !== undefined ? {} : { dtick: 1 }),
      yaxis: axis(`yhat (${context.outcome})`, { title: { text: `yhat (${context.outcome})`, font: { color: COLORS.yhat } } }),
      yaxis2: axis("fit", { overlaying: "y", side: "right", showgrid: false, title: { text: "fit", font: { color: COLORS.fit } } }),
      margin: { l: 70, r: 70, t: 60, b: 60 },
    }),
    config: { ...FIGURE_CONFIG },
  };
}

/** yhat (bars, left axis) and fit (markers, right axis) per theta row of an experiment. */
export function experimentFigure(results: ReadonlyArray<Result>, context: DisplayContext, options: FigureOptions = {}): Figure {
  if (results.length === 0) throw new Error("experimentFigure: no results");
  const M = results.length;
  const labels = experimentLabels(M, context);
  const calib = results.map((r) => checkCalibration(r, options.calibration, "experimentFigure"));
  const unique = new Set(labels).size === M;
  const x: (string | number)[] = unique ? labels : labels.map((_, j) => j + 1);
  const yhat = results.map((r, j) => r.yhat[calib[j]]);
  const fit = results.map((r, j) => r.fit[calib[j]]);
  const text = results.map((r, j) => {
    const c = calibrationLabel(r, context, calib[j]);
    return c ? `${labels[j]} (${c})` : labels[j];
  });
  const type = pointType(M, options);
  const ordered = areDates(labels);
  const yhatTrace: Trace =
    M <= 60 || !ordered
      ? { type: "bar", name: "yhat", x, y: yhat, text, textposition: "none", yaxis: "y", marker: { color: COLORS.yhat, opacity: 0.85 } }
      : { type, mode: "lines+markers", name: "yhat", x, y: yhat, text, yaxis: "y", line: { color: COLORS.yhat }, marker: { size: 4 } };
  yhatTrace.hovertemplate = "%{text}<br>yhat %{y:.4g}<extra></extra>";
  return {
    data: [
      yhatTrace,
      {
        type,
        // A line joins rows only when they follow one another (dates); unrelated rows get markers.
        mode: ordered ? (M <= 60 ? "markers+lines" : "lines") : "markers",
        name: "fit",
        x,
        y: fit,
        text,
        yaxis: "y2",
        line: { color: COLORS.fit, dash: "dot" },
        marker: { color: COLORS.fit, size: 8, symbol: "diamond" },
        hovertemplate: "%{text}<br>fit %{y:.4g}<extra></extra>",
      },
    ],
    layout: layout(`${analysisName(results[0], context)}: yhat and fit per theta row`, options, {
      xaxis: axis(ordered ? "date" : unique ? "theta" : "theta (position)", ordered ? { type: "date" } : unique ? { type: "category" } : {}),
      yaxis: axis(`yhat (${context.outcome})`, { title: { text: `yhat (${context.outcome})`, font: { color: COLORS.yhat } } }),
      yaxis2: axis("fit", { overlaying: "y", side: "right", showgrid: false, rangemode: "tozero", title: { text: "fit", font: { color: COLORS.fit } } }),
      margin: { l: 70, r: 70, t: 60, b: 60 },
    }),
    config: { ...FIGURE_CONFIG },
  };
}

/** The charts that suit a result: Grid impact, PSR thresholds (T > 1), weights, outcome against relevance (with y). */
export function resultFigures(result: Result, context: DisplayContext, options: FigureOptions = {}): Figure[] {
  const figures: Figure[] = [];
  const analysis = analysisOf(result, context);
  if (result.grid_insights !== undefined) figures.push(impactFigure(result, context, options));
  if (analysis !== "grid" && calibrations(result) > 1) figures.push(thresholdFigure(result, context, options));
  figures.push(weightsFigure(result, context, options));
  if (context.y !== undefined && context.y.length === observations(result) && result.relevance !== undefined) {
    figures.push(outcomeVsRelevanceFigure(result, context, options));
  }
  return figures;
}

/** Plotly reads `%{...}` in hover templates and titles: a name holding one is written so it shows as is. */
function escapeTemplate(s: string): string {
  return s.replace(/%\{/g, "%\u200b{");
}

/** The trace types of a figure (for tests and text/plain descriptions). */
export function traceTypes(figure: Figure): string[] {
  return figure.data.map((d) => d.type);
}

/** A figure's title. */
export function figureTitle(figure: Figure): string {
  const t = figure.layout.title as { text?: string } | string | undefined;
  return typeof t === "string" ? t : (t?.text ?? "figure");
}

/** Whether exploreFigure can draw this result: a PSR over several thresholds, with inclusion, relevance and the outcomes. */
export function canExplore(result: Result, context: DisplayContext): boolean {
  return (
    analysisOf(result, context) === "psr" &&
    calibrations(result) > 1 &&
    calibrationThresholds(result, context) !== undefined &&
    result.include !== undefined &&
    result.relevance !== undefined &&
    context.y?.length === observations(result)
  );
}

/** What the explore figure draws, checked once: the result's arrays and the context's outcomes. */
interface ExploreInputs {
  result: Result;
  context: DisplayContext;
  include: NonNullable<Result["include"]>;
  relevance: NonNullable<Result["relevance"]>;
  y: NonNullable<DisplayContext["y"]>;
  th: readonly number[];
  labels: string[];
}

function exploreInputs(result: Result, context: DisplayContext): ExploreInputs {
  const N = observations(result);
  const T = calibrations(result);
  const th = calibrationThresholds(result, context);
  const y = context.y;
  if (analysisOf(result, context) === "grid") throw new Error("exploreFigure: a Grid has one composite, not one calibration per threshold; use a PSR");
  if (T < 2 || th === undefined) throw new Error(`exploreFigure: needs a PSR over several thresholds (this result has ${T} calibration${T === 1 ? "" : "s"})`);
  if (result.include === undefined || result.relevance === undefined) throw new Error("exploreFigure: the result has no inclusion or no relevance");
  if (y === undefined || y.length !== N) throw new Error(`exploreFigure: needs the ${N} outcomes sent (context.y)`);
  return { result, context, include: result.include, relevance: result.relevance, y, th, labels: rowLabelsOf(result, context) };
}

/**
 * A PSR over several thresholds as one figure a reader moves with a slider, with no kernel running:
 * outcome against relevance (kept and dropped observations, the relevance cut), yhat and fit across
 * the thresholds (the chosen one marked), and the weight of each observation (dates on the axis
 * when the labels are dates). Every threshold's traces are precomputed into the slider's steps
 * (plotly `update`), so a saved notebook, an HTML export and a report move it just the same.
 */
export function exploreFigure(result: Result, context: DisplayContext, options: FigureOptions = {}): Figure {
  const inputs = exploreInputs(result, context);
  const { th } = inputs;
  const N = observations(result);
  const type = pointType(N, options);
  const webgl = type === "scattergl";
  const ax = observationAxis(inputs.labels, webgl);
  const at = exploreStep(inputs, ax.x);
  const start = options.calibration ?? defaultCalibration(result);
  const title = (t: number) =>
    `${analysisName(result, context)} at ${calibrationLabel(result, context, t)}: n = ${formatCount(result.n?.[t] ?? at(t).kept.length)} kept of ${formatCount(N)}, yhat ${formatNumber(result.yhat[t], 4)}, fit ${formatNumber(result.fit[t], 4)}`;
  const shapesAt = (t: number): unknown[] => {
    const cut = relevanceCut(result, t);
    return cut !== undefined ? [cutShape(cut, "x", "y domain")] : [];
  };
  const steps = th.map((threshold, t) => {
    const s = at(t);
    return {
      label: formatNumber(threshold),
      method: "update",
      args: [
        { x: s.x, y: s.y, text: s.text, name: [...s.name, "weight", "chosen threshold"], "marker.color": [COLORS.included, COLORS.excluded, s.color, "#111"] },
        { "title.text": title(t), shapes: shapesAt(t) },
        [0, 1, 2, 5],
      ],
    };
  });
  return {
    data: exploreTraces(inputs, at(start), type),
    layout: layout(
      title(start),
      { ...options, height: options.height ?? 720 },
      {
        xaxis: axis("relevance", { domain: [0, 0.55], anchor: "y" }),
        yaxis: axis(context.outcome, { domain: [0.5, 1], anchor: "x" }),
        xaxis2: axis("threshold", { domain: [0.65, 1], anchor: "y2" }),
        yaxis2: axis("yhat", { domain: [0.5, 1], anchor: "x2", title: { text: "yhat", font: { color: COLORS.yhat } } }),
        yaxis4: axis("fit", { overlaying: "y2", side: "right", showgrid: false, anchor: "x2", title: { text: "fit", font: { color: COLORS.fit } } }),
        // Names of observations would collide with the slider: they are on hover; dates and positions are short.
        xaxis3: axis(ax.type === "category" ? "observation (names on hover)" : ax.title, {
          type: ax.type,
          domain: [0, 1],
          anchor: "y3",
          showticklabels: ax.type !== "category",
        }),
        yaxis3: axis("weight", { domain: [0, 0.32], anchor: "x3", zeroline: true, exponentformat: "power" }),
        shapes: shapesAt(start),
        margin: { l: 70, r: 70, t: 70, b: 110 },
        sliders: [
          {
            active: start,
            currentvalue: { prefix: "threshold ", font: { size: 13 } },
            pad: { t: 50 },
            steps,
          },
        ],
      },
    ),
    config: { ...FIGURE_CONFIG },
  };
}

/** The data of the traces that move (0 kept, 1 dropped, 2 weights, 5 the chosen threshold), at calibration t. */
function exploreStep({ result, context, include, relevance, y, th, labels }: ExploreInputs, observationX: unknown[]) {
  const idx = [...Array(y.length).keys()];
  return (t: number) => {
    const kept = idx.filter((i) => include[i][t] === 1);
    const dropped = idx.filter((i) => include[i][t] !== 1);
    return {
      kept,
      dropped,
      x: [kept.map((i) => relevance[i]), dropped.map((i) => relevance[i]), observationX, [th[t]]],
      y: [kept.map((i) => y[i]), dropped.map((i) => y[i]), column(result.weights, t), [result.yhat[t]]],
      text: [kept.map((i) => labels[i]), dropped.map((i) => labels[i]), labels, [calibrationLabel(result, context, t)]],
      color: idx.map((i) => (include[i][t] === 1 ? COLORS.included : COLORS.excluded)),
      name: [`kept (${kept.length})`, `dropped (${dropped.length})`],
    };
  };
}

/** The explore figure's six traces, at the start threshold's step `s0`. */
function exploreTraces({ result, context, th }: ExploreInputs, s0: ReturnType<ReturnType<typeof exploreStep>>, type: "scatter" | "scattergl"): Trace[] {
  const webgl = type === "scattergl";
  const size = webgl ? 4 : 7;
  const outcome = escapeTemplate(context.outcome);
  // The kept and the dropped observations at the start threshold: one trace each, alike but for
  // their slot in the step, their colour and their label (also the trace's uid).
  const pointsTrace = (slot: 0 | 1, label: "kept" | "dropped", color: string): Trace => ({
    type,
    mode: "markers",
    name: s0.name[slot],
    uid: label,
    x: s0.x[slot],
    y: s0.y[slot],
    text: s0.text[slot],
    xaxis: "x",
    yaxis: "y",
    marker: { color, size },
    hovertemplate: `%{text}<br>relevance %{x:.4g}<br>${outcome} %{y:.4g}<extra>${label}</extra>`,
  });
  return [
    pointsTrace(0, "kept", COLORS.included),
    pointsTrace(1, "dropped", COLORS.excluded),
    {
      type,
      mode: "markers",
      name: "weight",
      uid: "weights",
      x: s0.x[2],
      y: s0.y[2],
      text: s0.text[2],
      xaxis: "x3",
      yaxis: "y3",
      showlegend: false,
      marker: { color: s0.color, size: webgl ? 3 : 5 },
      hovertemplate: "%{text}<br>weight %{y:.4g}<extra></extra>",
    },
    {
      type: "scatter",
      mode: "lines+markers",
      name: "yhat",
      uid: "yhat",
      x: [...th],
      y: [...result.yhat],
      xaxis: "x2",
      yaxis: "y2",
      line: { color: COLORS.yhat },
      marker: { size: 6 },
      hovertemplate: "threshold %{x}<br>yhat %{y:.4g}<extra></extra>",
    },
    {
      type: "scatter",
      mode: "lines+markers",
      name: "fit",
      uid: "fit",
      x: [...th],
      y: [...result.fit],
      xaxis: "x2",
      yaxis: "y4",
      line: { color: COLORS.fit, dash: "dot" },
      marker: { size: 6, symbol: "diamond" },
      hovertemplate: "threshold %{x}<br>fit %{y:.4g}<extra></extra>",
    },
    {
      type: "scatter",
      mode: "markers",
      name: "chosen threshold",
      uid: "chosen",
      x: s0.x[3],
      y: s0.y[3],
      text: s0.text[3],
      xaxis: "x2",
      yaxis: "y2",
      showlegend: false,
      marker: { color: "#111", size: 14, symbol: "circle-open", line: { width: 2.5 } },
      hovertemplate: "%{text}<br>yhat %{y:.4g}<extra></extra>",
    },
  ];
}
