/**
 * The engine's result object, in the layout of docs/api.md section 2.2 so that the service
 * returns it as the v3 `results` unchanged. Matrices are N rows of T columns. Numbers may be NaN
 * where a calibration is undefined; the wire layer writes those as null.
 */
import type { CensorType, Objective } from "./options.js";
import type { Histogram, SoloStatistics } from "./solo.js";

export const ANALYSES = ["psr", "maxfit", "grid"] as const;
export type Analysis = (typeof ANALYSES)[number];

const ANALYSIS_LABELS: Record<Analysis, string> = { psr: "PSR", maxfit: "MaxFit", grid: "Grid" };

/**
 * An analysis as people write it: PSR, MaxFit or Grid.
 *
 * @example
 * analysisLabel("maxfit"); // "MaxFit"
 */
export function analysisLabel(analysis: Analysis): string {
  return ANALYSIS_LABELS[analysis];
}

export interface Auxiliary {
  phi: number[];
  lambda_sq: number[];
  full_var: number[];
  part_var: number[];
  r_star: number[];
  r_star_percent: number[];
  n: number[];
  k: number[];
  rho: number[];
}

export interface ResultInsights {
  relevance: number[];
  similarity: number[];
  info_x: number[];
  info_theta: number[];
  weights_concentration: number[];
  /** Grid only: the service's names for grid_insights.impact_on_fit and impact_on_prediction (length K). */
  "Impact on Fit"?: number[];
  "Impact on Prediction"?: number[];
}

export interface PredictionWeights {
  /** N x T. */
  weights: number[][];
  /** N x T of 0/1; absent for a Grid composite, whose retained set is not defined. */
  include?: number[][];
  /** N x T: the weights of the complement of the retained set (used by asymmetry). */
  weights_excluded?: number[][];
}

export interface SoloDistribution {
  /** N x T: each observation's vote; the votes of a column average to its yhat. */
  y_solo: number[][];
  /** One entry per column of y_solo. */
  statistics: { [P in keyof SoloStatistics]: number[] };
  distribution: Histogram[];
}

export interface MaxFitPath {
  objective: Objective;
  /** Index of the winner in the candidate lists below. */
  selected: number;
  censor_type: CensorType[];
  threshold: number[];
  yhat: number[];
  fit: number[];
  adjusted_fit: number[];
  k_fit: number[];
}

export interface GridInsights {
  variable_weights: number[];
  marginal_contribution_to_conviction: number[];
  marginal_contribution_to_prediction: number[];
  component_contribution_to_prediction: number[];
  /** The service's name for marginal_contribution_to_conviction. */
  impact_on_fit: number[];
  /** The service's name for marginal_contribution_to_prediction. */
  impact_on_prediction: number[];
}

export interface GridCensorCells {
  /** Q x T */
  yhat_cells?: number[][];
  adjusted_fit_cells?: number[][];
  n_cells?: number[][];
  /** N x T x Q */
  weights_cells?: number[][][];
}

export interface GridCells {
  k_cells?: number[];
  combi_cells?: number[][];
  /** N x Q: votes of each combination's own adjusted-fit-weighted composite. */
  ysolo_cells?: number[][];
  relevance?: GridCensorCells;
  similarity?: GridCensorCells;
}

export interface GridSearch {
  /** Combinations evaluated. */
  combinations: number;
  /** Combinations the constraints admit. */
  admissible: number;
  sampled: boolean;
  seed: number;
  cells: number;
  /** Cells with fewer than 2 retained rows or a singular covariance; they get zero weight. */
  invalid_cells: number;
}

export interface EngineResult {
  analysis: Analysis;
  n_observations: number;
  n_variables: number;
  n_thresholds: number;
  thresholds: number[];
  /** PSR: its censor; MaxFit: the winner's; Grid: the censors evaluated. */
  censor_type: CensorType[];
  yhat: number[];
  fit: number[];
  adjusted_fit: number[];
  agreement: number[];
  asymmetry: number[];
  k_fit: number[];
  outlier_influence: number[];
  yhat_linear?: number[];
  /** Per-calibration auxiliaries; absent for a Grid composite. */
  auxiliary?: Auxiliary;
  insights: ResultInsights;
  prediction_weights: PredictionWeights;
  solo_distribution: SoloDistribution;
  maxfit_index?: MaxFitPath;
  grid_insights?: GridInsights;
  grid_cells?: GridCells;
  grid_search?: GridSearch;
  /** Things the caller should know: dropped cells, fallbacks. */
  warnings: string[];
}
