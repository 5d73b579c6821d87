/**
 * The v2 flat result object (docs/api.md section 3) of a completed job, derived from the
 * engine's result by the mapping table at the end of section 5.2.
 *
 * Shapes (G12, "always nested 2-D"):
 * - scalars `[[x]]`; per-threshold values 1 x T `[[x1, ..., xT]]` (T = 1 for MaxFit and the Grid
 *   composite); per-attribute Grid contributions 1 x K;
 * - per-observation vectors N x 1 `[[a], [b], ...]`; `weights` and `include` N x T as the engine has them;
 * - `info_theta` 1 x 1, as G12 recommends (the published example repeats the scalar N x 1; the
 *   client reads both the same way, see result.ts).
 *
 * Undefined numbers stay NaN here: `toJson` writes them as null. A completed body always has
 * `status_code: 11` and `error_code: 0`, and never a key named `error` or `status` (section 2.2,
 * rules 6 and 7).
 *
 * Decisions where the specification is open:
 * - A NaN yhat (a PSR threshold that keeps fewer than two rows) is left as NaN, so the wire shows
 *   `[[null]]` (or a null inside 1 x T). Rule 5: `[[null]]` still counts as done, and the job did
 *   complete; MaxFit and Grid fail instead when no calibration is valid, so only PSR can get here.
 * - `eval_type` is `[["relevance"]]` / `[["similarity"]]` for the censor evaluated (PSR) or chosen
 *   (MaxFit). A Grid evaluates every censor in `censor_type`: one censor gives its name, both give
 *   `[["both"]]`, the v2 request spelling of that choice.
 * - `most_eval` is `[[true]]` for `gte`/`gt` and `[[false]]` for `lte`/`lt`; the operator is not in
 *   the engine result, so the caller passes it (`extras.censor_operator`, default `gte`, G9).
 * - `K` is `auxiliary.k` (1 x T); a Grid composite has no auxiliary block, so `K` is `[[K]]`, the
 *   number of attributes. `n`, `phi`, `lambda_sq`, `rho`, `r_star`, `r_star_percent` and `include`
 *   are absent for a Grid (its composite has none: docs/api.md section 3, "a field not filled is absent").
 * - `ysolo_*` are written for Grid only (section 5.1 lists them as Grid fields).
 * - A Grid's retained cells (the client's `_retain_grid_objects`, `_is_retain_all_grid_objects`)
 *   come at the top level under the client's VALID_RETAIN_KEYS names, each nested as G12 asks
 *   (Q combinations, T thresholds, K attributes, N observations; C censors evaluated):
 *   `combi_cells` Q x K (0/1), `k_cells` Q x T (the combination's size at each threshold,
 *   docs/methodology.md section 7.4), `ysolo_cells` N x Q, and the per-censor cells with the censors side by side
 *   along the threshold axis, in the Grid's order (relevance's T columns, then similarity's):
 *   `yhat_cells`, `adjusted_fit_cells`, `n_cells` Q x (C T) and `weights_cells` N x (C T) x Q. So
 *   cell (combination q, censor c, threshold t) is column c T + t of row q. `ysolo_distribution`
 *   asks for no array of its own: the composite's y-solo statistics are the `ysolo_*` fields.
 * - Engine fields v2 has no name for (`thresholds`, `warnings`, `full_var`, `part_var`,
 *   `weights_excluded`, `weights_concentration`, `y_solo`, the histogram, `maxfit_index`, the
 *   Grid's `variable_weights`, `grid_search`) are left out; the client computes
 *   weights_concentration itself (section 5.3).
 */
import type { CensorOperator } from "../engine/options.js";
import type { EngineResult, GridCells, GridCensorCells } from "../engine/result.js";

export interface V2ResultExtras {
  /** The experiment this job belongs to (G20); written as a plain integer. */
  experiment_id?: number;
  /** The censor operator the job ran with; decides `most_eval`. Default `gte` (G9). */
  censor_operator?: CensorOperator;
  /** Echo the receipt at the top of the body, as a running body does. */
  job_id?: number;
  job_code?: string;
}

type Nested = unknown[][];

const scalar = (x: unknown): Nested => [[x]];
const row = (v: ReadonlyArray<unknown>): Nested => [Array.from(v)];
const column = (v: ReadonlyArray<unknown>): Nested => v.map((x) => [x]);
const matrix = (m: ReadonlyArray<ReadonlyArray<unknown>>): Nested => m.map((r) => Array.from(r));

/** The v2 flat result object of a completed job; serialise it with `toJson`. */
export function toV2Result(result: EngineResult, extras: V2ResultExtras = {}): Record<string, unknown> {
  const operator = extras.censor_operator ?? "gte";
  if (!["gt", "gte", "lt", "lte"].includes(operator)) {
    throw new RangeError(`toV2Result: censor_operator must be gt, gte, lt or lte, got ${String(operator)}`);
  }
  if (extras.experiment_id !== undefined && !Number.isInteger(extras.experiment_id)) {
    throw new RangeError(`toV2Result: experiment_id must be an integer, got ${String(extras.experiment_id)}`);
  }
  const isGrid = result.analysis === "grid";
  const censors = new Set(result.censor_type);
  const evalType = censors.size > 1 ? "both" : (result.censor_type[0] ?? "relevance");
  const out: Record<string, unknown> = {};

  if (extras.job_id !== undefined) out.job_id = extras.job_id;
  if (extras.job_code !== undefined) out.job_code = extras.job_code;
  out.status_code = 11;
  out.error_code = 0;

  out.yhat = row(result.yhat);
  out.fit = row(result.fit);
  out.adjusted_fit = row(result.adjusted_fit);
  out.kfit = row(result.k_fit);
  out.agreement = row(result.agreement);
  out.asymmetry = row(result.asymmetry);
  out.outlier_influence = row(result.outlier_influence);

  const { include, weights } = result.prediction_weights;
  if (include !== undefined) out.include = matrix(include);
  out.weights = matrix(weights);

  out.relevance = column(result.insights.relevance);
  out.similarity = column(result.insights.similarity);
  out.info_x = column(result.insights.info_x);
  out.info_theta = scalar(result.insights.info_theta[0] ?? NaN);

  const aux = result.auxiliary;
  out.K = aux !== undefined ? row(aux.k) : scalar(result.n_variables);
  if (aux !== undefined) {
    out.n = row(aux.n);
    out.phi = row(aux.phi);
    out.lambda_sq = row(aux.lambda_sq);
    out.rho = row(aux.rho);
    out.r_star = row(aux.r_star);
    out.r_star_percent = row(aux.r_star_percent);
  }
  out.eval_type = scalar(evalType);
  out.most_eval = scalar(operator === "gte" || operator === "gt");
  if (result.yhat_linear !== undefined) out.yhat_linear = scalar(result.yhat_linear[0] ?? NaN);

  const gi = result.grid_insights;
  if (gi !== undefined) {
    const mctc = gi.marginal_contribution_to_conviction;
    const mctp = gi.marginal_contribution_to_prediction;
    out.marginal_contribution_to_conviction = row(mctc);
    out.contribution_to_conviction = row(mctc);
    out.variable_importance = row(mctc);
    out.marginal_contribution_to_prediction = row(mctp);
    out.contribution_to_prediction = row(mctp);
    out.variable_importance_on_yhat = row(mctp);
    out.component_contribution_to_prediction = row(gi.component_contribution_to_prediction);
  }
  if (isGrid) {
    const s = result.solo_distribution.statistics;
    out.ysolo_sigma = scalar(s.sigma[0] ?? NaN);
    out.ysolo_skewness = scalar(s.skewness[0] ?? NaN);
    out.ysolo_kurtosis = scalar(s.kurtosis[0] ?? NaN);
    out.ysolo_pearson_modality_index = scalar(s.pearson_modality_index[0] ?? NaN);
    out.ysolo_bimodality_coefficient = scalar(s.bimodal_index[0] ?? NaN);
  }
  if (isGrid && result.grid_cells !== undefined) Object.assign(out, retainedCells(result.grid_cells, result.n_thresholds, result.censor_type));
  if (extras.experiment_id !== undefined) out.experiment_id = extras.experiment_id;
  return out;
}

const PER_CENSOR = ["yhat_cells", "adjusted_fit_cells", "n_cells"] as const;

/** A Grid's retained cells in the v2 layout (see the header): censors side by side along the threshold axis. */
function retainedCells(cells: GridCells, T: number, censors: ReadonlyArray<"relevance" | "similarity">): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (cells.combi_cells !== undefined) out.combi_cells = matrix(cells.combi_cells);
  if (cells.k_cells !== undefined) out.k_cells = cells.k_cells.map((k) => new Array<number>(T).fill(k));
  if (cells.ysolo_cells !== undefined) out.ysolo_cells = matrix(cells.ysolo_cells);
  const blocks: GridCensorCells[] = [];
  for (const censor of censors) {
    const block = cells[censor];
    if (block !== undefined) blocks.push(block);
  }
  for (const key of PER_CENSOR) {
    const parts = blocks.map((block) => block[key]);
    if (parts.length === 0 || parts.some((p) => p === undefined)) continue;
    // Row q: each censor's T values in turn.
    out[key] = parts[0]!.map((_, q) => parts.flatMap((p) => Array.from(p![q])));
  }
  const weights = blocks.map((block) => block.weights_cells);
  if (weights.length > 0 && weights.every((w) => w !== undefined)) {
    // Observation i: each censor's T x Q block in turn.
    out.weights_cells = weights[0]!.map((_, i) => weights.flatMap((w) => w![i].map((row) => Array.from(row))));
  }
  return out;
}
