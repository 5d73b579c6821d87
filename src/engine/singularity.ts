/**
 * `grid-singularity` (v2 `POST /grid-singularity[/binary]`): the Grid, reported through its
 * single best cell instead of its composite.
 *
 * No public source says what the vendor's endpoint computes; the client only posts to it
 * (`PSRFunction` 3 and 7). The vendor's texts leave it open; the reading here (docs/api.md section 3) is "grid, reporting the single
 * highest-adjusted-fit cell", and this module does exactly that:
 *
 * 1. the Grid runs with the caller's options (every combination x threshold x censor), keeping
 *    each cell's adjusted fit, yhat and attribute combination;
 * 2. the winning cell is the one with the highest finite adjusted fit (ties: the first in the
 *    Grid's order, relevance before similarity, then combination, then threshold, read up to
 *    rounding by the engine's `firstMaximum`, the rule MaxFit uses; docs/ties.md);
 * 3. the result is a full PSR of that cell (its attributes, censor and threshold; complete rows,
 *    as a Grid cell uses), so every field of a single calibration is there (weights, include,
 *    fit, r_star, ...), and its yhat is the cell's yhat;
 * 4. the Grid's own `grid_insights` (Impact on Fit / Prediction over all attributes) and
 *    `grid_search` are kept, and `grid_singularity` says which cell won:
 *    `{attribute_combi: K 0/1, attributes: [column indexes], censor_type, threshold,
 *    adjusted_fit, cells}`.
 *
 * The result's `analysis` stays "grid" (the job is a Grid). Retain options are not carried over:
 * the result is one cell, not the Grid's cells.
 */
import type { Dataset } from "./data.js";
import { firstMaximum } from "./choices.js";
import { ComputationError } from "./errors.js";
import { resolveGridOptions, type CensorType, type Given, type GridOptions, type PsrOptions } from "./options.js";
import type { EngineResult, GridCensorCells } from "./result.js";
import { runAnalysis } from "./run.js";

export interface SingularityCell {
  /** Length K, 1 where the winning combination uses the attribute. */
  attribute_combi: number[];
  /** 0-based column indexes of those attributes. */
  attributes: number[];
  censor_type: CensorType;
  threshold: number;
  adjusted_fit: number;
  /** Cells the Grid evaluated (combinations x thresholds x censors). */
  cells: number;
}

export type SingularityResult = EngineResult & { grid_singularity: SingularityCell };

export function gridSingularity(data: Dataset, theta: Float64Array, given: Given<GridOptions>): SingularityResult {
  const resolved = resolveGridOptions(given, data.cols);
  const full = runAnalysis("grid", data, theta, { ...given, retain: ["adjusted_fit_cells", "yhat_cells", "combi_cells"] });
  const cells = full.grid_cells ?? {};
  const combis = cells.combi_cells ?? [];
  const thresholds = resolved.threshold;
  const censors: CensorType[] = resolved.censor_type === "both" ? ["relevance", "similarity"] : [resolved.censor_type];

  // The cells in the Grid's order, each with its adjusted fit (NaN when it has no finite yhat).
  const order: { censor: CensorType; q: number; t: number; af: number }[] = [];
  for (const censor of censors) {
    const kept: GridCensorCells | undefined = cells[censor];
    const fits = kept?.adjusted_fit_cells ?? [];
    const yhats = kept?.yhat_cells ?? [];
    for (let q = 0; q < fits.length; q++) {
      for (let t = 0; t < fits[q].length; t++) {
        order.push({ censor, q, t, af: Number.isFinite(yhats[q]?.[t]) ? fits[q][t] : NaN });
      }
    }
  }
  const count = order.length;
  // The engine's tie rule, the one MaxFit uses (docs/ties.md).
  const best = order[firstMaximum(order.map((cell) => cell.af))];
  if (best === undefined || combis[best.q] === undefined) {
    throw new ComputationError(
      "grid-singularity: no cell of the Grid has a finite adjusted fit (every combination and threshold keeps too few rows or has a singular covariance)",
      "inv_method",
    );
  }

  const combi = combis[best.q];
  const columns = combi.flatMap((on, j) => (on === 1 ? [j] : []));
  const { rows: N, cols: K } = data;
  const X = new Float64Array(N * columns.length);
  for (let i = 0; i < N; i++) for (let c = 0; c < columns.length; c++) X[i * columns.length + c] = data.X[i * K + columns[c]];
  const sub: Dataset = { y: data.y, X, rows: N, cols: columns.length };
  const subTheta = Float64Array.from(columns, (j) => theta[j]);
  const cellOptions: Given<PsrOptions> = {
    threshold: [thresholds[best.t]],
    censor_type: best.censor,
    censor_unit: resolved.censor_unit,
    censor_operator: resolved.censor_operator,
    prediction_scale: resolved.prediction_scale,
    adj_fit_multiplier: resolved.adj_fit_multiplier,
    inv_method: resolved.inv_method,
    include_linear_regression: resolved.include_linear_regression,
    missing_moments: "complete",
  };
  const cell = runAnalysis("psr", sub, subTheta, cellOptions);
  return {
    ...cell,
    analysis: "grid",
    ...(full.grid_insights ? { grid_insights: full.grid_insights } : {}),
    ...(full.grid_search ? { grid_search: full.grid_search } : {}),
    warnings: [...full.warnings, ...cell.warnings],
    grid_singularity: {
      attribute_combi: [...combi],
      attributes: columns,
      censor_type: best.censor,
      threshold: thresholds[best.t],
      adjusted_fit: best.af,
      cells: count,
    },
  };
}
