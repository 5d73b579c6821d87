/**
 * What the display functions know besides the result: the names and the data the request carried.
 * The result itself (src/api/result.ts) has numbers only; the context gives every table and chart
 * its labels.
 */
import type { Num, Result } from "../api/result.js";
import type { Analysis } from "../engine/result.js";
import type { FrameRequest } from "../frame/index.js";

export interface DisplayContext {
  /** The outcome's name (axis titles, table headers). */
  outcome: string;
  /** Attribute names, one per column of X (K). */
  attributes: ReadonlyArray<string>;
  /** The outcomes sent (N): needed for the outcome-against-relevance chart and the table's outcome column. */
  y?: ReadonlyArray<number>;
  /** A label per observation (N); default: the positions 0..N-1. */
  rowLabels?: ReadonlyArray<string>;
  /** psr, maxfit or grid; default: the result's own (v3 results carry it). */
  analysis?: Analysis;
  /** The thresholds asked for; default: the result's own (v3). v2 results carry none. */
  thresholds?: ReadonlyArray<number>;
  /** A label per theta row of an experiment. */
  thetaLabels?: ReadonlyArray<string>;
}

/** A display context from the data a request was built from (src/frame). */
export function contextFromRequest(
  request: Pick<FrameRequest, "outcome" | "attributes" | "y" | "rowLabels" | "thetaLabels">,
  extra: { analysis?: Analysis; thresholds?: ReadonlyArray<number> } = {},
): DisplayContext {
  return {
    outcome: request.outcome,
    attributes: request.attributes,
    y: request.y,
    rowLabels: request.rowLabels,
    ...(request.thetaLabels !== undefined ? { thetaLabels: request.thetaLabels } : {}),
    ...extra,
  };
}

/** The analysis of a result: the context's, else the result's, else guessed from its shape. */
export function analysisOf(result: Result, context: Pick<DisplayContext, "analysis">): Analysis | undefined {
  if (context.analysis !== undefined) return context.analysis;
  if (result.analysis !== undefined) return result.analysis;
  if (result.grid_insights !== undefined) return "grid";
  return undefined;
}

/** Number of observations. */
export function observations(result: Result): number {
  return result.weights.length;
}

/** Number of calibrations (thresholds) in the result: the length of yhat. */
export function calibrations(result: Result): number {
  return result.yhat.length;
}

/**
 * The thresholds of the result's calibrations, one per yhat, when they are known: a PSR's each,
 * MaxFit's winner. A Grid's thresholds are those evaluated, not one per calibration: undefined.
 */
export function calibrationThresholds(result: Result, context: DisplayContext): number[] | undefined {
  const T = calibrations(result);
  const given = result.thresholds ?? context.thresholds;
  if (analysisOf(result, context) === "grid") return undefined;
  return given !== undefined && given.length === T ? [...given] : undefined;
}

/** The calibration charts show by default: the one with the largest adjusted fit (the last if none is defined). */
export function defaultCalibration(result: Result): number {
  const T = calibrations(result);
  let best = -1;
  result.adjusted_fit.forEach((v, t) => {
    if (v !== null && (best < 0 || v > (result.adjusted_fit[best] as number))) best = t;
  });
  return best >= 0 ? best : T - 1;
}

/** Label per observation: the context's labels, else positions. */
export function rowLabelsOf(result: Result, context: DisplayContext): string[] {
  const N = observations(result);
  const labels = context.rowLabels;
  if (labels !== undefined && labels.length === N) return [...labels];
  return Array.from({ length: N }, (_, i) => String(i));
}

/** Attribute names for K values; the context's when their count matches. */
export function attributeNames(context: DisplayContext, K: number, what: string): string[] {
  if (context.attributes.length === K) return [...context.attributes];
  throw new Error(
    `${what}: the result has ${K} attribute values but the context names ${context.attributes.length} attributes (${context.attributes.join(", ")})`,
  );
}

/** A threshold's short label: "t=0.8", or "#3" when the thresholds are not known. */
export function calibrationLabel(result: Result, context: DisplayContext, t: number): string {
  const th = calibrationThresholds(result, context);
  const censor = result.censor_type !== undefined && result.censor_type.length === calibrations(result) ? `${result.censor_type[t]} ` : "";
  return th !== undefined ? `${censor}t=${th[t]}` : calibrations(result) === 1 ? "" : `#${t + 1}`;
}

export type { Num };
