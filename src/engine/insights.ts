/**
 * Grid insights (docs/methodology.md section 7.5). The names are the engine's; the formulas are our own reading
 * (tag [G]): no public formula exists, so these are kept here, apart from the composite, to be
 * swapped when one does.
 */
import type { GridInsights } from "./result.js";

/** The Grid's cells, one entry each. */
export interface CellTable {
  /** Index of the cell's combination in `combinations`. */
  combination: Int32Array;
  /** Adjusted fit, the cell's weight in the composite (0 for an invalid cell). */
  weight: Float64Array;
  yhat: Float64Array;
  valid: Uint8Array;
}

/**
 * - variable_weights_k: adjusted-fit-weighted share of cells that use k;
 * - Impact on Fit (MCTC_k): mean adjusted fit of valid cells with k minus that of valid cells without it;
 * - Impact on Prediction (MCTP_k): composite yhat of the cells with k minus that of the cells without it;
 * - CCTP_k: each cell's (yhat_c - ybar), weighted as in the composite, shared equally among its
 *   attributes, so that the CCTPs add up to yhat_grid - ybar.
 * A comparison with an empty side (k in every cell, or in none) is NaN.
 */
export function gridInsights(cells: CellTable, combinations: readonly number[][], k: number, ybar: number): GridInsights {
  const has = combinations.map((combination) => {
    const mask = new Uint8Array(k);
    for (const j of combination) mask[j] = 1;
    return mask;
  });
  let total = 0;
  for (const w of cells.weight) total += w;

  const variableWeights: number[] = [];
  const conviction: number[] = [];
  const prediction: number[] = [];
  const component: number[] = [];
  for (let j = 0; j < k; j++) {
    const inside = { weight: 0, weightedYhat: 0, fitSum: 0, count: 0 };
    const outside = { weight: 0, weightedYhat: 0, fitSum: 0, count: 0 };
    let share = 0;
    for (let c = 0; c < cells.weight.length; c++) {
      if (!cells.valid[c]) continue;
      const combination = cells.combination[c];
      const weight = cells.weight[c];
      const yhat = cells.yhat[c];
      const side = has[combination][j] ? inside : outside;
      side.fitSum += weight;
      side.count++;
      if (weight > 0) {
        side.weight += weight;
        side.weightedYhat += weight * yhat;
        if (side === inside) share += ((weight / total) * (yhat - ybar)) / combinations[combination].length;
      }
    }
    variableWeights.push(total > 0 ? inside.weight / total : NaN);
    conviction.push(inside.fitSum / inside.count - outside.fitSum / outside.count);
    prediction.push(inside.weightedYhat / inside.weight - outside.weightedYhat / outside.weight);
    component.push(total > 0 ? share : NaN);
  }
  return {
    variable_weights: variableWeights,
    marginal_contribution_to_conviction: conviction,
    marginal_contribution_to_prediction: prediction,
    component_contribution_to_prediction: component,
    impact_on_fit: conviction,
    impact_on_prediction: prediction,
  };
}
