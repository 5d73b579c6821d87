/**
 * npm run bench:backtest
 *
 * rbp.backtest on Seattle's daily weather (vega-datasets, as notebook 05): the last BENCH_ROWS
 * days (default 120) each predicted from every day before it (PSR at 0.8, expanding window), on
 * the embedded service with its worker pool (one worker per core). Compared in one run:
 * 1. the same rows called one by one (rbp.psr per row, each awaited before the next): the floor
 *    a notebook loop gets;
 * 2. backtest with concurrency 1 (its own bookkeeping, no overlap);
 * 3. backtest as it runs by default (every request in flight at once, bounded; the pool spreads
 *    them over the cores);
 * 4. backtest with step 5 (five rows per request as one experiment: fewer, larger requests).
 * Prints wall times and ratios to (1). Figures depend on the machine's load: say so when quoting.
 */
import { availableParallelism } from "node:os";
import { backtest, connect, disconnect, psr } from "../src/notebook/index.js";
import { ATTRIBUTES, weatherDays } from "../test/research/weather.js";

const ROWS = Number(process.env.BENCH_ROWS ?? 120);
const days = weatherDays();
const spec = { y: "tomorrow_max", X: ATTRIBUTES, index: "date", lagged: "temp_max" };
const options = { threshold: 0.8 };
const quiet = "none" as const;

await connect({ hosted: false, env: {}, envFile: false });
// Warm the pool and the JIT.
await backtest(days, spec, { options, start: -8, progress: quiet });

async function time(label: string, run: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await run();
  const ms = performance.now() - t;
  return ms;
}

const start = days.length - ROWS;
const oneByOne = await time("one by one", async () => {
  for (let i = start; i < days.length; i++) {
    const d = days[i];
    await psr(days.slice(0, i), { y: "tomorrow_max", X: ATTRIBUTES, theta: Object.fromEntries(ATTRIBUTES.map((a) => [a, d[a as keyof typeof d]])) }, options, {
      progress: quiet,
    });
  }
});
const serial = await time("concurrency 1", () => backtest(days, spec, { options, start: -ROWS, concurrency: 1, progress: quiet }));
const parallel = await time("default", () => backtest(days, spec, { options, start: -ROWS, progress: quiet }));
const stepped = await time("step 5", () => backtest(days, spec, { options, start: -ROWS, step: 5, progress: quiet }));
await disconnect();

const rows: Array<[string, number]> = [
  ["rbp.psr one row at a time", oneByOne],
  ["backtest, concurrency 1", serial],
  [`backtest, default (${Math.min(16, 2 * availableParallelism())} in flight)`, parallel],
  ["backtest, step 5 (experiments of 5 rows)", stepped],
];
console.log(`backtest of ${ROWS} rows (PSR 0.8, expanding window of ${start}..${days.length - 1} days), ${availableParallelism()} cores`);
for (const [label, ms] of rows) console.log(`  ${label.padEnd(44)} ${(ms / 1000).toFixed(2).padStart(7)} s   ${(oneByOne / ms).toFixed(2)}x`);
