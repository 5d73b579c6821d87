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
 * Prints wall times and ratios to (1), and the lane's speed-up over HTTP. Figures depend on the
 * machine's load: say so when quoting.
 */
import { availableParallelism } from "node:os";
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
