/**
 * Grid insights (docs/methodology.md section 7.5). The names are the engine's; the formulas are our own reading
 * (tag [G]): no public formula exists, so these are kept here, apart from the composite, to be
 * swapped when one does.
 */
import { basisKernels } from "./kernels/basis.js";
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
  // has[q k + j]: whether combination q holds attribute j; sizes[q]: its number of attributes.
  const Q = combinations.length;
  const has = new Uint8Array(Q * k);
  const sizes = new Int32Array(Q);
  for (let q = 0; q < Q; q++) {
    const combination = combinations[q];
    for (let a = 0; a < combination.length; a++) has[q * k + combination[a]] = 1;
    sizes[q] = combination.length;
  }
  // Per attribute j, slot j sums the cells with j (inside) and slot k + j those without it
  // (outside), each in cell order: one pass over the cells, each cell's terms made once (the same
  // values, added in the same order, as one pass over the cells per attribute). Slot j of share:
  // each cell's (weight / total) (yhat - ybar) shared among its attributes (slot k + j is unused).
  const sums = new Float64Array(10 * k);
  const total = basisKernels().insights(cells.combination, cells.weight, cells.yhat, cells.valid, has, sizes, k, ybar, sums);
  const fitSum = sums.subarray(0, 2 * k);
  const count = sums.subarray(2 * k, 4 * k);
  const positiveWeight = sums.subarray(4 * k, 6 * k);
  const weightedYhat = sums.subarray(6 * k, 8 * k);
  const share = sums.subarray(8 * k, 10 * k);
  const variableWeights: number[] = [];
  const conviction: number[] = [];
  const prediction: number[] = [];
  const component: number[] = [];
  for (let j = 0; j < k; j++) {
    const o = k + j;
    variableWeights.push(total > 0 ? positiveWeight[j] / total : NaN);
    conviction.push(fitSum[j] / count[j] - fitSum[o] / count[o]);
    prediction.push(weightedYhat[j] / positiveWeight[j] - weightedYhat[o] / positiveWeight[o]);
    component.push(total > 0 ? share[j] : NaN);
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
