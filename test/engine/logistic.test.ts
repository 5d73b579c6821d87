import { createRandom } from "../../src/engine/random.js";
import { describe, expect, it } from "vitest";
import { grid, InvalidInputError, maxfit, psr, type Dataset } from "../../src/engine/index.js";

/** A 0/1 outcome that leans on the first attribute. */
function binaryData(N: number, K: number, seed = 12345): { data: Dataset; theta: Float64Array } {
  const uniform = createRandom(seed);
  const next = () => uniform() - 0.5;
  const X = new Float64Array(N * K);
  const y = new Float64Array(N);
  for (let i = 0; i < N; i++) {
    for (let j = 0; j < K; j++) X[i * K + j] = next() + (j > 0 ? 0.5 * X[i * K + j - 1] : 0);
    y[i] = X[i * K] + 0.3 * next() > 0 ? 1 : 0;
  }
  return { data: { y, X, rows: N, cols: K }, theta: Float64Array.from({ length: K }, () => 0.2) };
}

/** d(a, b) = (a - b)' S^-1 (a - b) with S the N-1 covariance, by Gauss-Jordan on [S | a - b]. */
function mahalanobis(data: Dataset, a: number[], b: number[]): number {
  const { X, rows: N, cols: K } = data;
  const mean = Array.from({ length: K }, (_, j) => {
    let s = 0;
    for (let i = 0; i < N; i++) s += X[i * K + j];
    return s / N;
  });
  const m = Array.from({ length: K }, (_, p) => {
    const row = Array.from({ length: K }, (_, q) => {
      let s = 0;
      for (let i = 0; i < N; i++) s += (X[i * K + p] - mean[p]) * (X[i * K + q] - mean[q]);
      return s / (N - 1);
    });
    return [...row, a[p] - b[p]];
  });
  for (let c = 0; c < K; c++) {
    for (let r = 0; r < K; r++) {
      if (r === c) continue;
      const f = m[r][c] / m[c][c];
      for (let k = c; k <= K; k++) m[r][k] -= f * m[c][k];
    }
  }
  return a.reduce((sum, _, p) => sum + (a[p] - b[p]) * (m[p][K] / m[p][p]), 0);
}

describe('prediction_scale "logistic" (docs/methodology.md section 5.8, the book formula)', () => {
  const { data, theta } = binaryData(80, 3);

  it("at threshold 0 equals sigmoid(ln A + B (OLS - ybar) + C d(mu1, xbar)), computed independently", () => {
    const response = psr(data, theta, { threshold: [0] }).yhat[0];
    const logistic = psr(data, theta, { threshold: [0], prediction_scale: "logistic" }).yhat[0];
    const { y, X, rows: N, cols: K } = data;
    const ybar = y.reduce((a, v) => a + v, 0) / N;
    const ones = y.reduce((a, v) => a + v, 0);
    const mu1 = Array.from({ length: K }, (_, j) => {
      let s = 0;
      for (let i = 0; i < N; i++) s += y[i] * X[i * K + j];
      return s / ones;
    });
    const xbar = Array.from({ length: K }, (_, j) => {
      let s = 0;
      for (let i = 0; i < N; i++) s += X[i * K + j];
      return s / N;
    });
    const A = ybar / (1 - ybar);
    const B = 1 / (ybar * (1 - ybar));
    const C = A * A - 1;
    const expected = 1 / (1 + Math.exp(-(Math.log(A) + B * (response - ybar) + C * mahalanobis(data, mu1, xbar))));
    expect(logistic).toBeCloseTo(expected, 10);
  });

  it("gives probabilities for PSR, MaxFit and Grid, and leaves fit and weights as on the response scale", () => {
    const options = { threshold: [0, 0.5, 0.8] };
    const onScale = psr(data, theta, { ...options, prediction_scale: "logistic" });
    const plain = psr(data, theta, options);
    for (const p of onScale.yhat) expect(p > 0 && p < 1).toBe(true);
    expect(onScale.fit).toEqual(plain.fit);
    expect(onScale.prediction_weights.weights).toEqual(plain.prediction_weights.weights);
    const m = maxfit(data, theta, { prediction_scale: "logistic" }).yhat[0];
    const g = grid(data, theta, { prediction_scale: "logistic" }).yhat[0];
    expect(m > 0 && m < 1 && g > 0 && g < 1).toBe(true);
  });

  it.each([
    ["an outcome that is not 0/1", (y: Float64Array) => (y[3] = 0.5), /0 or 1/],
    ["an outcome with one class only", (y: Float64Array) => y.fill(1), /both 0s and 1s/],
  ])("refuses %s", (_name, spoil, message) => {
    const y = data.y.slice();
    spoil(y);
    for (const run of [psr, maxfit, grid]) {
      expect(() => run({ ...data, y }, theta, { prediction_scale: "logistic" })).toThrow(InvalidInputError);
      expect(() => run({ ...data, y }, theta, { prediction_scale: "logistic" })).toThrow(message);
    }
  });
});
