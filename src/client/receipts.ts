/** Telling receipts apart (no dependencies: part of the public surface). */
import type { ExperimentReceipt } from "./types.js";

/** True for an experiment receipt (several theta rows), false for a job receipt. */
export function isExperimentReceipt(receipt: unknown): receipt is ExperimentReceipt {
  return typeof receipt === "object" && receipt !== null && Array.isArray((receipt as ExperimentReceipt).jobs);
}
