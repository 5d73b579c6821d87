/**
 * `npm run bench`: the default Grid (thresholds 0, .2, .5, .8, both censors) timed against the
 * straightforward baseline of bench/baseline.ts on reproducible synthetic data, for
 *   N = 1,000,  K = 10, max_iter 1,023 (all 1,023 combinations, 8,184 cells) and
 *   N = 10,000, K = 14, max_iter 1,000 (1,000 sampled combinations, 8,000 cells).
 * Engine and baseline must agree (yhat, fit, adjusted fit, weights); a disagreement exits non-zero.
 * The speed targets (engine >= 10x the baseline; < 100 ms for N = 1,000) are reported, not asserted.
 */
import { readFileSync } from "node:fs";
import os from "node:os";
import { dirname, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { datasetFromRows, grid, gridParallel, type Dataset, type EngineResult } from "../src/engine/index.js";
import { createRandom } from "../src/engine/random.js";
import { baselineGrid, type BaselineResult } from "./baseline.js";

const SEED = 42;
const THRESHOLDS = [0, 0.2, 0.5, 0.8];
const ENGINE_WARMUP = 2;
const ENGINE_RUNS = 7;
const RELATIVE_TOLERANCE = 1e-8;
/** Above this a second case's baseline run is not repeated. */
const SLOW_BASELINE_MS = 3000;

interface Case {
  name: string;
  N: number;
  K: number;
  maxIter: number;
  dataSeed: number;
  /** The absolute engine target, when there is one. */
  engineTargetMs?: number;
  baselineRuns: number;
}

const CASES: Case[] = [
  { name: "N=1,000 K=10", N: 1000, K: 10, maxIter: 1023, dataSeed: 1, engineTargetMs: 100, baselineRuns: 3 },
  { name: "N=10,000 K=14", N: 10000, K: 14, maxIter: 1000, dataSeed: 2, baselineRuns: 3 },
];

// ---------------------------------------------------------------------------------------------
// Reproducible synthetic data


function normalSource(seed: number): () => number {
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
 * Correlated attributes (a common factor plus a chain to the previous column, on varied location
 * and scale), y linear in X plus noise, and theta drawn from the same distribution as a row.
 */
function syntheticData(N: number, K: number, seed: number): { data: Dataset; theta: Float64Array } {
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
  return { data: datasetFromRows(y, rows), theta: Float64Array.from(draw()) };
}

// ---------------------------------------------------------------------------------------------
// Timing and checking

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function timed<T>(run: () => T): { result: T; ms: number } {
  const start = performance.now();
  const result = run();
  return { result, ms: performance.now() - start };
}

async function timedAsync<T>(run: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const start = performance.now();
  const result = await run();
  return { result, ms: performance.now() - start };
}

function relativeError(a: number, b: number): number {
  if (a === b) return 0;
  return Math.abs(a - b) / Math.max(Math.abs(a), Math.abs(b));
}

/** Differences between the engine and the baseline beyond the tolerance, as messages (empty when they agree). */
function compare(engine: EngineResult, base: BaselineResult): { problems: string[]; worst: number } {
  const problems: string[] = [];
  let worstSeen = 0;
  const scalar = (name: string, e: number, b: number) => {
    const err = relativeError(e, b);
    worstSeen = Math.max(worstSeen, err);
    if (!(err <= RELATIVE_TOLERANCE)) problems.push(`${name}: engine ${e} vs baseline ${b} (relative error ${err.toExponential(2)})`);
  };
  scalar("yhat", engine.yhat[0], base.yhat);
  scalar("fit", engine.fit[0], base.fit);
  scalar("adjusted_fit", engine.adjusted_fit[0], base.adjustedFit);
  const w = engine.prediction_weights?.weights;
  if (!w || w.length !== base.weights.length) {
    problems.push(`weights: engine returned ${w ? w.length : "no"} rows, baseline ${base.weights.length}`);
  } else {
    let largest = 0;
    let worst = 0;
    let at = -1;
    for (let i = 0; i < w.length; i++) {
      largest = Math.max(largest, Math.abs(base.weights[i]));
      const d = Math.abs(w[i][0] - base.weights[i]);
      if (!(d <= worst)) {
        worst = d;
        at = i;
      }
    }
    worstSeen = Math.max(worstSeen, worst / largest);
    if (!(worst <= RELATIVE_TOLERANCE * largest)) {
      problems.push(`weights: max |difference| ${worst.toExponential(2)} at row ${at} (largest |weight| ${largest.toExponential(2)})`);
    }
  }
  const search = engine.grid_search;
  if (search && (search.combinations !== base.combinations || search.cells !== base.cells || search.invalid_cells !== base.invalidCells)) {
    problems.push(
      `grid_search: engine ${search.combinations} combinations / ${search.cells} cells / ${search.invalid_cells} invalid, ` +
        `baseline ${base.combinations} / ${base.cells} / ${base.invalidCells}`,
    );
  }
  return { problems, worst: worstSeen };
}

interface Row {
  name: string;
  combinations: number;
  cells: number;
  /** One thread (`grid`). */
  singleMedian: number;
  /** Every core (`gridParallel`), the engine's figure. */
  engineMedian: number;
  engineMin: number;
  baselineMs: number;
  baselineRuns: number;
  ratio: number;
  engineTargetMs?: number;
  /** Largest relative difference engine vs baseline (yhat, fit, adjusted fit; weights relative to the largest weight). */
  agreement: number;
}

async function runCase(c: Case): Promise<Row> {
  const { data, theta } = syntheticData(c.N, c.K, c.dataSeed);
  const options = { max_iter: c.maxIter, seed: SEED, threshold: THRESHOLDS };
  process.stdout.write(`${c.name}: engine`);
  const engine = grid(data, theta, options);
  for (let r = 1; r < ENGINE_WARMUP; r++) grid(data, theta, options);
  for (let r = 0; r < ENGINE_WARMUP; r++) await gridParallel(data, theta, options);
  // Alternate the two so that machine noise falls on both alike.
  const singleTimes: number[] = [];
  const engineTimes: number[] = [];
  for (let r = 0; r < ENGINE_RUNS; r++) {
    singleTimes.push(timed(() => grid(data, theta, options)).ms);
    const parallel = await timedAsync(() => gridParallel(data, theta, options));
    engineTimes.push(parallel.ms);
    if (JSON.stringify(parallel.result) !== JSON.stringify(engine)) {
      console.error(`\nMISMATCH: gridParallel differs from grid for ${c.name}`);
      process.exit(1);
    }
  }
  process.stdout.write(`, baseline`);
  const baseTimes: number[] = [];
  const first = timed(() => baselineGrid(data, theta, { max_iter: c.maxIter, seed: SEED, thresholds: THRESHOLDS }));
  baseTimes.push(first.ms);
  const repeats = first.ms > SLOW_BASELINE_MS && c.engineTargetMs === undefined ? 1 : c.baselineRuns;
  for (let r = 1; r < repeats; r++) {
    baseTimes.push(timed(() => baselineGrid(data, theta, { max_iter: c.maxIter, seed: SEED, thresholds: THRESHOLDS })).ms);
  }
  process.stdout.write(`, check\n`);
  const { problems, worst } = compare(engine, first.result);
  if (problems.length > 0) {
    console.error(`\nMISMATCH between engine and baseline for ${c.name}:`);
    for (const p of problems) console.error(`  ${p}`);
    process.exit(1);
  }
  const engineMedian = median(engineTimes);
  const baselineMs = median(baseTimes);
  return {
    name: c.name,
    combinations: first.result.combinations,
    cells: first.result.cells,
    singleMedian: median(singleTimes),
    engineMedian,
    engineMin: Math.min(...engineTimes),
    baselineMs,
    baselineRuns: baseTimes.length,
    ratio: baselineMs / engineMedian,
    engineTargetMs: c.engineTargetMs,
    agreement: worst,
  };
}

/** The 7x5 quickstart Grid (default options): a small-case figure, engine only. */
function quickstart(): { ms: number; runs: number; yhat: number } | null {
  const here = dirname(fileURLToPath(import.meta.url));
  const path = resolve(here, "..", "test", "fixtures", "quickstart-7x5.json");
  let inputs: { y: number[]; X: number[][]; theta: number[] };
  try {
    inputs = JSON.parse(readFileSync(path, "utf8")).inputs;
  } catch {
    console.log(`(quickstart vectors not found at ${path}; small case skipped)`);
    return null;
  }
  const data = datasetFromRows(inputs.y, inputs.X);
  const theta = Float64Array.from(inputs.theta);
  let yhat = NaN;
  for (let r = 0; r < 50; r++) yhat = grid(data, theta).yhat[0];
  const runs = 201;
  const times: number[] = [];
  for (let r = 0; r < runs; r++) times.push(timed(() => grid(data, theta)).ms);
  return { ms: median(times), runs, yhat };
}

// ---------------------------------------------------------------------------------------------

function pad(s: string, width: number, left = false): string {
  return left ? s.padEnd(width) : s.padStart(width);
}

async function main(): Promise<void> {
  const cpus = os.cpus();
  console.log(`node ${process.version}, ${cpus[0]?.model ?? "unknown CPU"}, ${cpus.length} cores, ${os.platform()} ${os.arch()}`);
  console.log(`default Grid: thresholds ${THRESHOLDS.join(", ")}, censors relevance + similarity, seed ${SEED}`);
  console.log(
    `engine: gridParallel on ${os.availableParallelism()} threads, median (and min) of ${ENGINE_RUNS} runs after ${ENGINE_WARMUP} warm-up runs; ` +
      `"1 thread" is grid() alone; baseline: median of its runs\n`,
  );

  const rows: Row[] = [];
  for (const c of CASES) rows.push(await runCase(c));

  const header = ["case", "combinations", "cells", "1 thread ms", "engine ms (median)", "engine ms (min)", "baseline ms", "baseline/engine", "max rel. diff"];
  const widths = [16, 12, 7, 11, 18, 15, 15, 15, 13];
  const line = (cells: string[]) => cells.map((s, i) => pad(s, widths[i], i === 0)).join("  ");
  console.log();
  console.log(line(header));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const r of rows) {
    console.log(
      line([
        r.name,
        r.combinations.toLocaleString("en-US"),
        r.cells.toLocaleString("en-US"),
        r.singleMedian.toFixed(1),
        r.engineMedian.toFixed(1),
        r.engineMin.toFixed(1),
        `${r.baselineMs.toFixed(0)}${r.baselineRuns > 1 ? "" : " (1 run)"}`,
        `${r.ratio.toFixed(1)}x`,
        r.agreement.toExponential(1),
      ]),
    );
  }

  const small = quickstart();
  if (small) console.log(`\nquickstart 7x5 Grid (31 combinations, 248 cells): engine ${(small.ms * 1000).toFixed(0)} us (median of ${small.runs}), yhat ${small.yhat.toFixed(7)}`);

  console.log("\ntargets (reported, not asserted):");
  for (const r of rows) {
    console.log(`  ${r.name}: engine ${r.ratio.toFixed(1)}x faster than the baseline (target >= 10x): ${r.ratio >= 10 ? "MET" : "MISSED"}`);
    if (r.engineTargetMs !== undefined) {
      const met = r.engineMedian < r.engineTargetMs;
      console.log(`  ${r.name}: engine ${r.engineMedian.toFixed(1)} ms (target < ${r.engineTargetMs} ms): ${met ? "MET" : "MISSED"}`);
    }
  }
  console.log(`\nengine and baseline agree on every case (yhat, fit, adjusted fit within ${RELATIVE_TOLERANCE} relative; weights);`);
  console.log("gridParallel gives exactly the result of grid on every case.");
}

await main();
