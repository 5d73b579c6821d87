/**
 * Grid (docs/methodology.md section 7): every admissible attribute combination x censor x threshold is a
 * PSR cell; the forecast is the adjusted-fit-weighted composite of all cells.
 *
 * The combinations are evaluated in fixed chunks (grid-cells.ts) whose partial sums are merged in
 * order, so a Grid computed on one thread (`grid`) or on several (`gridParallel`) is bit-identical.
 */
import { linearPrediction, outcomeStats } from "./calibrate.js";
import { EMPTY_COMPOSITE_FALLBACK } from "./choices.js";
import { planCombinations, type CombinationPlan } from "./combinations.js";
import { checkData, type Dataset } from "./data.js";
import { ComputationError, InvalidInputError } from "./errors.js";
import { censorsOf, evaluateRange, GridWorkspace, type GridPartial, type GridTask } from "./grid-cells.js";
import { gridInsights } from "./insights.js";
import { basisKernels } from "./kernels/basis.js";
import { modelAt, modelBasis, type ModelBasis } from "./model.js";
import { resolveGridOptions, type Given, type GridOptions } from "./options.js";
import { checkBinaryOutcome, matrix, populationSd } from "./psr.js";
import type { EngineResult, GridCells, GridCensorCells } from "./result.js";
import { soloHistogram, soloStatistics, soloVotes } from "./solo.js";
import { fixedChunks, walkOrder } from "./walk-order.js";
import { standardize, withTheta, type Standardized } from "./walk.js";

/**
 * Combinations per chunk. Small enough to spread a Grid over the cores, large enough that the
 * chunk's first combination (which cannot share its prefix with the previous chunk) costs little.
 */
export const GRID_CHUNK = 64;

export interface PreparedGrid {
  task: GridTask;
  /** The plan: its combinations in their own order (the task's may be in a walk's). */
  plan: CombinationPlan;
  admissible: number;
  sampled: boolean;
  /** [from, to) ranges of the task's combinations, in merge order. */
  chunks: [number, number][];
}

/**
 * Validates the input and plans the combinations and chunks. `x`, the standardised attributes of
 * the same `data` (any theta), saves recomputing X's moments for another theta.
 */
export function prepareGrid(
  data: Dataset,
  theta: Float64Array,
  given: Given<GridOptions>,
  x?: Standardized | null,
  /** The plan of another row prepared on the same data and options (an experiment's rows share it). */
  shared?: CombinationPlan,
): PreparedGrid {
  checkData(data, theta);
  const options = resolveGridOptions(given, data.cols);
  if (options.prediction_scale === "logistic") checkBinaryOutcome(data.y, new Float64Array(data.rows));
  const plan = shared ?? planCombinations(data.cols, options);
  const standard = x !== undefined ? x && withTheta(x, theta) : hasMissing(data) ? null : standardize(data, theta);
  // A walk (complete data) takes the combinations in the order that shares the most levels; each combination's own model (missing values) keeps the plan's.
  const walk = standard ? walkOrder(plan.combinations, GRID_CHUNK) : null;
  return {
    task: {
      data,
      theta,
      options,
      combinations: walk ? walk.combinations : plan.combinations,
      walkOrder: walk ? walk.planIndex : null,
      shared: standard,
    },
    plan,
    admissible: plan.admissible,
    sampled: plan.sampled,
    chunks: walk ? walk.chunks : fixedChunks(plan.combinations.length, GRID_CHUNK),
  };
}

export function grid(data: Dataset, theta: Float64Array, given: Given<GridOptions> = {}): EngineResult {
  const prepared = prepareGrid(data, theta, given);
  const workspace = new GridWorkspace();
  // Each chunk is merged as soon as it is done, so that memory does not grow with the number of chunks.
  const merge = new GridMerge(data.rows);
  for (const [from, to] of prepared.chunks) merge.add(evaluateRange(prepared.task, from, to, workspace));
  return finishMerged(prepared, merge);
}

/** What the result needs of a chunk once its N-long sums are merged: its cells and its retained arrays. */
type ChunkCells = Pick<GridPartial, "from" | "to" | "cellCombination" | "cellWeight" | "cellYhat" | "cellValid" | "retained" | "ysolo">;

/**
 * The chunks' partials merged in chunk order, one at a time: the composite, the used rows and the
 * secondary sums are added up as each partial comes (the very additions of a merge at the end),
 * and of each partial only its cells and retained arrays are kept.
 *
 * @example
 * const merge = new GridMerge(data.rows);
 * for (const [from, to] of prepared.chunks) merge.add(evaluateRange(prepared.task, from, to));
 * const result = finishMerged(prepared, merge);
 */
export class GridMerge {
  readonly composite: Float64Array;
  readonly used: Uint8Array;
  readonly secondary = new Float64Array(4);
  singular = 0;
  readonly chunks: ChunkCells[] = [];
  constructor(readonly rows: number) {
    this.composite = new Float64Array(rows);
    this.used = new Uint8Array(rows);
  }

  /** Adds the next partial in chunk order. */
  add(p: GridPartial): void {
    const { composite, used } = this;
    for (let i = 0; i < this.rows; i++) {
      composite[i] += p.composite[i];
      used[i] |= p.used[i];
    }
    this.keep(p);
  }

  /** Adds the next partials in chunk order, all at once: the very additions of `add` one by one. */
  addAll(partials: readonly GridPartial[]): void {
    const composites: Float64Array[] = [];
    const useds: Uint8Array[] = [];
    for (let p = 0; p < partials.length; p++) {
      composites.push(partials[p].composite);
      useds.push(partials[p].used);
    }
    basisKernels().mergeRows(composites, useds, this.composite, this.used);
    for (let p = 0; p < partials.length; p++) this.keep(partials[p]);
  }

  /** The partial's secondary sums and singular count added, its cells and retained arrays kept. */
  private keep(p: GridPartial): void {
    const { secondary } = this;
    for (let s = 0; s < 4; s++) secondary[s] += p.secondary[s];
    this.singular += p.singular;
    this.chunks.push({
      from: p.from,
      to: p.to,
      cellCombination: p.cellCombination,
      cellWeight: p.cellWeight,
      cellYhat: p.cellYhat,
      cellValid: p.cellValid,
      retained: p.retained,
      ysolo: p.ysolo,
    });
  }
}

/**
 * Merges the chunks' partials, in chunk order, into the Grid's result. `basis`, the all-attribute
 * model apart from theta (`fullBasis` of the same data and options), when the caller has it
 * already (computed meanwhile on another thread); computed here when absent.
 */
export function finishGrid(prepared: PreparedGrid, partials: GridPartial[], basis?: ModelBasis | null): EngineResult {
  const merge = new GridMerge(prepared.task.data.rows);
  merge.addAll(partials);
  return basis === undefined ? finishMerged(prepared, merge) : finishMerged(prepared, merge, basis);
}

/** The Grid's result from its merged chunks. */
export function finishMerged(
  prepared: PreparedGrid,
  merge: GridMerge,
  /** The all-attribute model apart from theta (`fullBasis`), when rows on the same data and options share it. */
  basis: ModelBasis | null = fullBasis(prepared.task.data, prepared.task.options),
): EngineResult {
  const { data, theta, options, combinations } = prepared.task;
  const { rows: N, cols: K, y } = data;
  const censors = censorsOf(options);
  const T = options.threshold.length;

  const { composite, used, secondary, singular } = merge;
  const partials = merge.chunks;
  const cells = mergedCells(partials);
  const { total, squares, weightedYhat, invalidCells } = cellTotals(cells);
  const warnings: string[] = [];
  if (singular > 0) {
    warnings.push(
      `${singular} combination(s) have a singular covariance (or too few complete rows) and get zero weight` +
        (options.inv_method === "pseudoinverse" ? "." : '; inv_method: "pseudoinverse" evaluates them.'),
    );
  }
  const { usedMask, usedCount, ybar, yhat } = normalizedComposite(
    composite,
    used,
    y,
    { total, weightedYhat, invalid: invalidCells === cells.weight.length },
    warnings,
  );
  const fit = compositeFit(composite, y, used);
  const votes = soloVotes(composite, y, usedMask, ybar, usedCount);
  const stats = soloStatistics(votes);
  const full = basis && modelAt(basis, data, theta);
  if (!full) warnings.push("The model with every attribute cannot be fitted (singular covariance); its relevance and yhat_linear are null.");
  const mean = (sum: number) => (total > 0 ? sum / total : NaN);
  const insights = gridInsights(cells, combinations, K, ybar);
  const nothing = () => new Array<number>(N).fill(NaN);

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
    asymmetry: [mean(secondary[0])],
    agreement: [mean(secondary[1])],
    outlier_influence: [mean(secondary[2])],
    k_fit: [mean(secondary[3])],
    ...(options.include_linear_regression ? { yhat_linear: [full ? linearPrediction(full, y, outcomeStats(y, full.relevance)) : NaN] } : {}),
    insights: {
      relevance: full ? listOf(full.relevance) : nothing(),
      similarity: full ? listOf(full.similarity) : nothing(),
      info_x: full ? listOf(full.infoX) : nothing(),
      info_theta: [full ? full.infoTheta : NaN],
      weights_concentration: [populationSd(composite)],
      "Impact on Fit": insights.impact_on_fit,
      "Impact on Prediction": insights.impact_on_prediction,
    },
    prediction_weights: { weights: columnOf(composite) },
    solo_distribution: {
      y_solo: columnOf(votes),
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
    ...(options.retain.length > 0 ? { grid_cells: retainedCells(prepared, partials) } : {}),
    grid_search: {
      combinations: combinations.length,
      admissible: prepared.admissible,
      sampled: prepared.sampled,
      seed: options.seed,
      cells: cells.weight.length,
      invalid_cells: invalidCells,
    },
    warnings,
  };
}

/**
 * Divides the composite by the cells' total weight (or, when no cell has any, falls back to equal
 * weights over the used rows, with a warning), and gives the Grid's yhat; also the mask of the used
 * rows (0 used, NaN not), their count and their mean outcome.
 */
function normalizedComposite(
  composite: Float64Array,
  used: Uint8Array,
  y: Float64Array,
  totals: { total: number; weightedYhat: number; invalid: boolean },
  warnings: string[],
) {
  const N = composite.length;
  // Over the used rows only: a row no combination could use has no vote and weight 0.
  const usedMask = new Float64Array(N);
  let usedCount = 0;
  for (let i = 0; i < N; i++) {
    usedMask[i] = used[i] ? 0 : NaN;
    usedCount += used[i];
  }
  const ybar = outcomeStats(y, usedMask).mean;
  let yhat: number;
  if (totals.total > 0) {
    for (let i = 0; i < N; i++) composite[i] /= totals.total;
    yhat = totals.weightedYhat / totals.total;
  } else {
    if (totals.invalid) {
      throw new ComputationError(
        'Every Grid cell is invalid (each retains fewer than 2 observations or has a singular covariance); lower the thresholds or use inv_method: "pseudoinverse".',
        "options.threshold",
      );
    }
    // docs/methodology.md section 7.2 [G]: no cell has any conviction, so fall back to equal weights.
    for (let i = 0; i < N; i++) composite[i] = used[i] / usedCount;
    yhat = ybar;
    warnings.push(`Every cell has zero adjusted fit; the composite falls back to ${EMPTY_COMPOSITE_FALLBACK} (yhat = mean of y).`);
  }
  return { usedMask, usedCount, ybar, yhat };
}

/** The chunks' cells, concatenated in chunk order. */
function mergedCells(partials: GridMerge["chunks"]) {
  return {
    combination: concat(
      partials.map((p) => p.cellCombination),
      Int32Array,
    ),
    weight: concat(
      partials.map((p) => p.cellWeight),
      Float64Array,
    ),
    yhat: concat(
      partials.map((p) => p.cellYhat),
      Float64Array,
    ),
    valid: concat(
      partials.map((p) => p.cellValid),
      Uint8Array,
    ),
  };
}

/** Over the cells with a positive weight: its sum, the sum of its squares and the weighted yhat; and the count of invalid cells. */
function cellTotals(cells: ReturnType<typeof mergedCells>) {
  const out = new Float64Array(4);
  basisKernels().cellTotals(cells.weight, cells.yhat, cells.valid, out);
  return { total: out[0], squares: out[1], weightedYhat: out[2], invalidCells: out[3] };
}

/** values as a column: one single-value array per row (a plain loop: Array.from with a mapping function costs several times more). */
function columnOf(values: Float64Array): number[][] {
  const out = new Array<number[]>(values.length);
  for (let i = 0; i < values.length; i++) out[i] = [values[i]];
  return out;
}

/** values as a plain array (a loop: Array.from goes through the typed array's iterator, several times slower). */
function listOf(values: Float64Array): number[] {
  const out = new Array<number>(values.length);
  for (let i = 0; i < values.length; i++) out[i] = values[i];
  return out;
}

function concat<A extends Int32Array | Float64Array | Uint8Array>(parts: A[], Type: { new (length: number): A }): A {
  const out = new Type(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const p of parts) {
    out.set(p as never, offset);
    offset += p.length;
  }
  return out;
}

export function hasMissing(data: Dataset): boolean {
  return basisKernels().hasNaN(data.X);
}

/** fit = squared Pearson correlation of the weights with y over the used rows (0 for constant weights). */
function compositeFit(weights: Float64Array, y: Float64Array, used: Uint8Array): number {
  return basisKernels().compositeFit(weights, y, used);
}

/**
 * The all-attribute model behind yhat_linear and the relevance insights (rows complete in every
 * column), apart from theta; null when it cannot be fitted.
 */
export function fullBasis(data: Dataset, options: GridOptions): ModelBasis | null {
  const columns = Array.from({ length: data.cols }, (_, j) => j);
  const logistic = options.prediction_scale === "logistic";
  try {
    return modelBasis(data, { columns, missing: "complete", invMethod: options.inv_method, logistic });
  } catch (error) {
    // Too few complete rows (InvalidInputError) or a singular covariance: the Grid goes on without it.
    if (error instanceof ComputationError || error instanceof InvalidInputError) return null;
    throw error;
  }
}

/** The retained arrays in the engine layout (the plan's order), from the partials' range-local arrays. */
function retainedCells(prepared: PreparedGrid, partials: ChunkCells[]): GridCells {
  const { data, options, walkOrder } = prepared.task;
  const { combinations } = prepared.plan;
  const { rows: N, cols: K } = data;
  const Q = combinations.length;
  const T = options.threshold.length;
  const retain = new Set(options.retain);
  // The plan's index of the task's combination at `position` (the task's may be in a walk's order).
  const planIndex = (position: number) => (walkOrder ? walkOrder[position] : position);
  const cells: GridCells = {};
  if (retain.has("k_cells")) cells.k_cells = combinations.map((c) => c.length);
  if (retain.has("combi_cells")) {
    cells.combi_cells = combinations.map((c) => {
      const row = new Array<number>(K).fill(0);
      for (const j of c) row[j] = 1;
      return row;
    });
  }
  if (retain.has("ysolo_cells")) {
    const ysolo = matrix(N, Q);
    for (const p of partials) {
      const range = p.to - p.from;
      for (let q = 0; q < range; q++) {
        const at = planIndex(p.from + q);
        for (let i = 0; i < N; i++) ysolo[i][at] = p.ysolo![i * range + q];
      }
    }
    cells.ysolo_cells = ysolo;
  }
  for (const censor of censorsOf(options)) {
    const kept: GridCensorCells = {};
    const byCombination = (pick: (p: ChunkCells) => Float64Array | null | undefined) => {
      const out = matrix(Q, T);
      for (const p of partials) {
        const values = pick(p);
        if (values) for (let q = p.from; q < p.to; q++) for (let t = 0; t < T; t++) out[planIndex(q)][t] = values[(q - p.from) * T + t];
      }
      return out;
    };
    if (retain.has("yhat_cells")) kept.yhat_cells = byCombination((p) => p.retained[censor]?.yhat);
    if (retain.has("adjusted_fit_cells")) kept.adjusted_fit_cells = byCombination((p) => p.retained[censor]?.adjustedFit);
    if (retain.has("n_cells")) kept.n_cells = byCombination((p) => p.retained[censor]?.n);
    if (retain.has("weights_cells")) {
      const weights = Array.from({ length: N }, () => matrix(T, Q));
      for (const p of partials) {
        const values = p.retained[censor]?.weights;
        const range = p.to - p.from;
        if (!values) continue;
        for (let q = 0; q < range; q++) {
          const at = planIndex(p.from + q);
          for (let i = 0; i < N; i++) for (let t = 0; t < T; t++) weights[i][t][at] = values[(i * T + t) * range + q];
        }
      }
      kept.weights_cells = weights;
    }
    if (Object.keys(kept).length > 0) cells[censor] = kept;
  }
  return cells;
}
