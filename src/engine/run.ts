/** Runs one analysis by name: the dispatch the CLI and the service's workers share. */
import type { Dataset } from "./data.js";
import { grid } from "./grid.js";
import type { Given, GridOptions, MaxFitOptions, PsrOptions } from "./options.js";
import { maxfit, psr } from "./psr.js";
import type { Analysis, EngineResult } from "./result.js";

/** Options of each analysis, as a caller gives them. */
export interface GivenOptionsOf {
  psr: Given<PsrOptions>;
  maxfit: Given<MaxFitOptions>;
  grid: Given<GridOptions>;
}

export function runAnalysis<A extends Analysis>(analysis: A, data: Dataset, theta: Float64Array, options: GivenOptionsOf[A]): EngineResult {
  switch (analysis) {
    case "psr":
      return psr(data, theta, options as Given<PsrOptions>);
    case "maxfit":
      return maxfit(data, theta, options as Given<MaxFitOptions>);
    case "grid":
      return grid(data, theta, options as Given<GridOptions>);
  }
  throw new RangeError(`unknown analysis ${String(analysis)}`);
}
