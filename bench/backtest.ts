/**
 * npm run bench:backtest
 *
 * rbp.backtest on Seattle's daily weather (vega-datasets, as notebook 05): the last BENCH_ROWS
 * days (default 120) each predicted from every day before it (PSR at 0.8, expanding window).
 * Compared in one run, each the best of BENCH_REPEAT runs (default 3):
 * 1. the engine alone: `runAnalysis` on each window in turn, on this thread (no service, no
 *    rounding, no JSON): the floor;
 * 2. the HTTP path: the same backtest through the client and HTTP, as against the hosted service
 *    (here a service started in this process with one worker per core, connected to by URL and
 *    key: one POST, polling and GET per window, every body validated);
 * 3. the embedded service's in-process lane, as `backtest` runs locally by default: every window
 *    checked, paid and stored as the POST would be, the table shared with the workers, each
 *    forecast read from the store (a result is parsed when `bt.predictions` is first read);
 * 4. the same, then every Prediction read (`bt.predictions`: each stored result parsed);
 * 5. the lane with step 5 (five rows per request as one experiment).
 * Prints wall times and ratios to (1), and the lane's speed-up over HTTP. Then issue 25's case, as
 * bench:notebook runs it in a kernel: N = 1,000 synthetic rows, K = 10, the last 100 each predicted
 * by `backtest({ y, X }, {}, { options: { threshold: 0.8 }, start: -100 })`, interleaved with the
 * engine's own loop (goal: at most 1.5x), wall and CPU of all threads, best of BENCH_REPEAT.
 * Figures depend on the machine's load: say so when quoting (the load average is printed).
 */
import { availableParallelism, loadavg } from "node:os";
import { datasetFromRows, runAnalysis } from "../src/engine/index.js";
import { backtest, connect, disconnect } from "../src/notebook/index.js";
import { startLocalService } from "../src/service/index.js";
import { ATTRIBUTES, weatherDays } from "../test/research/weather.js";

const ROWS = Number(process.env.BENCH_ROWS ?? 120);
const REPEAT = Number(process.env.BENCH_REPEAT ?? 3);
const days = weatherDays();
const spec = { y: "tomorrow_max", X: ATTRIBUTES, index: "date", lagged: "temp_max" };
const options = { threshold: 0.8 };
const quiet = "none" as const;
const start = days.length - ROWS;

/** Wall time and CPU time of every thread of the process (ms), of the fastest of REPEAT runs. */
async function best(run: () => Promise<unknown> | unknown): Promise<{ wall: number; cpu: number }> {
  let min = { wall: Infinity, cpu: Infinity };
  for (let r = 0; r < REPEAT; r++) {
    const t = performance.now();
    const c = process.cpuUsage();
    await run();
    const used = process.cpuUsage(c);
    const wall = performance.now() - t;
    if (wall < min.wall) min = { wall, cpu: (used.user + used.system) / 1000 };
  }
  return min;
}

// 1. The engine alone.
const y = days.map((d) => d.tomorrow_max);
const X = days.map((d) => ATTRIBUTES.map((a) => d[a as keyof typeof d] as number));
const engineOnce = () => {
  for (let i = start; i < days.length; i++) runAnalysis("psr", datasetFromRows(y.slice(0, i), X.slice(0, i)), Float64Array.from(X[i]), { threshold: [0.8] });
};
engineOnce(); // warm the JIT
const engine = await best(engineOnce);

// 2. HTTP: a service of this process reached by URL and key, as a hosted one is.
const KEY = "bench-backtest-key";
const served = await startLocalService({ apiKey: KEY, accessId: "bench", quota: 1e9 });
const http = await connect({ baseUrl: served.url, apiKey: KEY, accessId: "bench", env: {}, envFile: false });
const viaHttp = { options, start: -ROWS, connection: http, confirm: true, log: () => undefined, progress: quiet };
await backtest(days, spec, { ...viaHttp, start: -8 });
const httpMs = await best(() => backtest(days, spec, viaHttp));
await http.close();
await served.close();

// 3 and 4. The embedded service's in-process lane.
await connect({ hosted: false, env: {}, envFile: false, local: { quota: 1e9 } });
await backtest(days, spec, { options, start: -8, progress: quiet });
const lane = await best(() => backtest(days, spec, { options, start: -ROWS, progress: quiet }));
const laneRead = await best(async () => (await backtest(days, spec, { options, start: -ROWS, progress: quiet })).predictions.length);
const laneStep5 = await best(() => backtest(days, spec, { options, start: -ROWS, step: 5, progress: quiet }));

// Issue 25's case, interleaved: the engine's loop, then the backtest, REPEAT times.
let seed = 1;
const rnd = () => (seed = (seed * 16807) % 2147483647) / 2147483647 - 0.5;
const X25 = Array.from({ length: 1000 }, () => Array.from({ length: 10 }, rnd));
const y25 = X25.map((r) => r.reduce((a, b) => a + b, 0) + rnd());
const loop25 = () => {
  for (let i = 900; i < 1000; i++) runAnalysis("psr", datasetFromRows(y25.slice(0, i), X25.slice(0, i)), Float64Array.from(X25[i]), { threshold: [0.8] });
};
const backtest25 = () => backtest({ y: y25, X: X25 }, {}, { options, start: -100, progress: quiet });
loop25();
await backtest({ y: y25, X: X25 }, {}, { options, start: -10, progress: quiet });
const issue = { engine: { wall: Infinity, cpu: Infinity }, backtest: { wall: Infinity, cpu: Infinity } };
for (let r = 0; r < Math.max(REPEAT, 5); r++) {
  for (const [key, run] of [
    ["engine", loop25],
    ["backtest", backtest25],
  ] as const) {
    const t = performance.now();
    const c = process.cpuUsage();
    await run();
    const used = process.cpuUsage(c);
    const wall = performance.now() - t;
    if (wall < issue[key].wall) issue[key] = { wall, cpu: (used.user + used.system) / 1000 };
  }
}
await disconnect();

const rows: Array<[string, { wall: number; cpu: number }]> = [
  ["engine alone (one thread, no service)", engine],
  ["backtest over HTTP (as hosted)", httpMs],
  ["backtest, embedded in-process lane", lane],
  ["lane, then every bt.predictions read", laneRead],
  ["backtest, lane, step 5 (experiments of 5)", laneStep5],
];
console.log(`backtest of ${ROWS} rows (PSR 0.8, expanding window of ${start}..${days.length - 1} days), ${availableParallelism()} cores, best of ${REPEAT}`);
console.log(`  ${"".padEnd(44)} ${"wall".padStart(7)}     ratio          CPU (all threads)`);
for (const [label, t] of rows)
  console.log(
    `  ${label.padEnd(44)} ${(t.wall / 1000).toFixed(3).padStart(7)} s   ${(t.wall / engine.wall).toFixed(2).padStart(5)}x engine   ${(t.cpu / 1000).toFixed(3)} s (${(t.cpu / engine.cpu).toFixed(2)}x)`,
  );
console.log(`  lane vs HTTP: ${(httpMs.wall / lane.wall).toFixed(1)}x faster (wall), ${(httpMs.cpu / lane.cpu).toFixed(1)}x less CPU`);
console.log(
  `issue 25's case (N = 1,000, K = 10, 100 steps, interleaved, best of ${Math.max(REPEAT, 5)}; load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")}, the machine may be shared)`,
);
console.log(`  engine's loop (one thread)        ${issue.engine.wall.toFixed(1).padStart(7)} ms   CPU ${issue.engine.cpu.toFixed(1)} ms`);
console.log(
  `  backtest, embedded lane           ${issue.backtest.wall.toFixed(1).padStart(7)} ms   CPU ${issue.backtest.cpu.toFixed(1)} ms (all threads)   ${(issue.backtest.wall / issue.engine.wall).toFixed(2)}x the engine's loop (goal 1.5x), CPU ${(issue.backtest.cpu / issue.engine.cpu).toFixed(2)}x`,
);
