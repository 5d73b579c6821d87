import type { Dataset } from "../../src/engine/index.js";
import { createRandom } from "../../src/engine/random.js";

/**
 * Correlated attributes (each column 0.4 of the one before plus noise), y linear in the first and
 * last plus noise, and `rows` theta rows (`theta` the first); `holes` values of X made NaN.
 *
 * @example
 * const { data, theta } = correlatedData(300, 8, 1);
 */
export function correlatedData(N: number, K: number, seed: number, holes = 0, rows = 1): { data: Dataset; theta: Float64Array; thetas: Float64Array[] } {
  const uniform = createRandom(seed);
  const next = () => uniform() - 0.5;
  const X = new Float64Array(N * K);
  const y = new Float64Array(N);
  for (let i = 0; i < N; i++) {
    for (let j = 0; j < K; j++) X[i * K + j] = next() + (j > 0 ? 0.4 * X[i * K + j - 1] : 0);
    y[i] = X[i * K] - 2 * X[i * K + K - 1] + next();
  }
  for (let h = 0; h < holes; h++) X[(h * 7919) % (N * K)] = NaN;
  const thetas = Array.from({ length: rows }, () => Float64Array.from({ length: K }, next));
  return { data: { y, X, rows: N, cols: K }, theta: thetas[0], thetas };
}
