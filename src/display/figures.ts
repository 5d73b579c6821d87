/**
 * Charts as plain plotly specs `{ data, layout, config }` (JSON-serialisable: undefined numbers are
 * null, never NaN), built from a normalised Result and its DisplayContext:
 *
 * - `weightsFigure`: the weight of every observation (one series per calibration);
 * - `outcomeVsRelevanceFigure`: outcome against relevance, coloured by inclusion (by weight for a
 *   Grid, which has no single inclusion);
 * - `impactFigure`: a Grid's Impact on Fit and Impact on Prediction by attribute name;
 * - `thresholdFigure`: yhat and fit across thresholds (PSR);
 * - `experimentFigure`: yhat and fit per theta row of an experiment.
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
import { formatNumber } from "./format.js";
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

/** Observation axis: labels as categories when few and unique, else positions (labels on hover). */
function observationAxis(labels: string[], webgl: boolean): { x: (string | number)[]; title: string; type: string } {
  const N = labels.length;
  if (!webgl && N <= 100 && new Set(labels).size === N) return { x: labels, title: "observation", type: "category" };
  return { x: labels.map((_, i) => i), title: "observation (position)", type: "linear" };
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
  const data: Trace[] = shown.map((t, s) => {
    const label = calibrationLabel(result, context, t);
    const common = {
      x: ax.x,
      y: column(result.weights, t),
      name: label || "weight",
      text: labels,
      hovertemplate: `%{text}<br>weight %{y:.4g}${label ? `<br>${label}` : ""}<extra></extra>`,
    };
    const color = COLORS.series[s % COLORS.series.length];
    // Bars read best for a few hundred observations; beyond, markers (WebGL above the threshold).
    return N <= 500
      ? { type: "bar", ...common, textposition: "none", marker: { color } }
      : { type, mode: "markers", ...common, marker: { color, size: 4, opacity: 0.8 } };
  });
  return {
    data,
    layout: layout(`${analysisName(result, context)}: weight of each observation`, options, {
      barmode: "group",
      showlegend: shown.length > 1,
      xaxis: axis(ax.title, { type: ax.type }),
      yaxis: axis("weight", { zeroline: true, exponentformat: "power" }),
    }),
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
  const yhatTrace: Trace =
    M <= 60
      ? { type: "bar", name: "yhat", x, y: yhat, text, textposition: "none", yaxis: "y", marker: { color: COLORS.yhat, opacity: 0.85 } }
      : { type, mode: "lines+markers", name: "yhat", x, y: yhat, text, yaxis: "y", line: { color: COLORS.yhat }, marker: { size: 4 } };
  yhatTrace.hovertemplate = "%{text}<br>yhat %{y:.4g}<extra></extra>";
  return {
    data: [
      yhatTrace,
      {
        type,
        mode: M <= 60 ? "markers+lines" : "lines",
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
      xaxis: axis(unique ? "theta" : "theta (position)", unique ? { type: "category" } : {}),
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
