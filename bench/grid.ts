/**
 * `npm run bench`: the default Grid (thresholds 0, .2, .5, .8, both censors) against the floor of
 * bench/floor.ts (the least work a cell needs per observation), measured in the same process with
 * the two runs interleaved, for N = 1,000 / 10,000 / 100,000 and K = 10 (all 1,023 combinations)
 * and K = 14 (1,000 sampled combinations), after a few untimed runs of each (every thread, the
 * helpers' too, compiles the engine's code on its first Grids). Per case it prints the engine's
 * time on one thread (`grid`) and on every core (`gridParallel`), the engine as a multiple of the
 * floor (one thread each) and of the same floor in WebAssembly SIMD, cell-observations per second, and the peak RSS of a separate process that only builds the
 * data and runs the Grid once (memory proportional to N: no cell is retained by default).
 *
 * Then a 200-row experiment (200 thetas against one X and y, N = 1,000, K = 10) run row by row and
 * through `gridExperiment`, which shares what does not depend on theta; every row must be
 * bit-identical to the row run alone. And the same experiment end to end through a local service
 * (bench/local-run.ts: HTTP on loopback, every core, POST to the last row's result).
 *
 * Checks that exit non-zero: gridParallel differs from grid; the SIMD floor's checksum differs
 * from the floor's; the engine disagrees with the straightforward baseline of bench/baseline.ts
 * (N = 1,000, K = 10; every case with `-- --baseline`); an experiment row differs from its row
 * run alone.
 * Targets are reported, not asserted. Each case runs in its own child process.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import os from "node:os";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { grid, gridParallel, type EngineResult } from "../src/engine/index.js";
import { gridExperiment } from "../src/engine/experiment.js";
import { standardize } from "../src/engine/walk.js";
import { baselineGrid, type BaselineResult } from "./baseline.js";
import { floorCells, simdFloor, type FloorInput } from "./floor.js";
import { syntheticData } from "./synthetic.js";
import { EXPERIMENT, serviceExperiment, type ExperimentFigures } from "./local-run.js";

const SEED = 42;
const THRESHOLDS = [0, 0.2, 0.5, 0.8];
/** The engine's results agree with the baseline's within this (both decide at the cut by the tie rule of docs/ties.md). */
const RELATIVE_TOLERANCE = 1e-7;
const EXPERIMENT_ROWS = 200;

interface Case {
  N: number;
  K: number;
  maxIter: number;
  dataSeed: number;
  runs: number;
  /** Untimed runs of grid and gridParallel first: each thread, the helpers' too, compiles the engine's code on its first Grids. */
  warmup: number;
  /** The absolute target for gridParallel, when the issue sets one. */
  targetMs?: number;
}

const CASES: Case[] = [
  { N: 1000, K: 10, maxIter: 1023, dataSeed: 1, runs: 9, warmup: 5, targetMs: 30 },
  { N: 1000, K: 14, maxIter: 1000, dataSeed: 2, runs: 9, warmup: 5 },
  { N: 10000, K: 10, maxIter: 1023, dataSeed: 1, runs: 5, warmup: 2 },
  { N: 10000, K: 14, maxIter: 1000, dataSeed: 2, runs: 5, warmup: 2, targetMs: 250 },
  { N: 100000, K: 10, maxIter: 1023, dataSeed: 1, runs: 3, warmup: 0 },
  { N: 100000, K: 14, maxIter: 1000, dataSeed: 2, runs: 3, warmup: 0 },
];

const name = (c: Case) => `N=${c.N.toLocaleString("en-US")} K=${c.K}`;
const optionsOf = (c: Case) => ({ max_iter: c.maxIter, seed: SEED, threshold: THRESHOLDS });

// ---------------------------------------------------------------------------------------------
// Timing and checking

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function timed<T>(run: () => T): { result: T; ms: number; cpuMs: number } {
  const cpu = process.cpuUsage();
  const start = performance.now();
  const result = run();
  const ms = performance.now() - start;
  const used = process.cpuUsage(cpu);
  return { result, ms, cpuMs: (used.user + used.system) / 1000 };
}

async function timedAsync<T>(run: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const start = performance.now();
  const result = await run();
  return { result, ms: performance.now() - start };
}

/**
 * CPU time (ms) of each thread of this process so far, by thread id (Linux /proc; empty elsewhere).
 * The kernel brings a thread's schedstat up to date only at a scheduler tick (4 ms here) or a
 * switch, so a thread that has run without one reads up to a tick short: `process.cpuUsage()`
 * (getrusage) first brings the calling thread's up to date, and its readings are exact. Other
 * threads' stay within a tick. Without it, a 3.3 ms SIMD floor read 0, 0.79 or 4.00 ms and the
 * Grids 8.00 (docs/benchmarks.md, "CPU time").
 */
function threadCpu(): Map<string, number> {
  const out = new Map<string, number>();
  process.cpuUsage();
  try {
    for (const tid of readdirSync("/proc/self/task")) {
      try {
        out.set(tid, Number(readFileSync(`/proc/self/task/${tid}/schedstat`, "utf8").split(" ")[0]) / 1e6);
      } catch {
        // the thread ended meanwhile
      }
    }
  } catch {
    // not Linux
  }
  return out;
}

/**
 * The CPU time of the calling thread between two `threadCpu` readings; `otherwise` (the process's)
 * without /proc. Not the process's: a helper thread still finishing a chunk of the previous
 * gridParallel, or V8's compiler and collector threads, would count.
 */
function callerCpu(before: Map<string, number>, after: Map<string, number>, otherwise: number): number {
  const tid = String(process.pid);
  const used = (after.get(tid) ?? NaN) - (before.get(tid) ?? NaN);
  return Number.isFinite(used) ? used : otherwise;
}

/** The CPU time of the busiest thread between two `threadCpu` readings (NaN without /proc). */
function busiestThread(before: Map<string, number>, after: Map<string, number>): number {
  let most = NaN;
  for (const [tid, ms] of after) {
    const used = ms - (before.get(tid) ?? 0);
    if (!(used <= most)) most = used;
  }
  return most;
}

function relativeError(a: number, b: number): number {
  if (a === b) return 0;
  return Math.abs(a - b) / Math.max(Math.abs(a), Math.abs(b));
}

/** Differences between the engine and the baseline beyond the tolerance, as messages (empty when they agree). */
function compare(engine: EngineResult, base: BaselineResult): { problems: string[]; worst: number } {
  const problems: string[] = [];
  let worstSeen = 0;
  const scalar = (label: string, e: number, b: number) => {
    const err = relativeError(e, b);
    worstSeen = Math.max(worstSeen, err);
    if (!(err <= RELATIVE_TOLERANCE)) problems.push(`${label}: engine ${e} vs baseline ${b} (relative error ${err.toExponential(2)})`);
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
    for (let i = 0; i < w.length; i++) {
      largest = Math.max(largest, Math.abs(base.weights[i]));
      worst = Math.max(worst, Math.abs(w[i][0] - base.weights[i]));
    }
    worstSeen = Math.max(worstSeen, worst / largest);
    if (!(worst <= RELATIVE_TOLERANCE * largest))
      problems.push(`weights: max |difference| ${worst.toExponential(2)} (largest |weight| ${largest.toExponential(2)})`);
  }
  const search = engine.grid_search;
  if (search && (search.combinations !== base.combinations || search.cells !== base.cells || search.invalid_cells !== base.invalidCells)) {
    problems.push(
      `grid_search: engine ${search.combinations}/${search.cells}/${search.invalid_cells}, baseline ${base.combinations}/${base.cells}/${base.invalidCells}`,
    );
  }
  return { problems, worst: worstSeen };
}

/** The floor's input for a data set: the all-attribute relevance as scores, cuts at the thresholds' percentiles. */
function floorInput(data: ReturnType<typeof syntheticData>["data"], theta: Float64Array): FloorInput {
  const { rows: N, cols: K, y } = data;
  const s = standardize(data, theta);
  const relevance = new Float64Array(N);
  for (let j = 0; j < K; j++) for (let i = 0; i < N; i++) relevance[i] += s.z[j * N + i] * s.thetaZ[j];
  let ybar = 0;
  for (let i = 0; i < N; i++) ybar += y[i] / N;
  const dy = Float64Array.from(y, (v) => v - ybar);
  const sorted = Float64Array.from(relevance).sort();
  const cuts = Float64Array.from(THRESHOLDS, (t) => sorted[Math.floor(t * (N - 1))]);
  return { relevance, scores: relevance, dy, cuts };
}

interface CaseFigures {
  combinations: number;
  cells: number;
  singleMs: number;
  parallelMs: number;
  floorMs: number;
  /** CPU time of the calling thread in the 1-thread runs (`callerCpu`): steadier than wall time on a loaded machine. */
  singleCpuMs: number;
  /** CPU time of the busiest thread: of the 1-thread runs (the caller's), of the gridParallel runs (any thread). */
  singleBusiestMs: number;
  parallelBusiestMs: number;
  floorCpuMs: number;
  /** The same floor in WebAssembly SIMD (bench/floor.wat). */
  simdFloorMs: number;
  /** Its CPU time of the calling thread (`callerCpu`). */
  simdFloorCpuMs: number;
  baseline?: { ms: number; worst: number };
}

/** Times one case, engine and floor interleaved; exits non-zero on a mismatch. */
async function timeCase(c: Case, withBaseline: boolean): Promise<CaseFigures> {
  const { data, theta } = syntheticData(c.N, c.K, c.dataSeed);
  const options = optionsOf(c);
  const engine = grid(data, theta, options);
  const cells = engine.grid_search!.cells;
  const floor = floorInput(data, theta);
  let sink = floorCells(floor, cells);
  const simdCells = simdFloor(floor);
  const simdSum = simdCells(cells);
  if (!(Math.abs(simdSum - sink) <= 1e-9 * Math.abs(sink))) {
    console.error(`MISMATCH: the SIMD floor's checksum ${simdSum} differs from the floor's ${sink} for ${name(c)}`);
    process.exit(1);
  }
  const check = await gridParallel(data, theta, options);
  if (JSON.stringify(check) !== JSON.stringify(engine)) {
    console.error(`MISMATCH: gridParallel differs from grid for ${name(c)}`);
    process.exit(1);
  }
  for (let w = 0; w < c.warmup; w++) {
    grid(data, theta, options);
    await gridParallel(data, theta, options);
  }
  const single: number[] = [];
  const parallel: number[] = [];
  const floors: number[] = [];
  const singleCpu: number[] = [];
  const singleBusiest: number[] = [];
  const parallelBusiest: number[] = [];
  const floorCpu: number[] = [];
  const simdFloors: number[] = [];
  const simdFloorCpu: number[] = [];
  for (let r = 0; r < c.runs; r++) {
    let before = threadCpu();
    const s = timed(() => grid(data, theta, options));
    let after = threadCpu();
    singleBusiest.push(busiestThread(before, after));
    single.push(s.ms);
    singleCpu.push(callerCpu(before, after, s.cpuMs));
    before = threadCpu();
    const f = timed(() => (sink += floorCells(floor, cells)));
    after = threadCpu();
    floors.push(f.ms);
    floorCpu.push(callerCpu(before, after, f.cpuMs));
    before = threadCpu();
    const sf = timed(() => (sink += simdCells(cells)));
    after = threadCpu();
    simdFloors.push(sf.ms);
    simdFloorCpu.push(callerCpu(before, after, sf.cpuMs));
    before = threadCpu();
    parallel.push((await timedAsync(() => gridParallel(data, theta, options))).ms);
    parallelBusiest.push(busiestThread(before, threadCpu()));
  }
  if (!Number.isFinite(sink)) console.log("(floor checksum not finite)");
  const figures: CaseFigures = {
    combinations: engine.grid_search!.combinations,
    cells,
    singleMs: median(single),
    parallelMs: median(parallel),
    floorMs: median(floors),
    simdFloorMs: median(simdFloors),
    simdFloorCpuMs: median(simdFloorCpu),
    singleCpuMs: median(singleCpu),
    singleBusiestMs: median(singleBusiest),
    parallelBusiestMs: median(parallelBusiest),
    floorCpuMs: median(floorCpu),
  };
  if (withBaseline) {
    const base = timed(() => baselineGrid(data, theta, { max_iter: c.maxIter, seed: SEED, thresholds: THRESHOLDS }));
    const { problems, worst } = compare(engine, base.result);
    if (problems.length > 0) {
      console.error(`MISMATCH between engine and baseline for ${name(c)}:\n  ${problems.join("\n  ")}`);
      process.exit(1);
    }
    figures.baseline = { ms: base.ms, worst };
  }
  return figures;
}

/** Peak RSS (MiB) of a process that builds the case's data, then of the same after one gridParallel. */
async function memoryCase(c: Case): Promise<{ dataMiB: number; peakMiB: number }> {
  const { data, theta } = syntheticData(c.N, c.K, c.dataSeed);
  const dataMiB = process.resourceUsage().maxRSS / 1024;
  await gridParallel(data, theta, optionsOf(c));
  return { dataMiB, peakMiB: process.resourceUsage().maxRSS / 1024 };
}

/** The experiment: rows one by one (`grid`), then all rows through `gridExperiment`; every row must match. */
function experiment(): { rowByRowMs: number; sharedMs: number; rowByRowCpuMs: number; sharedCpuMs: number; rows: number } {
  const { data, thetas } = syntheticData(1000, 10, 1, EXPERIMENT_ROWS);
  const options = { threshold: THRESHOLDS, seed: SEED };
  gridExperiment(data, thetas.slice(0, 4), options);
  for (let r = 0; r < 4; r++) grid(data, thetas[r], options);
  const alone = timed(() => thetas.map((theta) => grid(data, theta, options)));
  const shared = timed(() => gridExperiment(data, thetas, options));
  for (let r = 0; r < thetas.length; r++) {
    if (JSON.stringify(shared.result[r]) !== JSON.stringify(alone.result[r])) {
      console.error(`MISMATCH: experiment row ${r} differs from the row run alone`);
      process.exit(1);
    }
  }
  return { rowByRowMs: alone.ms, sharedMs: shared.ms, rowByRowCpuMs: alone.cpuMs, sharedCpuMs: shared.cpuMs, rows: thetas.length };
}

// ---------------------------------------------------------------------------------------------

function child(args: string[]): unknown {
  const script = fileURLToPath(import.meta.url);
  const out = execFileSync(process.execPath, [...process.execArgv, script, ...args], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    maxBuffer: 1 << 20,
  });
  return JSON.parse(out.trim().split("\n").pop()!);
}

function pad(s: string, width: number, left = false): string {
  return left ? s.padEnd(width) : s.padStart(width);
}

const rate = (cellObs: number, ms: number) => `${(((cellObs / ms) * 1e3) / 1e9).toFixed(2)}e9`;

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv[0] === "--time-case") {
    console.log(JSON.stringify(await timeCase(CASES[+argv[1]], argv[2] === "baseline")));
    return;
  }
  if (argv[0] === "--memory-case") {
    console.log(JSON.stringify(await memoryCase(CASES[+argv[1]])));
    return;
  }
  if (argv[0] === "--experiment") {
    console.log(JSON.stringify(experiment()));
    return;
  }
  if (argv[0] === "--service-experiment") {
    console.log(JSON.stringify(await serviceExperiment()));
    return;
  }
  const allBaselines = argv.includes("--baseline");
  const cpus = os.cpus();
  console.log(
    `node ${process.version}, ${cpus[0]?.model ?? "unknown CPU"}, ${cpus.length} cores, load average ${os.loadavg()[0].toFixed(1)}, ${os.platform()} ${os.arch()}`,
  );
  console.log(`default Grid: thresholds ${THRESHOLDS.join(", ")}, censors relevance + similarity, seed ${SEED}; K=10 all combinations, K=14 1,000 sampled`);
  console.log(
    "each case in its own process; engine and floors interleaved, medians; floor = bench/floor.ts (one pass per cell: cut + kept sums) in JavaScript; SIMD floor = the same pass in WebAssembly SIMD (bench/floor.wat), the instructions of the engine's hottest passes",
  );
  console.log(
    `"x floor" = grid() on 1 thread / floor on 1 thread, wall time ("CPU": the same in CPU time of the calling thread; "x SIMD floor" and its "CPU" likewise against the SIMD floor); cell-obs/s on ${os.availableParallelism()} threads (gridParallel) and for the floor; peak RSS of a process that only builds the data and runs one gridParallel`,
  );
  console.log(
    `"speed-up" = 1 thread / ${os.availableParallelism()} threads, wall time; "CPU speed-up" = the same in CPU time of the busiest thread (Linux schedstat): what the threads give when nothing else wants the cores (the wall figure falls short of it by the time other processes took)\n`,
  );

  const header = [
    "case",
    "cells",
    "1 thread ms",
    `${os.availableParallelism()} threads ms`,
    "speed-up",
    "CPU speed-up",
    "floor ms",
    "x floor",
    "x floor CPU",
    "SIMD floor ms",
    "x SIMD floor",
    "x SIMD floor CPU",
    "engine cell-obs/s",
    "floor cell-obs/s",
    "RSS data MiB",
    "RSS peak MiB",
    "baseline ms",
  ];
  const widths = header.map((h, i) => Math.max(h.length, i === 0 ? 14 : 8));
  const line = (cells: string[]) => cells.map((s, i) => pad(s, widths[i], i === 0)).join("  ");
  console.log(line(header));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  const results: { c: Case; f: CaseFigures }[] = [];
  for (let k = 0; k < CASES.length; k++) {
    const c = CASES[k];
    const withBaseline = k === 0 || (allBaselines && c.N <= 10000);
    const f = child(["--time-case", String(k), withBaseline ? "baseline" : ""]) as CaseFigures;
    const m = child(["--memory-case", String(k)]) as { dataMiB: number; peakMiB: number };
    results.push({ c, f });
    const cellObs = f.cells * c.N;
    console.log(
      line([
        name(c),
        f.cells.toLocaleString("en-US"),
        f.singleMs.toFixed(1),
        f.parallelMs.toFixed(1),
        `${(f.singleMs / f.parallelMs).toFixed(2)}x`,
        `${(f.singleBusiestMs / f.parallelBusiestMs).toFixed(2)}x`,
        f.floorMs.toFixed(1),
        `${(f.singleMs / f.floorMs).toFixed(2)}x`,
        `${(f.singleCpuMs / f.floorCpuMs).toFixed(2)}x`,
        f.simdFloorMs.toFixed(1),
        `${(f.singleMs / f.simdFloorMs).toFixed(2)}x`,
        `${(f.singleCpuMs / f.simdFloorCpuMs).toFixed(2)}x`,
        rate(cellObs, f.parallelMs),
        rate(cellObs, f.floorMs),
        m.dataMiB.toFixed(0),
        m.peakMiB.toFixed(0),
        f.baseline ? `${f.baseline.ms.toFixed(0)} (${(f.baseline.ms / f.parallelMs).toFixed(1)}x)` : "-",
      ]),
    );
  }

  const e = child(["--experiment"]) as { rowByRowMs: number; sharedMs: number; rowByRowCpuMs: number; sharedCpuMs: number; rows: number };
  console.log(
    `\nexperiment: ${e.rows} thetas on the N=1,000 K=10 default Grid, one thread: row by row ${e.rowByRowMs.toFixed(0)} ms (CPU ${e.rowByRowCpuMs.toFixed(0)} ms), ` +
      `gridExperiment ${e.sharedMs.toFixed(0)} ms (CPU ${e.sharedCpuMs.toFixed(0)} ms): ${(e.rowByRowMs / e.sharedMs).toFixed(2)}x (CPU ${(e.rowByRowCpuMs / e.sharedCpuMs).toFixed(2)}x); every row identical to the row run alone`,
  );

  const se = child(["--service-experiment"]) as ExperimentFigures;
  console.log(
    `experiment end to end: the same ${EXPERIMENT.rows} rows POSTed to a local service (startLocalService, HTTP on loopback, ${se.workers} workers), POST to the last row's result, median of ${se.runs}: ` +
      `${se.sharedMs.toFixed(0)} ms with rows shared per task (the default), ${se.aloneMs.toFixed(0)} ms one row per task (${(se.aloneMs / se.sharedMs).toFixed(2)}x); every row identical to the row run alone`,
  );

  console.log("\ntargets (reported, not asserted; measured on whatever load the machine has):");
  for (const { c, f } of results) {
    const multiple = f.singleMs / f.floorMs;
    const simd = f.singleMs / f.simdFloorMs;
    const simdCpu = f.singleCpuMs / f.simdFloorCpuMs;
    let text = `  ${name(c)}: ${multiple.toFixed(2)}x the floor (target <= 3x): ${multiple <= 3 ? "MET" : "MISSED"}; ${simd.toFixed(2)}x the SIMD floor, ${simdCpu.toFixed(2)}x in CPU time (target <= 2.5x): ${simd <= 2.5 ? "MET" : "MISSED"} (CPU: ${simdCpu <= 2.5 ? "MET" : "MISSED"})`;
    if (c.targetMs !== undefined)
      text += `; ${f.parallelMs.toFixed(1)} ms on ${os.availableParallelism()} threads (target <= ${c.targetMs} ms): ${f.parallelMs <= c.targetMs ? "MET" : "MISSED"}`;
    console.log(text);
  }
  console.log(
    `  experiment of ${EXPERIMENT.rows} rows through the local service: ${(se.sharedMs / 1000).toFixed(2)} s (target <= ${EXPERIMENT.targetMs / 1000} s): ${se.sharedMs <= EXPERIMENT.targetMs ? "MET" : "MISSED"}`,
  );
  console.log(
    `\ngridParallel gives exactly the result of grid on every case; the engine agrees with the baseline (within ${RELATIVE_TOLERANCE} relative) where it ran.`,
  );
}

await main();
