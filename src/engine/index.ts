/** The relevance engine: PSR, MaxFit and Grid as pure functions over typed arrays. */
export { psr, maxfit } from "./psr.js";
export { grid } from "./grid.js";
// The Grid over worker threads lives in threads/ (process plumbing, not a pure function); kept here
// so that `rbp-notebook/engine` offers it as before.
export { gridParallel, type ParallelSettings } from "../threads/grid-parallel.js";
export { gridSingularity, type SingularityCell, type SingularityResult } from "./singularity.js";
export { gridExperiment } from "./experiment.js";
export { runAnalysis, type GivenOptionsOf } from "./run.js";
export { checkData, datasetFromRows, type Dataset } from "./data.js";
export { InvalidInputError, ComputationError } from "./errors.js";
export { RbpBaseError } from "../errors/index.js";
export * from "./options.js";
export type * from "./result.js";
export { ANALYSES } from "./result.js";
export type { Histogram, SoloStatistics } from "./solo.js";
