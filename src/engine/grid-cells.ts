/**
 * The Grid's cells for one range of combinations, accumulated into a `GridPartial`: the
 * adjusted-fit-weighted sum of the cells' weights, one record per cell, and the retained arrays.
 * A Grid is the in-order merge of its ranges' partials (grid.ts), so that one thread or several
 * (threads/grid-parallel.ts) give bit-identical results.
 */
import {
  addWeights,
  addWeightsOfTwo,
  type ArenaPasses,
  calibrate,
  calibrateBoth,
  calibrateCellsOfTwo,
  CalibrationScratch,
  outcomeStats,
  type Calibration,
  type CensorSettings,
  type OutcomeStats,
  type ScoredRows,
} from "./calibrate.js";
import * as choices from "./choices.js";
import { cutTest } from "./cut.js";
import type { Dataset } from "./data.js";
import { ComputationError } from "./errors.js";
import { buildModel, usableRows, type Model } from "./model.js";
import type { CensorType, GridOptions } from "./options.js";
import { soloVotes } from "./solo.js";
import type { KernelChoice, WalkPlan } from "./kernels/rows.js";
import { trieOrder, walkCombinations, WalkLevels, type Standardized, type WalkedCells } from "./walk.js";

/** Everything a range of cells needs; plain data, so a worker thread can receive it. */
export interface GridTask {
  data: Dataset;
  theta: Float64Array;
  options: GridOptions;
  /** The combinations, in the plan's order or (with `walkOrder`) in the walk's. */
  combinations: number[][];
  /**
   * When set, `combinations` are the plan's in the order of a walk that shares more levels
   * (walk-order.ts), each one's columns in the order the walk adds them, and walkOrder[q] is the
   * plan's index of combinations[q]. Only with `shared` (a walk).
   */
  walkOrder: Int32Array | null;
  /** Present when X has no missing value: every combination shares these moments. */
  shared: Standardized | null;
}

export interface GridPartial {
  /** The combinations [from, to) of the task's `combinations` this partial covers. */
  from: number;
  to: number;
  /** sum over cells of a_c w_c (N). */
  composite: Float64Array;
  /** 1 where some evaluated combination could use the row. */
  used: Uint8Array;
  /** One entry per cell, in evaluation order. */
  cellCombination: Int32Array;
  cellWeight: Float64Array;
  cellYhat: Float64Array;
  cellValid: Uint8Array;
  /** a-weighted sums of asymmetry, agreement, outlier influence and kfit. */
  secondary: Float64Array;
  /** Combinations whose covariance is singular or that have too few complete rows. */
  singular: number;
  /** Per censor evaluated, the retained arrays asked for (range-local, row-major). */
  retained: Partial<Record<CensorType, RetainedCensorCells>>;
  /** N x range: the votes of each combination's own composite, when ysolo_cells is retained. */
  ysolo: Float64Array | null;
}

export interface RetainedCensorCells {
  /** range x T */
  yhat: Float64Array | null;
  adjustedFit: Float64Array | null;
  n: Float64Array | null;
  /** N x T x range */
  weights: Float64Array | null;
}

export function censorsOf(options: GridOptions): CensorType[] {
  return options.censor_type === "both" ? ["relevance", "similarity"] : [options.censor_type];
}

/** A cell's weight in the composite: its adjusted fit, 0 when it has none or is invalid. */
function cellWeight(c: Calibration): number {
  return c.valid && Number.isFinite(c.yhat) && c.adjustedFit > 0 ? c.adjustedFit : 0;
}

/** Views of the first three planes (weight, yhat, validity) of `ArenaPasses.cells`, each `count` long. */
function cellPlanesOf(cells: Float64Array, count: number): Float64Array[] {
  return [cells.subarray(0, count), cells.subarray(8, 8 + count), cells.subarray(16, 16 + count)];
}

/** The cells of one range of combinations for one theta, filled one combination at a time. */
export interface RangeEvaluator {
  /** The partial so far; complete once `finish` has been called. */
  partial: GridPartial;
  /** Completes the partial (its composite may have been added up in a walk's arena) and returns it. */
  finish(): GridPartial;
  /** Evaluates a combination from its walked (or built) model. */
  evaluate(index: number, model: ScoredRows, outcome: OutcomeStats): void;
  /** A combination whose shared-moment covariance is singular: invalid, or rebuilt when inv_method is pseudoinverse. */
  singular(index: number): void;
  /** Builds the combination's model from its own rows (missing values) and evaluates it. */
  direct(index: number): void;
  /**
   * Prepares a walk's levels to add this range's cells as the walk makes each visited level (one
   * WebAssembly call a combination: `WalkLevels.extendCalibrate`) and sets `levels.calibrating`;
   * false (nothing set) where the cells are made at the visit. The caller clears `calibrating` after its walk.
   */
  prepareWalk(levels: WalkLevels, outcome: OutcomeStats): boolean;
  /** Takes the cells a prepared walk made in its kernel (walk.ts `walkInKernel`): what `evaluate` does with each visit whose model is `calibrated`. */
  cells: WalkedCells;
}

/**
 * Buffers that one thread reuses from range to range of a Grid (the walk's levels, the
 * calibration scratch), so that a Grid's chunks do not each allocate O(N K) anew. Results do not
 * depend on whether a workspace is passed; one workspace must not serve two ranges at once.
 */
export class GridWorkspace {
  walk: WalkLevels | undefined;
  /** The walk's kernels (walk.ts `WalkLevels`): "js" for the plain loops the WebAssembly ones are held to. */
  constructor(readonly kernels: KernelChoice = "wasm") {}
  readonly scratches: CalibrationScratch[] = [];
  cellWeights: Float64Array | undefined;

  /** Calibration scratch number k (one per censor) for N rows and T thresholds, the previous one when it fits. */
  calibrationScratch(N: number, T: number, k = 0): CalibrationScratch {
    const scratch = this.scratches[k];
    if (scratch && scratch.values.length === N && scratch.cuts.length === T) return scratch;
    const fresh = new CalibrationScratch(N, T);
    // Each cell's calibration is read before the next combination is calibrated.
    fresh.reused = [];
    return (this.scratches[k] = fresh);
  }

  /** An N-long array of any content. */
  rows(N: number): Float64Array {
    if (!this.cellWeights || this.cellWeights.length !== N) this.cellWeights = new Float64Array(N);
    return this.cellWeights;
  }
}

/**
 * @example
 * const workspace = new GridWorkspace();
 * const partials = prepared.chunks.map(([from, to]) => evaluateRange(prepared.task, from, to, workspace));
 */
export function evaluateRange(task: GridTask, from: number, to: number, workspace = new GridWorkspace()): GridPartial {
  const evaluator = rangeEvaluator(task, from, to, workspace);
  const { data, options, combinations, shared } = task;
  // A loop, not Array.from with a callback per index (cold code).
  const indices: number[] = [];
  for (let index = from; index < to; index++) indices.push(index);
  if (shared) {
    const outcome = taskOutcome(task);
    const logistic = options.prediction_scale === "logistic";
    const walk = workspace.walk?.fits(data.rows, shared.cols, 1)
      ? workspace.walk
      : (workspace.walk = WalkLevels.forThread(data.rows, shared.cols, 1, workspace.kernels));
    evaluator.prepareWalk(walk, outcome);
    try {
      walkCombinations(
        shared,
        data.y,
        combinations,
        task.walkOrder ? trieOrder(combinations, indices, true) : indices,
        logistic,
        (index, model) => evaluator.evaluate(index, model, outcome),
        evaluator.singular,
        walk,
        evaluator.cells,
      );
    } finally {
      walk.calibrating = false;
    }
  } else {
    indices.forEach(evaluator.direct);
  }
  return evaluator.finish();
}

/** The outcome statistics over every row, computed once per task (a Grid's chunks share them). */
const outcomes = new WeakMap<GridTask, OutcomeStats>();
function taskOutcome(task: GridTask): OutcomeStats {
  let outcome = outcomes.get(task);
  if (!outcome) outcomes.set(task, (outcome = outcomeStats(task.data.y, new Float64Array(task.data.rows))));
  return outcome;
}

/**
 * Long on purpose: the closures it returns are the per-combination hot path (select, calibrate,
 * weigh a cell), sharing the range's buffers through this one scope.
 *
 * @example
 * const e = rangeEvaluator(task, 0, 64);
 * for (let q = 0; q < 64; q++) e.direct(q);
 * e.partial.composite; // the range's adjusted-fit-weighted weights
 */
export function rangeEvaluator(task: GridTask, from: number, to: number, workspace = new GridWorkspace()): RangeEvaluator {
  const { data, theta, options, combinations } = task;
  const { rows: N, y } = data;
  const T = options.threshold.length;
  const censors = censorsOf(options);
  const logistic = options.prediction_scale === "logistic";
  const settings: CensorSettings = { thresholds: options.threshold, unit: options.censor_unit, operator: options.censor_operator };
  const retain = new Set(options.retain);
  const range = to - from;
  const cellCount = range * censors.length * T;

  const partial: GridPartial = {
    from,
    to,
    composite: new Float64Array(N),
    used: new Uint8Array(N),
    cellCombination: new Int32Array(cellCount),
    cellWeight: new Float64Array(cellCount),
    cellYhat: new Float64Array(cellCount),
    cellValid: new Uint8Array(cellCount),
    secondary: new Float64Array(4),
    singular: 0,
    retained: {},
    ysolo: retain.has("ysolo_cells") ? new Float64Array(N * range).fill(NaN) : null,
  };
  for (const censor of censors) {
    const cells: RetainedCensorCells = {
      yhat: retain.has("yhat_cells") ? new Float64Array(range * T).fill(NaN) : null,
      adjustedFit: retain.has("adjusted_fit_cells") ? new Float64Array(range * T).fill(NaN) : null,
      n: retain.has("n_cells") ? new Float64Array(range * T).fill(NaN) : null,
      weights: retain.has("weights_cells") ? new Float64Array(N * T * range).fill(NaN) : null,
    };
    if (cells.yhat || cells.adjustedFit || cells.n || cells.weights) partial.retained[censor] = cells;
  }

  const scratches = censors.map((_, k) => workspace.calibrationScratch(N, T, k));
  const factorsOf = censors.map(() => new Float64Array(T));
  const single = new Float64Array(T);
  const cellWeights = retain.has("weights_cells") ? workspace.rows(N) : null;
  const own = partial.ysolo ? new Float64Array(N) : null;
  let cell = 0;
  let allUsed = false;
  // One object for every combination of the range (a calibration reads it and keeps nothing of it).
  const fitSettings = { multiplier: options.adj_fit_multiplier, attributes: 0, logistic };

  // A walked model's weights are added up in its walk's arena (the WebAssembly kernels' memory),
  // then copied into the partial by `finish`: the same additions in the same order.
  // Its secondary sums too, while it holds the composite.
  let claimed: { passes: ArenaPasses; slot: number } | null = null;
  const compositeFor = (model: ScoredRows & { theta?: number }): Float64Array => {
    const passes = model.passes;
    if (!passes || model.theta === undefined)
      return claimed ? claimed.passes.claimComposite(claimed.slot, partial, partial.composite, partial.secondary) : partial.composite;
    if (claimed && (claimed.passes !== passes || claimed.slot !== model.theta)) throw new Error("a range's models come from two walks");
    claimed ??= { passes, slot: model.theta };
    return passes.claimComposite(model.theta, partial, partial.composite, partial.secondary);
  };
  const finish = (): GridPartial => {
    if (claimed) claimed.passes.releaseComposite(claimed.slot, partial, partial.composite, partial.secondary);
    claimed = null;
    return partial;
  };
  // Both censors' cells in one WebAssembly call (calibrate.ts `calibrateCellsOfTwo`) when no cell's calibration is kept.
  const cellsAtOnce = censors.length === 2 && !logistic && !own && !partial.retained.relevance && !partial.retained.similarity;
  let cellPlanes: Float64Array[] | undefined;

  // Cells made by WebAssembly (weights, yhat and validity, one plane each) copied to the partial's next cells.
  const putCells = (weight: Float64Array, yhat: Float64Array, valid: Float64Array): void => {
    partial.cellWeight.set(weight, cell);
    partial.cellYhat.set(yhat, cell);
    partial.cellValid.set(valid, cell);
    cell += weight.length;
  };

  const evaluate = (index: number, model: ScoredRows, outcome: OutcomeStats): void => {
    const local = index - from;
    if (model.usableCount === N) {
      if (!allUsed) partial.used.fill(1);
      allUsed = true;
    } else for (let i = 0; i < N; i++) partial.used[i] |= +(model.relevance[i] === model.relevance[i]);
    fitSettings.attributes = combinations[index].length;
    const composite = compositeFor(model);
    const secondary = claimed ? claimed.passes.secondaryOf(claimed.slot) : partial.secondary;
    if (cellsAtOnce && (model.calibrated || calibrateCellsOfTwo(model, y, outcome, settings, fitSettings, scratches[0], scratches[1], secondary, composite))) {
      // The cells' planes (weights, yhat, validity; the relevance censor's first), copied by `set`, not element by element in cold code.
      const planes = (cellPlanes ??= cellPlanesOf(model.passes!.cells, 2 * T));
      partial.cellCombination.fill(index, cell, cell + 2 * T);
      putCells(planes[0], planes[1], planes[2]);
      return;
    }
    let ownWeight = 0;
    own?.fill(0);
    // Both censors share each pass over the rows (calibrateBoth, addWeightsOfTwo): the same numbers as one censor after the other.
    const fitted =
      censors.length === 2
        ? calibrateBoth(model, y, outcome, settings, fitSettings, scratches[0], scratches[1])
        : [calibrate(model, y, outcome, censors[0], settings, fitSettings, scratches[0])];
    for (let k = 0; k < censors.length; k++) {
      const censor = censors[k];
      const factors = factorsOf[k];
      const kept = partial.retained[censor];
      for (let t = 0; t < T; t++) {
        const c = fitted[k].calibrations[t];
        const weight = cellWeight(c);
        factors[t] = weight;
        partial.cellCombination[cell] = index;
        partial.cellWeight[cell] = weight;
        partial.cellYhat[cell] = c.yhat;
        partial.cellValid[cell] = +(c.valid && Number.isFinite(c.yhat));
        cell++;
        if (kept) {
          if (kept.yhat) kept.yhat[local * T + t] = c.yhat;
          if (kept.adjustedFit) kept.adjustedFit[local * T + t] = c.adjustedFit;
          if (kept.n) kept.n[local * T + t] = c.n;
          if (kept.weights) {
            // An invalid calibration's weights are NaN on the rows it could use and 0 on the others.
            single.fill(0);
            single[t] = 1;
            cellWeights!.fill(0);
            addWeights(model, fitted[k], single, cellWeights!);
            for (let i = 0; i < N; i++) kept.weights[(i * T + t) * range + local] = cellWeights![i];
          }
        }
        if (!(weight > 0)) continue;
        ownWeight += weight;
        secondary[0] += weight * c.asymmetry;
        secondary[1] += weight * c.agreement;
        secondary[2] += weight * c.outlierInfluence;
        secondary[3] += weight * c.kFit;
      }
    }
    if (censors.length === 2) {
      addWeightsOfTwo(model, fitted[0], factorsOf[0], scratches[0], fitted[1], factorsOf[1], scratches[1], composite);
      if (own) addWeightsOfTwo(model, fitted[0], factorsOf[0], scratches[0], fitted[1], factorsOf[1], scratches[1], own);
    } else {
      addWeights(model, fitted[0], factorsOf[0], composite, scratches[0]);
      if (own) addWeights(model, fitted[0], factorsOf[0], own, scratches[0]);
    }
    if (own && partial.ysolo) {
      for (let i = 0; i < N; i++) own[i] /= ownWeight;
      const votes = soloVotes(own, y, model.relevance, outcome.mean, model.usableCount);
      for (let i = 0; i < N; i++) partial.ysolo[i * range + local] = votes[i];
    }
  };

  const takeCells = (block: WalkPlan, count: number): void => {
    // A walked model uses every row (evaluate's usableCount === N).
    if (!allUsed) partial.used.fill(1);
    allUsed = true;
    const m = count * 2 * T;
    partial.cellCombination.set(block.cellCombination.subarray(0, m), cell);
    putCells(block.weight.subarray(0, m), block.yhat.subarray(0, m), block.valid.subarray(0, m));
  };

  const invalidCombination = (index: number): void => {
    partial.singular++;
    for (let c = 0; c < censors.length * T; c++) {
      partial.cellCombination[cell] = index;
      partial.cellYhat[cell] = NaN;
      cell++;
    }
  };

  const evaluateDirect = (index: number): void => {
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
  };

  const singular = (index: number): void => (options.inv_method === "pseudoinverse" ? evaluateDirect(index) : invalidCombination(index));

  const prepareWalk = (levels: WalkLevels, outcome: OutcomeStats): boolean => {
    const fused = levels.extendCalibrate;
    if (!cellsAtOnce || !fused || levels.thetas !== 1 || T > 4) return false;
    const passes = levels.passes;
    // calibrateCellsOfTwo's arguments that do not change within the range, made once: its composite claimed now.
    const target = compositeFor(levels.models[0][0]);
    const fractions = passes.histograms.fractions!;
    for (let t = 0; t < T; t++) fractions[t] = options.threshold[t];
    passes.outcomeOf(y);
    const test = cutTest(settings.operator);
    const multipliers = [NaN];
    for (let k = 1; k <= levels.cols; k++) multipliers.push(choices.adjFitMultiplier(options.adj_fit_multiplier, k));
    fused.prepare({
      ybar: outcome.mean,
      syy: outcome.sumSquares,
      sign: test.sign,
      strict: test.strict,
      minRetained: choices.MIN_RETAINED,
      minComplement: choices.MIN_COMPLEMENT_FOR_ASYMMETRY,
      tieTolerance: choices.CUT_TIE_TOLERANCE,
      T,
      cutsFrom: settings.unit === "percent" ? 0 : 1,
      multipliers,
      secondary: passes.secondaryOf(0),
      target,
    });
    levels.calibrating = true;
    return true;
  };
  return { partial, finish, evaluate, singular, direct: evaluateDirect, prepareWalk, cells: takeCells };
}
