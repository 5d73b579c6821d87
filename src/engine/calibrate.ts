/**
 * Partial sample regression at each threshold of one censor (methodology sections 3 to 5),
 * from a handful of sums over the retained rows. The weights themselves are never needed for
 * the diagnostics: fit, asymmetry and outlier influence follow from the same sums, which is what
 * lets a Grid evaluate thousands of cells quickly. `weightsOf` writes the weights when a caller
 * wants them.
 */
import * as choices from "./choices.js";
import type { AdjFitMultiplier, CensorOperator, CensorType, CensorUnit } from "./options.js";
import { percentiles } from "./percentile.js";

export interface CensorSettings {
  thresholds: readonly number[];
  unit: CensorUnit;
  operator: CensorOperator;
}

export interface FitSettings {
  multiplier: AdjFitMultiplier;
  /** Number of attributes of the model, K in K x (fit + asymmetry) and kfit. */
  attributes: number;
  logistic: boolean;
}

/** What a model contributes: relevance (NaN on unusable rows) and, for the logistic scale, d(mu1, xbar). */
export interface ScoredRows {
  relevance: Float64Array;
  usableCount: number;
  positivesDistance: number;
}

/** One PSR calibration: a (censor, threshold) pair. Invalid ones (fewer than 2 retained) hold NaN. */
export interface Calibration {
  censor: CensorType;
  threshold: number;
  valid: boolean;
  n: number;
  phi: number;
  rStar: number;
  rStarPercent: number;
  fullVar: number;
  partVar: number;
  lambdaSq: number;
  yhat: number;
  fit: number;
  rho: number;
  asymmetry: number;
  adjustedFit: number;
  kFit: number;
  outlierInfluence: number;
  agreement: number;
  /** w_i = 1/N + coefficient * (delta_i r_i - shift) on usable rows. */
  coefficient: number;
  shift: number;
  /** The same for the complement of the retained set (NaN when it is too small). */
  complementCoefficient: number;
  complementShift: number;
}

/** Per-model outcome statistics over its usable rows. */
export interface OutcomeStats {
  mean: number;
  /** sum (y_i - ybar)^2 */
  sumSquares: number;
}

export function outcomeStats(y: Float64Array, relevance: Float64Array): OutcomeStats {
  let sum = 0;
  let count = 0;
  for (let i = 0; i < y.length; i++) {
    if (relevance[i] !== relevance[i]) continue;
    sum += y[i];
    count++;
  }
  const mean = sum / count;
  let sumSquares = 0;
  for (let i = 0; i < y.length; i++) {
    if (relevance[i] !== relevance[i]) continue;
    sumSquares += (y[i] - mean) ** 2;
  }
  return { mean, sumSquares };
}

/** Reusable buffers so a Grid does not allocate per cell. */
export class CalibrationScratch {
  readonly values: Float64Array;
  readonly cuts: Float64Array;
  readonly sums: Float64Array;
  constructor(rows: number, thresholds: number) {
    this.values = new Float64Array(rows);
    this.cuts = new Float64Array(thresholds);
    this.sums = new Float64Array(6 * thresholds);
  }
}

/** The censor test s OP cut, rewritten as sign*s >= or > sign*cut. */
function operatorParts(op: CensorOperator): { sign: number; strict: boolean } {
  return { sign: op === "gt" || op === "gte" ? 1 : -1, strict: op === "gt" || op === "lt" };
}

/**
 * Calibrates one censor at every threshold. `scores` is the censor score per row (relevance or
 * similarity; NaN on unusable rows); the weights are always built from relevance.
 */
export function calibrate(
  rows: ScoredRows,
  y: Float64Array,
  outcome: OutcomeStats,
  scores: Float64Array,
  censor: CensorType,
  settings: CensorSettings,
  fitSettings: FitSettings,
  scratch: CalibrationScratch,
): Calibration[] {
  const { relevance, usableCount: count } = rows;
  const T = settings.thresholds.length;
  const { values, cuts, sums } = scratch;

  let m = 0;
  for (let i = 0; i < scores.length; i++) {
    const s = scores[i];
    if (s === s) values[m++] = s;
  }
  if (settings.unit === "percent") percentiles(values, count, settings.thresholds, values, cuts);
  else for (let t = 0; t < T; t++) cuts[t] = settings.thresholds[t];

  const { sign, strict } = operatorParts(settings.operator);
  const signedCuts = new Float64Array(T);
  for (let t = 0; t < T; t++) signedCuts[t] = sign * cuts[t];

  // Per threshold: n, sum r, sum r^2, sum r dy, sum r dy^2, sum r^2 dy^2 over the retained rows.
  sums.fill(0);
  let totalR = 0;
  let totalR2 = 0;
  let totalRY = 0;
  const ybar = outcome.mean;
  for (let i = 0; i < relevance.length; i++) {
    const r = relevance[i];
    if (r !== r) continue;
    const dy = y[i] - ybar;
    const ry = r * dy;
    totalR += r;
    totalR2 += r * r;
    totalRY += ry;
    const s = sign * scores[i];
    for (let t = 0; t < T; t++) {
      const cut = signedCuts[t];
      if (strict ? s > cut : s >= cut) {
        const o = 6 * t;
        sums[o] += 1;
        sums[o + 1] += r;
        sums[o + 2] += r * r;
        sums[o + 3] += ry;
        sums[o + 4] += ry * dy;
        sums[o + 5] += ry * ry;
      }
    }
  }

  const fullVar = totalR2 / (count - 1);
  const syy = outcome.sumSquares;
  const out: Calibration[] = [];
  for (let t = 0; t < T; t++) {
    const o = 6 * t;
    const n = sums[o];
    const s1 = sums[o + 1];
    const s2 = sums[o + 2];
    const sy = sums[o + 3];
    const partVar = s2 / (n - 1);
    const threshold = settings.thresholds[t];
    const rStarPercent = settings.unit === "percent" ? threshold : choices.shareBelow(values, count, cuts[t]);
    if (n < choices.MIN_RETAINED || !(partVar > 0)) {
      out.push(invalidCalibration(censor, threshold, n, count, cuts[t], rStarPercent, fullVar));
      continue;
    }
    const lambdaSq = fullVar / partVar;
    const coefficient = lambdaSq / (n - 1);
    const shift = s1 / count;
    const spread = s2 - (s1 * s1) / count;
    const rho = correlation(sy, spread, syy);

    const nc = count - n;
    const s1c = totalR - s1;
    const s2c = totalR2 - s2;
    const complementValid = nc >= choices.MIN_COMPLEMENT_FOR_ASYMMETRY && s2c > 0;
    const rhoC = complementValid ? correlation(totalRY - sy, s2c - (s1c * s1c) / count, syy) : 0;
    const asymmetry = complementValid ? 0.5 * (rho - rhoC) ** 2 : 0;
    const fit = rho * rho;

    const diagonal = sums[o + 5] - 2 * shift * sums[o + 4] + shift * shift * syy;
    const outlier = choices.outlierInfluence(diagonal, spread * syy);

    const linearPart = coefficient * sy;
    const yhat = fitSettings.logistic ? logisticYhat(ybar, linearPart, rows.positivesDistance) : ybar + linearPart;
    const complementCoefficient = complementValid ? fullVar / (s2c / (nc - 1)) / (nc - 1) : NaN;
    out.push({
      censor,
      threshold,
      valid: true,
      n,
      phi: n / count,
      rStar: cuts[t],
      rStarPercent,
      fullVar,
      partVar,
      lambdaSq,
      yhat,
      fit,
      rho,
      asymmetry,
      adjustedFit: choices.adjFitMultiplier(fitSettings.multiplier, fitSettings.attributes) * (fit + asymmetry),
      kFit: choices.kfit(fit, fitSettings.attributes),
      outlierInfluence: outlier,
      agreement: fit - outlier,
      coefficient,
      shift,
      complementCoefficient,
      complementShift: complementValid ? s1c / count : NaN,
    });
  }
  return out;
}

/** Pearson correlation of (delta r) with y from its sums; 0 when the weights are constant. */
function correlation(crossSum: number, spread: number, syy: number): number {
  const denominator = Math.sqrt(spread * syy);
  return denominator > 0 ? crossSum / denominator : 0;
}

/**
 * Methodology 5.8 (the book's binary formula, unverified against the hosted engine):
 * logit = ln A + B * linearPart + C * d(mu1, xbar), A = ybar/(1-ybar), B = 1/(ybar(1-ybar)), C = A^2 - 1.
 */
function logisticYhat(ybar: number, linearPart: number, positivesDistance: number): number {
  const a = ybar / (1 - ybar);
  const b = 1 / (ybar * (1 - ybar));
  const c = a * a - 1;
  const logit = Math.log(a) + b * linearPart + c * positivesDistance;
  return 1 / (1 + Math.exp(-logit));
}

function invalidCalibration(
  censor: CensorType,
  threshold: number,
  n: number,
  count: number,
  rStar: number,
  rStarPercent: number,
  fullVar: number,
): Calibration {
  return {
    censor,
    threshold,
    valid: false,
    n,
    phi: n / count,
    rStar,
    rStarPercent,
    fullVar,
    partVar: NaN,
    lambdaSq: NaN,
    yhat: NaN,
    fit: NaN,
    rho: NaN,
    asymmetry: NaN,
    adjustedFit: NaN,
    kFit: NaN,
    outlierInfluence: NaN,
    agreement: NaN,
    coefficient: NaN,
    shift: NaN,
    complementCoefficient: NaN,
    complementShift: NaN,
  };
}

/**
 * Adds factor * w_i to target[i] for every usable row, w_i = 1/N + coefficient (delta_i r_i - shift)
 * the calibration's weights. `scores` and its cut reproduce the mask the sums were taken over.
 */
export function addWeights(
  rows: ScoredRows,
  scores: Float64Array,
  calibration: Calibration,
  operator: CensorOperator,
  factor: number,
  target: Float64Array,
): void {
  const { relevance, usableCount: count } = rows;
  const { sign, strict } = operatorParts(operator);
  const cut = sign * calibration.rStar;
  const slope = factor * calibration.coefficient;
  const base = factor * (1 / count - calibration.coefficient * calibration.shift);
  for (let i = 0; i < relevance.length; i++) {
    const r = relevance[i];
    if (r !== r) continue;
    const s = sign * scores[i];
    target[i] += (strict ? s > cut : s >= cut) ? base + slope * r : base;
  }
}

/**
 * Writes a calibration's weights (0 on unusable rows), its include mask and the weights the
 * complement of the retained set would get.
 */
export function weightsOf(
  rows: ScoredRows,
  scores: Float64Array,
  calibration: Calibration,
  operator: CensorOperator,
  out: { weights: Float64Array; include: Float64Array; excluded: Float64Array },
): void {
  out.weights.fill(0);
  addWeights(rows, scores, calibration, operator, 1, out.weights);
  const { relevance, usableCount: count } = rows;
  const { sign, strict } = operatorParts(operator);
  const cut = sign * calibration.rStar;
  for (let i = 0; i < relevance.length; i++) {
    const r = relevance[i];
    if (r !== r) {
      out.include[i] = 0;
      out.excluded[i] = 0;
      continue;
    }
    const s = sign * scores[i];
    const kept = strict ? s > cut : s >= cut;
    out.include[i] = kept ? 1 : 0;
    out.excluded[i] = 1 / count + calibration.complementCoefficient * ((kept ? 0 : r) - calibration.complementShift);
  }
}

/** The full-sample regression (threshold 0, every usable row): the least-squares prediction at theta. */
export function linearPrediction(rows: ScoredRows, y: Float64Array, outcome: OutcomeStats): number {
  let cross = 0;
  for (let i = 0; i < y.length; i++) {
    const r = rows.relevance[i];
    if (r === r) cross += r * (y[i] - outcome.mean);
  }
  return outcome.mean + cross / (rows.usableCount - 1);
}
