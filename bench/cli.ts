/**
 * npm run bench:cli: `rbp predict grid --input` on an N = 1,000, K = 10 file against a careful numpy
 * Grid (bench/numpy_grid.py, Debian's python3-numpy), each with its process start-up subtracted as
 * measured on the 7 x 5 quickstart file, measured in one run (issue 25 item 3). Reports; never asserts.
 *
 * - The CLI on both files, interleaved, medians of BENCH_CLI_ROUNDS (default 9) whole-process times;
 *   and the CPU (user + system, every thread: the compiler's and the collector's too) per process,
 *   from this process's cutime/cstime (Linux), which a loaded machine disturbs less than the clock.
 * - numpy on both files, interleaved, medians of 3.
 * - The engine's warm `gridParallel` on the same data in this process, for scale.
 * - Where the time goes: the CLI's steps (load the parser, read and parse, parseRequest, load the
 *   engine, the Grid, JSON.stringify) in fresh processes on both files, each step's wall time and
 *   main-thread CPU, the N = 1,000 file less the 7 x 5, medians of 5. A Grid on one thread (the
 *   N = 1,000 file's) in its three steps: prepare (checks, plan, standardised columns), chunks (the
 *   cells), finish (merge, the all-attribute model, insights, the result), each beside the same
 *   step warm in this process: what a step costs beyond its warm time is cold code.
 * - BENCH_CLI_BASELINE=<another build's dist/cli/rbp.js>: that build too, in the same rounds, and
 *   whether its output on the N = 1,000 file is byte-identical.
 * Goal: the CLI's time beyond its start-up at least 20x faster than numpy's beyond its own. The
 * subtraction removes what both files pay alike (node's start-up, loading the modules, compiling
 * the code the 7 x 5 Grid runs too); what is left is the cost of the data.
 *
 * bench/notebook.ts prints the same rows (benchCli). The machine is shared: quote the load average.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { machineBusy } from "../src/cli/tiering.js";
import { datasetFromRows, gridParallel } from "../src/engine/index.js";
import { finishGrid, prepareGrid } from "../src/engine/grid.js";
import { drawAndCollect, SHARE_SLOTS } from "../src/threads/chunk-share.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const PYTHON = "/usr/bin/python3";
const RBP = join(ROOT, "dist", "cli", "rbp.js");
const SMALL = join(ROOT, "examples", "quickstart-7x5.json");

const median = (a: number[]) => [...a].sort((p, q) => p - q)[a.length >> 1];
const ms = (v: number) => `${v.toFixed(v < 100 ? 1 : 0)} ms`;

/** CPU ms of this process's waited-for children so far (Linux /proc; NaN elsewhere); 10 ms ticks. */
function childrenCpuMs(): number {
  if (!existsSync("/proc/self/stat")) return NaN;
  const stat = readFileSync("/proc/self/stat", "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // Fields 16 and 17 of stat(5) (cutime, cstime), counted from 3 after the command's ")".
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / 100;
}

/** One process: its wall time, its CPU time (children's CPU delta) and its stdout. */
function time(cmd: string, args: string[]): { ms: number; cpu: number; out: string } {
  const cpu = childrenCpuMs();
  const t = performance.now();
  const r = spawnSync(cmd, args, { stdio: ["ignore", "pipe", "pipe"], maxBuffer: 64 * 2 ** 20 });
  const wall = performance.now() - t;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} failed: ${String(r.stderr)}`);
  return { ms: wall, cpu: childrenCpuMs() - cpu, out: String(r.stdout) };
}

/**
 * The CLI's steps (as src/cli/predict.ts takes them) in a fresh process on `file`, each step's wall
 * time and main-thread CPU (Linux schedstat, ns; 0 elsewhere) as JSON on stdout.
 */
const PHASES = (file: string) => `
import { readFileSync } from "node:fs";
const dist = ${JSON.stringify(new URL("../dist/", import.meta.url).href)};
// process.cpuUsage() first: it brings this thread's schedstat up to date (else it lags by up to a 4 ms tick; bench/grid.ts threadCpu).
const cpu = () => { process.cpuUsage(); try { return +readFileSync("/proc/thread-self/schedstat", "utf8").split(" ")[0] / 1e6; } catch { return 0; } };
const marks = [["start-up", performance.now(), cpu()]];
const mark = (name) => marks.push([name, performance.now(), cpu()]);
const { tuneShortRun } = await import(dist + "cli/tiering.js");
tuneShortRun();
const { parseRequest } = await import(dist + "api/request.js");
mark("load the parser");
const body = JSON.parse(readFileSync(${JSON.stringify(file)}, "utf8"));
mark("read and JSON.parse");
const request = parseRequest("grid", body, "v3", { requireAccessId: false });
mark("parseRequest");
const { helperThreads } = await import(dist + "cli/predict.js");
const { gridParallel } = await import(dist + "threads/grid-parallel.js");
mark("load the engine");
const threads = helperThreads(request.data.rows, request.data.cols, request.resolved);
let result;
if (threads === 1) {
  // gridParallel's own steps on one thread (threads/grid-parallel.ts), each marked.
  const { prepareGrid, finishGrid } = await import(dist + "engine/grid.js");
  const { drawAndCollect, SHARE_SLOTS } = await import(dist + "threads/chunk-share.js");
  const prepared = prepareGrid(request.data, request.thetas[0], request.options);
  mark("Grid: prepare");
  const { partials } = drawAndCollect(prepared.task, prepared.chunks, new Int32Array(new SharedArrayBuffer(4 * SHARE_SLOTS)), []);
  mark("Grid: chunks");
  result = finishGrid(prepared, partials);
  mark("Grid: finish");
} else {
  result = await gridParallel(request.data, request.thetas[0], request.options, { threads });
  mark("Grid");
}
const text = JSON.stringify(result) + "\\n";
mark("JSON.stringify");
process.stdout.write(JSON.stringify(marks.map(([name, t, c], i) => [name, i ? t - marks[i - 1][1] : t, i ? c - marks[i - 1][2] : c, text.length])));
`;

/** Medians per step of `rounds` fresh processes on each file: wall and main-thread CPU. */
function phases(files: string[], rounds: number): Map<string, { wall: number; cpu: number }>[] {
  const runs = files.map(() => [] as [string, number, number][][]);
  for (let i = 0; i < rounds; i++) {
    files.forEach((file, f) => {
      const r = spawnSync(process.execPath, ["--input-type=module", "-e", PHASES(file)], { encoding: "utf8", maxBuffer: 64 * 2 ** 20 });
      if (r.status !== 0) throw new Error(`the steps on ${file} failed: ${r.stderr}`);
      runs[f].push(JSON.parse(r.stdout) as [string, number, number][]);
    });
  }
  return runs.map((rs) => new Map(rs[0].map(([name], k) => [name, { wall: median(rs.map((r) => r[k][1])), cpu: median(rs.map((r) => r[k][2])) }])));
}

export interface CliBench {
  met: boolean;
  detail: string;
}

/**
 * Measures the rows above and prints them with `log`; returns the goal's verdict.
 *
 * @example
 * const { met, detail } = await benchCli(console.log, join(ROOT, "test-output", "bench-cli"));
 */
export async function benchCli(log: (line: string) => void, out: string): Promise<CliBench> {
  mkdirSync(out, { recursive: true });
  let s = 1;
  const rnd = () => (s = (s * 16807) % 2147483647) / 2147483647 - 0.5;
  const X = Array.from({ length: 1000 }, () => Array.from({ length: 10 }, rnd));
  const y = X.map((r) => r.reduce((a, b) => a + b, 0) + rnd());
  const big = join(out, "grid-1000x10.json");
  writeFileSync(big, JSON.stringify({ y, X, theta: X[999], options: { max_iter: 2000 } }));
  const load = loadavg()[0];

  const rounds = Number(process.env.BENCH_CLI_ROUNDS ?? 9);
  // BENCH_CLI_BASELINE: another build's dist/cli/rbp.js, measured in the same rounds (before/after).
  const baseline = process.env.BENCH_CLI_BASELINE;
  const builds = [RBP, ...(baseline ? [baseline] : [])].map((rbp) => ({
    rbp,
    big: [] as number[],
    small: [] as number[],
    bigCpu: [] as number[],
    smallCpu: [] as number[],
    out: "",
  }));
  for (let i = 0; i < rounds; i++) {
    for (const b of builds) {
      const small = time(process.execPath, [b.rbp, "predict", "grid", "--input", SMALL]);
      const r = time(process.execPath, [b.rbp, "predict", "grid", "--input", big]);
      b.small.push(small.ms);
      b.smallCpu.push(small.cpu);
      b.big.push(r.ms);
      b.bigCpu.push(r.cpu);
      b.out = r.out;
    }
  }
  const [cli, base] = builds;
  const cliYhat = (JSON.parse(cli.out) as { yhat: number[] }).yhat[0];
  const numpy = { big: [] as number[], small: [] as number[] };
  let numpyYhat = NaN;
  for (let i = 0; i < 3; i++) {
    numpy.small.push(time(PYTHON, [join(ROOT, "bench", "numpy_grid.py"), SMALL]).ms);
    const r = time(PYTHON, [join(ROOT, "bench", "numpy_grid.py"), big]);
    numpy.big.push(r.ms);
    numpyYhat = (JSON.parse(r.out) as { yhat: number }).yhat;
  }
  const data = datasetFromRows(y, X);
  const theta = Float64Array.from(X[999]);
  const engine: number[] = [];
  for (let i = 0; i < 12; i++) {
    const t = performance.now();
    await gridParallel(data, theta, { max_iter: 2000 });
    if (i >= 3) engine.push(performance.now() - t);
  }
  // The one-thread Grid's steps warm, as the fresh processes below take them.
  const warm = new Map<string, number[]>(["Grid: prepare", "Grid: chunks", "Grid: finish"].map((name) => [name, []]));
  for (let i = 0; i < 12; i++) {
    let t = performance.now();
    const lap = (name: string) => {
      const now = performance.now();
      if (i >= 3) warm.get(name)!.push(now - t);
      t = now;
    };
    const prepared = prepareGrid(data, theta, { max_iter: 2000 });
    lap("Grid: prepare");
    const { partials } = drawAndCollect(prepared.task, prepared.chunks, new Int32Array(new SharedArrayBuffer(4 * SHARE_SLOTS)), []);
    lap("Grid: chunks");
    finishGrid(prepared, partials);
    lap("Grid: finish");
  }

  const mean = (a: number[]) => a.reduce((p, q) => p + q, 0) / a.length;
  const cliBeyond = median(cli.big) - median(cli.small);
  const cpuBeyond = mean(cli.bigCpu) - mean(cli.smallCpu);
  const numpyBeyond = median(numpy.big) - median(numpy.small);
  const ratio = numpyBeyond / cliBeyond;
  log(`\nCLI: rbp predict grid --input (N=1,000 K=10), medians of ${rounds}, interleaved with the 7 x 5 quickstart`);
  log(`  whole process                     ${ms(median(cli.big)).padStart(10)}   7 x 5 quickstart (start-up) ${ms(median(cli.small))}`);
  log(
    `  beyond start-up                   ${ms(cliBeyond).padStart(10)}   engine gridParallel warm in this process ${ms(median(engine))}: ${(cliBeyond / median(engine)).toFixed(1)}x`,
  );
  log(
    `  CPU per process (all threads)     ${ms(mean(cli.bigCpu)).padStart(10)}   7 x 5 quickstart ${ms(mean(cli.smallCpu))}; beyond: ${ms(cpuBeyond)} (means, 10 ms ticks)`,
  );
  log(`  numpy Grid, whole process         ${ms(median(numpy.big)).padStart(10)}   on the 7 x 5 file ${ms(median(numpy.small))}; beyond: ${ms(numpyBeyond)}`);
  log(`  numpy / CLI beyond start-up       ${ratio.toFixed(1).padStart(8)}x   (whole processes: ${(median(numpy.big) / median(cli.big)).toFixed(1)}x)`);
  if (base) {
    const baseBeyond = median(base.big) - median(base.small);
    log(`  baseline ${base.rbp}`);
    log(
      `    beyond start-up                 ${ms(baseBeyond).padStart(10)}   whole ${ms(median(base.big))}, 7 x 5 ${ms(median(base.small))}; CPU beyond ${ms(mean(base.bigCpu) - mean(base.smallCpu))}; numpy / baseline ${(numpyBeyond / baseBeyond).toFixed(1)}x; output ${base.out === cli.out ? "identical" : "DIFFERENT"}`,
    );
  }
  log(`  yhat: CLI ${cliYhat}, numpy ${numpyYhat}`);
  const [bigSteps, smallSteps] = phases([big, SMALL], 5);
  log(`  where the time goes: the CLI's steps in fresh processes, medians of 5 (wall; main-thread CPU), N=1,000 file less the 7 x 5`);
  for (const [name, b] of bigSteps) {
    const sm = smallSteps.get(name) ?? { wall: 0, cpu: 0 };
    const w = warm.get(name);
    log(
      `    ${name.padEnd(22)} ${ms(b.wall - sm.wall).padStart(9)}  CPU ${ms(b.cpu - sm.cpu).padStart(8)}   (N=1,000 ${ms(b.wall)}, 7 x 5 ${ms(sm.wall)}${w ? `; warm here ${ms(median(w))}` : ""})`,
    );
  }
  log(`  load average ${load.toFixed(1)} at the start, ${loadavg()[0].toFixed(1)} at the end (the machine is shared)`);
  log(`  busy-machine tiering (src/cli/tiering.ts): ${machineBusy() ? "on" : "off"} at the end, ${machineBusy([load]) ? "on" : "off"} at the start`);
  return { met: numpyBeyond >= 20 * cliBeyond, detail: `${ratio.toFixed(1)}x` };
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { met, detail } = await benchCli(console.log, join(ROOT, "test-output", "bench-cli"));
  console.log(`\nGoal (issue 25 item 3), measured in this run:\n  ${met ? "met   " : "MISSED"} CLI beyond start-up >= 20x faster than numpy's: ${detail}`);
}
