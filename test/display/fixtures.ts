/** Realistic results for the display tests: the engine on the quickstart data and on synthetic data. */
import { fromV2Result, fromV3Results, toJson, toV2Result, type Result } from "../../src/api/index.js";
import { datasetFromRows, grid, maxfit, psr } from "../../src/engine/index.js";
import { createRandom } from "../../src/engine/random.js";
import type { DisplayContext } from "../../src/display/index.js";
import { gold } from "../gold.js";

export interface Quickstart {
  y: number[];
  X: number[][];
  theta: number[];
}

/** A fresh copy of the quickstart inputs. */
export function quickstart(): Quickstart {
  return structuredClone(gold.inputs);
}

/** Names given to the quickstart's five attributes in these tests. */
export const QUICKSTART_ATTRIBUTES = ["Age", "Experience", "Height", "Weight", "Score"];
export const QUICKSTART_LABELS = ["Ann", "Ben", "Cat", "Dan", "Eve", "Fay", "Gus"];

function normalise(engineResult: unknown): Result {
  return fromV3Results(JSON.parse(toJson(engineResult)));
}

export function quickstartContext(extra: Partial<DisplayContext> = {}): DisplayContext {
  const q = quickstart();
  return { outcome: "Points", attributes: QUICKSTART_ATTRIBUTES, y: q.y, rowLabels: QUICKSTART_LABELS, ...extra };
}

export function quickstartGrid(): Result {
  const q = quickstart();
  return normalise(grid(datasetFromRows(q.y, q.X), Float64Array.from(q.theta)));
}

export function quickstartPsr(): Result {
  const q = quickstart();
  return normalise(psr(datasetFromRows(q.y, q.X), Float64Array.from(q.theta), { threshold: [0, 0.2, 0.5, 0.8], censor_type: "relevance" }));
}

/** The same PSR read through the v2 flat result (no thresholds, no analysis). */
export function quickstartPsrV2(): Result {
  const q = quickstart();
  const engine = psr(datasetFromRows(q.y, q.X), Float64Array.from(q.theta), { threshold: [0, 0.2, 0.5, 0.8], censor_type: "relevance" });
  return fromV2Result(JSON.parse(toJson(toV2Result(engine))));
}

export function quickstartMaxfit(): Result {
  const q = quickstart();
  return normalise(maxfit(datasetFromRows(q.y, q.X), Float64Array.from(q.theta)));
}

/**
 * Synthetic data, seeded: N rows, K >= 3 attributes, an outcome linear in the attributes plus an
 * interaction and a square (so partial samples of relevant rows fit better than the full sample),
 * and a theta away from the centre.
 */
export function synthetic(N: number, K: number, seed = 7): { y: number[]; X: number[][]; theta: number[]; attributes: string[] } {
  if (K < 3) throw new RangeError("synthetic: K >= 3");
  const rand = createRandom(seed);
  const normal = () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
  const X = Array.from({ length: N }, () => Array.from({ length: K }, () => normal()));
  const y = X.map((r) => r[0] - 0.5 * r[1] + 0.8 * r[0] * r[1] + 0.5 * r[2] * r[2] + normal() * 0.8);
  const theta = Array.from({ length: K }, (_, j) => [1.2, 1.0, -0.5][j] ?? 0.3);
  return { y, X, theta, attributes: Array.from({ length: K }, (_, j) => `factor_${j + 1}`) };
}

/** A PSR on synthetic data at four thresholds, with its context. */
export function syntheticPsr(N: number, K = 4, seed = 7): { result: Result; context: DisplayContext } {
  const d = synthetic(N, K, seed);
  const result = normalise(psr(datasetFromRows(d.y, d.X), Float64Array.from(d.theta), { threshold: [0, 0.2, 0.5, 0.8], censor_type: "relevance" }));
  return { result, context: { outcome: "Return", attributes: d.attributes, y: d.y, analysis: "psr" } };
}

/** PSR results for several theta rows (an experiment). */
export function quickstartExperiment(): Result[] {
  const q = quickstart();
  const data = datasetFromRows(q.y, q.X);
  const thetas = [q.theta, q.X[6], q.X[0].map((v, j) => (v + q.theta[j]) / 2)];
  return thetas.map((t) => normalise(maxfit(data, Float64Array.from(t))));
}
