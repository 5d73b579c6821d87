/** The relevance engine: PSR, MaxFit and Grid as pure functions over typed arrays. */
export { psr, maxfit, type Given } from "./psr.js";
export { grid } from "./grid.js";
export { checkData, datasetFromRows, type Dataset } from "./data.js";
export { InvalidInputError, ComputationError } from "./errors.js";
export * from "./options.js";
export type * from "./result.js";
export type { Histogram, SoloStatistics } from "./solo.js";
