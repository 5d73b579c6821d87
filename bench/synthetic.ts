/**
 * Reproducible synthetic Grid inputs for the benchmarks: correlated attributes (a common factor
 * plus a chain to the previous column, on varied location and scale), y linear in X plus noise,
 * and theta drawn from the same distribution as a row.
 */
import { datasetFromRows, type Dataset } from "../src/engine/index.js";
import { createRandom } from "../src/engine/random.js";

export function normalSource(seed: number): () => number {
  const uniform = createRandom(seed);
  let spare: number | null = null;
  return () => {
    if (spare !== null) {
      const s = spare;
      spare = null;
      return s;
    }
    let u = 0;
    while (u === 0) u = uniform();
    const v = uniform();
    const radius = Math.sqrt(-2 * Math.log(u));
    spare = radius * Math.sin(2 * Math.PI * v);
    return radius * Math.cos(2 * Math.PI * v);
  };
}

/**
 * @example
 * const { data, theta, thetas } = syntheticData(1000, 10, 1, 200); // thetas: 200 more rows' worth of theta
 */
export function syntheticData(N: number, K: number, seed: number, extraThetas = 0): { data: Dataset; theta: Float64Array; thetas: Float64Array[] } {
  const normal = normalSource(seed);
  const location = Array.from({ length: K }, () => 10 * normal());
  const spread = Array.from({ length: K }, () => 0.5 + 2 * Math.abs(normal()));
  const beta = Array.from({ length: K }, () => normal());
  const draw = (): number[] => {
    const factor = normal();
    const z: number[] = [];
    for (let j = 0; j < K; j++) z.push(0.5 * factor + 0.8 * normal() + (j > 0 ? 0.3 * z[j - 1] : 0));
    return z.map((v, j) => location[j] + spread[j] * v);
  };
  const rows: number[][] = [];
  const y: number[] = [];
  for (let i = 0; i < N; i++) {
    const x = draw();
    rows.push(x);
    let mean = 3;
    for (let j = 0; j < K; j++) mean += (beta[j] * (x[j] - location[j])) / spread[j];
    y.push(mean + 2 * normal());
  }
  const theta = Float64Array.from(draw());
  const thetas = Array.from({ length: extraThetas }, () => Float64Array.from(draw()));
  return { data: datasetFromRows(y, rows), theta, thetas };
}
