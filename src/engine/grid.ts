/**
 * Grid (methodology section 7): every admissible attribute combination x censor x threshold is a
 * PSR cell; the forecast is the adjusted-fit-weighted composite of all cells.
 *
 * With complete data every combination shares one set of moments and the models come from
 * `walkCombinations` incrementally. With missing values each combination uses the rows complete in
 * its own columns, so its moments are its own and it is built directly.
 */
import {
  addWeights,
  calibrate,
  CalibrationScratch,
  linearPrediction,
  outcomeStats,
  type Calibration,
  type CensorCalibration,
  type CensorSettings,
  type OutcomeStats,
  type ScoredRows,
} from "./calibrate.js";
import { EMPTY_COMPOSITE_FALLBACK } from "./choices.js";
import { planCombinations } from "./combinations.js";
import { checkData, type Dataset } from "./data.js";
import { ComputationError } from "./errors.js";
import { gridInsights, type CellRecord } from "./insights.js";
import { buildModel, usableRows, type Model } from "./model.js";
import { resolveGridOptions, type CensorType, type Given, type GridOptions } from "./options.js";
import { checkBinaryOutcome, matrix, populationSd } from "./psr.js";
import type { EngineResult, GridCells, GridCensorCells } from "./result.js";
import { soloHistogram, soloStatistics, soloVotes } from "./solo.js";
import { walkCombinations, type WalkedModel } from "./walk.js";

export function grid(data: Dataset, theta: Float64Array, given: Given<GridOptions> = {}): EngineResult {
  checkData(data, theta);
  const options = resolveGridOptions(given, data.cols);
  const { rows: N, cols: K, y } = data;
  const plan = planCombinations(K, options);
  const combinations = plan.combinations;
  const censors: CensorType[] = options.censor_type === "both" ? ["relevance", "similarity"] : [options.censor_type];
  const logistic = options.prediction_scale === "logistic";
  const allRows = new Float64Array(N); // relevance 0 everywhere: "every row usable"
  if (logistic) checkBinaryOutcome(y, allRows);
  const T = options.threshold.length;
  const settings: CensorSettings = { thresholds: options.threshold, unit: options.censor_unit, operator: options.censor_operator };

  const retain = new Set(options.retain);
  const retained = retainedCells(retain, censors, combinations, K, N, T);
  const composite = new Float64Array(N);
  const cellWeights = retain.has("weights_cells") ? new Float64Array(N) : null;
  const combinationComposite = retain.has("ysolo_cells") ? new Float64Array(N) : null;
  const cells: CellRecord[] = [];
  const secondary = { asymmetry: 0, agreement: 0, outlier: 0, kFit: 0 };
  const scratch = new CalibrationScratch(N, T);
  const factors = new Float64Array(T);
  const sharedOutcome = outcomeStats(y, allRows);
  // Rows some evaluated combination could use; the composite's statistics are over these only.
  const used = new Uint8Array(N);
  let singularCombinations = 0;

  const evaluate = (index: number, model: WalkedModel | Model, outcome: OutcomeStats): void => {
    const k = combinations[index].length;
    if (model.usableCount === N) used.fill(1);
    else for (let i = 0; i < N; i++) used[i] |= +(model.relevance[i] === model.relevance[i]);
    let combinationWeight = 0;
    combinationComposite?.fill(0);
    for (const censor of censors) {
      const fitSettings = { multiplier: options.adj_fit_multiplier, attributes: k, logistic };
      const fitted = calibrate(model, y, outcome, censor, settings, fitSettings, scratch);
      fitted.calibrations.forEach((c, t) => {
        const weight = cellWeight(c);
        factors[t] = weight;
        cells.push({ combination: index, weight, yhat: c.yhat, valid: c.valid && Number.isFinite(c.yhat) });
        const kept = retained[censor];
        if (kept) keepCell(kept, index, t, fitted, model);
        if (!(weight > 0)) return;
        combinationWeight += weight;
        secondary.asymmetry += weight * c.asymmetry;
        secondary.agreement += weight * c.agreement;
        secondary.outlier += weight * c.outlierInfluence;
        secondary.kFit += weight * c.kFit;
      });
      addWeights(model, fitted, factors, composite);
      if (combinationComposite) addWeights(model, fitted, factors, combinationComposite);
    }
    if (combinationComposite && retained.ysolo) {
      for (let i = 0; i < N; i++) combinationComposite[i] /= combinationWeight;
      const votes = soloVotes(combinationComposite, y, model.relevance, outcome.mean, model.usableCount);
      for (let i = 0; i < N; i++) retained.ysolo[i][index] = votes[i];
    }
  };

  const keepCell = (kept: GridCensorCells, index: number, t: number, fitted: CensorCalibration, model: ScoredRows): void => {
    const c = fitted.calibrations[t];
    if (kept.yhat_cells) kept.yhat_cells[index][t] = c.yhat;
    if (kept.adjusted_fit_cells) kept.adjusted_fit_cells[index][t] = c.adjustedFit;
    if (kept.n_cells) kept.n_cells[index][t] = c.n;
    if (kept.weights_cells && cellWeights) {
      cellWeights.fill(0);
      const only = new Float64Array(T);
      only[t] = 1;
      addWeights(model, fitted, only, cellWeights);
      // An invalid calibration's weights are NaN on the rows it could use and 0 on the others.
      for (let i = 0; i < N; i++) kept.weights_cells[i][t][index] = cellWeights[i];
    }
  };

  const invalidCombination = (index: number): void => {
    singularCombinations++;
    for (const censor of censors) {
      for (let t = 0; t < T; t++) {
        cells.push({ combination: index, weight: 0, yhat: NaN, valid: false });
        const kept = retained[censor];
        if (kept?.n_cells) kept.n_cells[index][t] = NaN;
      }
    }
  };

  if (!hasMissing(data)) {
    walkCombinations(
      data,
      theta,
      combinations,
      logistic,
      (index, model) => evaluate(index, model, sharedOutcome),
      (index) => (options.inv_method === "pseudoinverse" ? evaluateDirect(index) : invalidCombination(index)),
    );
  } else {
    combinations.forEach((_, index) => evaluateDirect(index));
  }

  function evaluateDirect(index: number): void {
    const columns = combinations[index];
    if (usableRows(data, columns).count <= columns.length) return invalidCombination(index);
    let model: Model;
    try {
      model = buildModel(data, theta, { columns, missing: "complete", invMethod: options.inv_method, logistic });
    } catch (error) {
      if (error instanceof ComputationError) return invalidCombination(index);
      throw error;
    }
    evaluate(index, model, outcomeStats(y, model.relevance));
  }

  // The composite.
  let total = 0;
  let squares = 0;
  let weightedYhat = 0;
  for (const c of cells) {
    if (!(c.weight > 0)) continue;
    total += c.weight;
    squares += c.weight * c.weight;
    weightedYhat += c.weight * c.yhat;
  }
  const warnings: string[] = [];
  const invalidCells = cells.filter((c) => !c.valid).length;
  if (singularCombinations > 0) {
    warnings.push(
      `${singularCombinations} combination(s) have a singular covariance (or too few complete rows) and get zero weight` +
        (options.inv_method === "pseudoinverse" ? "." : '; inv_method: "pseudoinverse" evaluates them.'),
    );
  }
  // Over the used rows only: a row no combination could use has no vote and weight 0.
  const usedMask = Float64Array.from(used, (u) => (u ? 0 : NaN));
  const usedOutcome = outcomeStats(y, usedMask);
  const usedCount = used.reduce((a, u) => a + u, 0);
  const ybar = usedOutcome.mean;
  let yhat: number;
  if (total > 0) {
    for (let i = 0; i < N; i++) composite[i] /= total;
    yhat = weightedYhat / total;
  } else {
    if (invalidCells === cells.length) {
      throw new ComputationError(
        "Every Grid cell is invalid (each retains fewer than 2 observations or has a singular covariance); lower the thresholds or use inv_method: \"pseudoinverse\".",
        "options.threshold",
      );
    }
    // Methodology 7.2 [G]: no cell has any conviction, so fall back to equal weights.
    for (let i = 0; i < N; i++) composite[i] = used[i] / usedCount;
    yhat = ybar;
    warnings.push(`Every cell has zero adjusted fit; the composite falls back to ${EMPTY_COMPOSITE_FALLBACK} (yhat = mean of y).`);
  }
  const fit = compositeFit(composite, y, used);
  const votes = soloVotes(composite, y, usedMask, ybar, usedCount);
  const stats = soloStatistics(votes);
  const full = fullModel(data, theta, options, logistic);
  if (!full) warnings.push("The model with every attribute cannot be fitted (singular covariance); its relevance and yhat_linear are null.");
  const mean = (sum: number) => (total > 0 ? sum / total : NaN);
  const insights = gridInsights(cells, combinations, K, ybar);

  return {
    analysis: "grid",
    n_observations: N,
    n_variables: K,
    n_thresholds: T,
    thresholds: [...options.threshold],
    censor_type: censors,
    yhat: [yhat],
    fit: [fit],
    adjusted_fit: [total > 0 ? squares / total : 0],
    agreement: [mean(secondary.agreement)],
    asymmetry: [mean(secondary.asymmetry)],
    k_fit: [mean(secondary.kFit)],
    outlier_influence: [mean(secondary.outlier)],
    ...(options.include_linear_regression ? { yhat_linear: [full ? linearPrediction(full, y, outcomeStats(y, full.relevance)) : NaN] } : {}),
    insights: {
      relevance: full ? Array.from(full.relevance) : new Array<number>(N).fill(NaN),
      similarity: full ? Array.from(full.similarity) : new Array<number>(N).fill(NaN),
      info_x: full ? Array.from(full.infoX) : new Array<number>(N).fill(NaN),
      info_theta: [full ? full.infoTheta : NaN],
      weights_concentration: [populationSd(composite)],
      "Impact on Fit": insights.impact_on_fit,
      "Impact on Prediction": insights.impact_on_prediction,
    },
    prediction_weights: { weights: Array.from(composite, (w) => [w]) },
    solo_distribution: {
      y_solo: Array.from(votes, (v) => [v]),
      statistics: {
        sigma: [stats.sigma],
        skewness: [stats.skewness],
        kurtosis: [stats.kurtosis],
        pearson_modality_index: [stats.pearson_modality_index],
        bimodal_index: [stats.bimodal_index],
      },
      distribution: [soloHistogram(votes)],
    },
    grid_insights: insights,
    ...(retain.size > 0 ? { grid_cells: retained.cells } : {}),
    grid_search: {
      combinations: combinations.length,
      admissible: plan.admissible,
      sampled: plan.sampled,
      seed: options.seed,
      cells: cells.length,
      invalid_cells: invalidCells,
    },
    warnings,
  };
}

/** A cell's weight in the composite: its adjusted fit, 0 when it has none or is invalid. */
function cellWeight(c: Calibration): number {
  return c.valid && Number.isFinite(c.yhat) && c.adjustedFit > 0 ? c.adjustedFit : 0;
}

function hasMissing(data: Dataset): boolean {
  for (let v = 0; v < data.X.length; v++) if (data.X[v] !== data.X[v]) return true;
  return false;
}

/** fit = squared Pearson correlation of the weights with y over the used rows (0 for constant weights). */
function compositeFit(weights: Float64Array, y: Float64Array, used: Uint8Array): number {
  let n = 0;
  let mw = 0;
  let my = 0;
  for (let i = 0; i < y.length; i++) {
    if (!used[i]) continue;
    n++;
    mw += weights[i];
    my += y[i];
  }
  mw /= n;
  my /= n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < y.length; i++) {
    if (!used[i]) continue;
    const dw = weights[i] - mw;
    const dy = y[i] - my;
    sxy += dw * dy;
    sxx += dw * dw;
    syy += dy * dy;
  }
  return sxx > 0 && syy > 0 ? (sxy * sxy) / (sxx * syy) : 0;
}

/** The all-attribute model behind yhat_linear and the relevance insights, on rows complete in every column. */
function fullModel(data: Dataset, theta: Float64Array, options: GridOptions, logistic: boolean): Model | null {
  const columns = Array.from({ length: data.cols }, (_, j) => j);
  try {
    const model = buildModel(data, theta, { columns, missing: "complete", invMethod: options.inv_method, logistic });
    return model.usableCount > data.cols ? model : null;
  } catch (error) {
    if (error instanceof ComputationError) return null;
    throw error;
  }
}

function retainedCells(
  retain: Set<string>,
  censors: CensorType[],
  combinations: readonly number[][],
  K: number,
  N: number,
  T: number,
): { cells: GridCells; ysolo: number[][] | null } & Partial<Record<CensorType, GridCensorCells>> {
  const Q = combinations.length;
  const cells: GridCells = {};
  if (retain.has("k_cells")) cells.k_cells = combinations.map((c) => c.length);
  if (retain.has("combi_cells")) {
    cells.combi_cells = combinations.map((c) => {
      const row = new Array<number>(K).fill(0);
      for (const j of c) row[j] = 1;
      return row;
    });
  }
  const ysolo = retain.has("ysolo_cells") ? matrix(N, Q) : null;
  if (ysolo) cells.ysolo_cells = ysolo;
  const perCensor: Partial<Record<CensorType, GridCensorCells>> = {};
  for (const censor of censors) {
    const kept: GridCensorCells = {};
    if (retain.has("yhat_cells")) kept.yhat_cells = matrix(Q, T);
    if (retain.has("adjusted_fit_cells")) kept.adjusted_fit_cells = matrix(Q, T);
    if (retain.has("n_cells")) kept.n_cells = matrix(Q, T);
    if (retain.has("weights_cells")) kept.weights_cells = Array.from({ length: N }, () => matrix(T, Q));
    if (Object.keys(kept).length > 0) {
      cells[censor] = kept;
      perCensor[censor] = kept;
    }
  }
  return { cells, ysolo, ...perCensor };
}
