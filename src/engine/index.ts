/** The relevance engine: PSR, MaxFit and Grid as pure functions over typed arrays. */
export { psr, maxfit } from "./psr.js";
export { grid } from "./grid.js";
export { gridParallel, type ParallelSettings } from "./grid-parallel.js";
export { runAnalysis, type GivenOptionsOf } from "./run.js";
export { checkData, datasetFromRows, type Dataset } from "./data.js";
export { InvalidInputError, ComputationError } from "./errors.js";
export { RbpBaseError } from "../errors/index.js";
export * from "./options.js";
export type * from "./result.js";
export { ANALYSES } from "./result.js";
export type { Histogram, SoloStatistics } from "./solo.js";
