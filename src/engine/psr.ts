/**
 * PSR and MaxFit on all K attributes (docs/methodology.md sections 4 to 6): one relevance model,
 * calibrated at each threshold of one censor (PSR) or of both (MaxFit, which keeps the best).
 */
import {
  calibrate,
  CalibrationScratch,
  linearPrediction,
  outcomeStats,
  weightsOf,
  type Calibration,
  type CensorCalibration,
  type CensorSettings,
  type FitSettings,
  type OutcomeStats,
} from "./calibrate.js";
import { firstMaximum } from "./choices.js";
import { checkData, type Dataset } from "./data.js";
import { ComputationError, invalid } from "./errors.js";
import { buildModel, type Model } from "./model.js";
import { resolveMaxFitOptions, resolvePsrOptions, type CensorType, type CommonOptions, type Given, type MaxFitOptions, type PsrOptions } from "./options.js";
import type { EngineResult, MaxFitPath } from "./result.js";
import { soloHistogram, soloStatistics, soloVotes, type Histogram } from "./solo.js";

export function psr(data: Dataset, theta: Float64Array, given: Given<PsrOptions> = {}): EngineResult {
  checkData(data, theta);
  const options = resolvePsrOptions(given, data.cols);
  const fitted = fitAllAttributes(data, theta, options, [options.censor_type]);
  return calibrationResult("psr", data, fitted, fitted.calibrations, options);
}

export function maxfit(data: Dataset, theta: Float64Array, given: Given<MaxFitOptions> = {}): EngineResult {
  checkData(data, theta);
  const options = resolveMaxFitOptions(given, data.cols);
  const censors: CensorType[] = options.censor_type === "both" ? ["relevance", "similarity"] : [options.censor_type];
  const fitted = fitAllAttributes(data, theta, options, censors);
  const candidates = fitted.calibrations;
  const objective = options.objective;
  const score = (c: Calibration): number => (objective === "fit" ? c.fit : objective === "adjusted_fit" ? c.adjustedFit : c.kFit);
  // First maximum wins: relevance before similarity, thresholds in the order given.
  const best = firstMaximum(candidates.map((c) => (c.valid ? score(c) : NaN)));
  if (best < 0) {
    throw new ComputationError(
      "No threshold retains at least 2 observations, so MaxFit has no calibration to choose; lower the thresholds.",
      "options.threshold",
    );
  }
  const path: MaxFitPath = {
    objective,
    selected: best,
    censor_type: candidates.map((c) => c.censor),
    threshold: candidates.map((c) => c.threshold),
    yhat: candidates.map((c) => c.yhat),
    fit: candidates.map((c) => c.fit),
    adjusted_fit: candidates.map((c) => c.adjustedFit),
    k_fit: candidates.map((c) => c.kFit),
  };
  return { ...calibrationResult("maxfit", data, fitted, [candidates[best]], options), maxfit_index: path };
}

interface Fitted {
  model: Model;
  outcome: OutcomeStats;
  calibrations: Calibration[];
  /** Calibrates one (censor, threshold) again, with the row buckets its weights need. */
  calibrateOne(censor: CensorType, threshold: number): CensorCalibration;
}

function fitAllAttributes(data: Dataset, theta: Float64Array, options: PsrOptions | MaxFitOptions, censors: CensorType[]): Fitted {
  const logistic = options.prediction_scale === "logistic";
  const columns = Array.from({ length: data.cols }, (_, j) => j);
  const model = buildModel(data, theta, {
    columns,
    missing: options.missing_moments,
    invMethod: options.inv_method,
    covInv: options.cov_inv,
    logistic,
  });
  if (logistic) checkBinaryOutcome(data.y, model.relevance);
  const outcome = outcomeStats(data.y, model.relevance);
  const settings: CensorSettings = { thresholds: options.threshold, unit: options.censor_unit, operator: options.censor_operator };
  const fitSettings: FitSettings = { multiplier: options.adj_fit_multiplier, attributes: data.cols, logistic };
  const scratch = new CalibrationScratch(data.rows, settings.thresholds.length);
  const calibrations = censors.flatMap((censor) => calibrate(model, data.y, outcome, censor, settings, fitSettings, scratch).calibrations);
  const single = new CalibrationScratch(data.rows, 1);
  const calibrateOne = (censor: CensorType, threshold: number): CensorCalibration =>
    calibrate(model, data.y, outcome, censor, { ...settings, thresholds: [threshold] }, fitSettings, single);
  return { model, outcome, calibrations, calibrateOne };
}

/** The logistic scale models a 0/1 outcome and needs both classes among the usable rows. */
export function checkBinaryOutcome(y: Float64Array, relevance: Float64Array): void {
  let zeros = 0;
  let ones = 0;
  for (let i = 0; i < y.length; i++) {
    if (relevance[i] !== relevance[i]) continue;
    if (y[i] === 0) zeros++;
    else if (y[i] === 1) ones++;
    else invalid(`y[${i}]`, '0 or 1 when prediction_scale is "logistic"', `got ${y[i]}`);
  }
  if (zeros === 0 || ones === 0) invalid("y", 'both 0s and 1s when prediction_scale is "logistic"');
}

function calibrationResult(analysis: "psr" | "maxfit", data: Dataset, fitted: Fitted, calibrations: Calibration[], options: CommonOptions): EngineResult {
  const { model, outcome } = fitted;
  const N = data.rows;
  const T = calibrations.length;
  const weights = matrix(N, T);
  const include = matrix(N, T);
  const excluded = matrix(N, T);
  const ySolo = matrix(N, T);
  const stats = {
    sigma: [] as number[],
    skewness: [] as number[],
    kurtosis: [] as number[],
    pearson_modality_index: [] as number[],
    bimodal_index: [] as number[],
  };
  const distribution: Histogram[] = [];
  const concentration: number[] = [];
  const column = { weights: new Float64Array(N), include: new Float64Array(N), excluded: new Float64Array(N) };
  calibrations.forEach((c, t) => {
    weightsOf(model, fitted.calibrateOne(c.censor, c.threshold), 0, column);
    const votes = soloVotes(column.weights, data.y, model.relevance, outcome.mean, model.usableCount);
    for (let i = 0; i < N; i++) {
      weights[i][t] = column.weights[i];
      include[i][t] = column.include[i];
      excluded[i][t] = column.excluded[i];
      ySolo[i][t] = votes[i];
    }
    const s = soloStatistics(votes);
    for (const key of Object.keys(stats) as (keyof typeof stats)[]) stats[key].push(s[key]);
    distribution.push(soloHistogram(votes));
    concentration.push(populationSd(column.weights));
  });
  const pick = (f: (c: Calibration) => number): number[] => calibrations.map(f);
  return {
    analysis,
    n_observations: N,
    n_variables: data.cols,
    n_thresholds: T,
    thresholds: pick((c) => c.threshold),
    censor_type: [...new Set(calibrations.map((c) => c.censor))],
    yhat: pick((c) => c.yhat),
    fit: pick((c) => c.fit),
    adjusted_fit: pick((c) => c.adjustedFit),
    agreement: pick((c) => c.agreement),
    asymmetry: pick((c) => c.asymmetry),
    k_fit: pick((c) => c.kFit),
    outlier_influence: pick((c) => c.outlierInfluence),
    ...(options.include_linear_regression ? { yhat_linear: [linearPrediction(model, data.y, outcome)] } : {}),
    auxiliary: {
      phi: pick((c) => c.phi),
      lambda_sq: pick((c) => c.lambdaSq),
      full_var: pick((c) => c.fullVar),
      part_var: pick((c) => c.partVar),
      r_star: pick((c) => c.rStar),
      r_star_percent: pick((c) => c.rStarPercent),
      n: pick((c) => c.n),
      k: pick(() => data.cols),
      rho: pick((c) => c.rho),
    },
    insights: {
      relevance: Array.from(model.relevance),
      similarity: Array.from(model.similarity),
      info_x: Array.from(model.infoX),
      info_theta: [model.infoTheta],
      weights_concentration: concentration,
    },
    prediction_weights: { weights, include, weights_excluded: excluded },
    solo_distribution: { y_solo: ySolo, statistics: stats, distribution },
    warnings: calibrations.some((c) => !c.valid)
      ? [`${calibrations.filter((c) => !c.valid).length} calibration(s) retain fewer than 2 observations; their values are null.`]
      : [],
  };
}

export function matrix(rows: number, cols: number): number[][] {
  return Array.from({ length: rows }, () => new Array<number>(cols).fill(NaN));
}

/** Population standard deviation (ddof 0), the client's weights concentration. */
export function populationSd(values: Float64Array): number {
  let mean = 0;
  for (const v of values) mean += v;
  mean /= values.length;
  let sum = 0;
  for (const v of values) sum += (v - mean) ** 2;
  return Math.sqrt(sum / values.length);
}
