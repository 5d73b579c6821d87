/**
 * npm run bench:client
 *
 * 1. Completion-to-notice latency: the local service runs in this process; each small PSR job is
 *    watched at the same time by the client's adaptive wait() and by two once-a-second pollers
 *    (one reads at once and then every 1000 ms, as the official client starts; the other is the
 *    plain loop "sleep 1 s, read"), so all three see the very same jobs; when the service serves
 *    v2, a v2 wait() on the same jobs too (the local service holds a v2 read until the job ends). The job's completion time is taken in-process at the moment the job
 *    store marks it completed (an accessor on the job's `status`, installed through
 *    JobStore.prototype.complete; no service file is changed), on the same clock as the client's
 *    notice (performance.now()).
 * 2. Validate and encode an X of ~5 MiB of JSON (prepareRequest: size bounds, row-wise encoding,
 *    the service's parser, body assembly), and refuse one of ~6 MiB; medians of several runs.
 *
 * Settings (environment): BENCH_JOBS (default 240), BENCH_LANES (jobs in flight, default 16),
 * BENCH_RUNS (runs of part 2, default 7).
 */
import { createClient, type JobReceipt, type RbpClient } from "../src/client/index.js";
import { prepareRequest, X_LIMIT_BYTES } from "../src/client/prepare.js";
import { jsonSizeBounds } from "../src/client/size.js";
import { createRandom } from "../src/engine/random.js";
import { parseRequest } from "../src/api/request.js";
import { EmbeddedStore } from "../src/service/store/embedded.js";
import { startLocalService } from "../src/service/index.js";

const JOBS = Number(process.env.BENCH_JOBS ?? 240);
const LANES = Number(process.env.BENCH_LANES ?? 16);
const RUNS = Number(process.env.BENCH_RUNS ?? 7);

// ---------------------------------------------------------------------------------------------
// Completion hook: the moment a job's status becomes "completed" in the job store.

const completedAt = new Map<number, number>();
type Complete = EmbeddedStore["complete"];
const complete: Complete = EmbeddedStore.prototype.complete;
EmbeddedStore.prototype.complete = function (this: EmbeddedStore, ...args: Parameters<Complete>) {
  const job = args[0];
  let status = job.status;
  Object.defineProperty(job, "status", {
    configurable: true,
    enumerable: true,
    get: () => status,
    set: (value: typeof status) => {
      status = value;
      if (value === "completed" && !completedAt.has(job.id)) completedAt.set(job.id, performance.now());
    },
  });
  return complete.apply(this, args);
};

// ---------------------------------------------------------------------------------------------

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const i = (sorted.length - 1) * q;
  const lo = Math.floor(i);
  const hi = Math.ceil(i);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (i - lo);
}

function median(values: number[]): number {
  return quantile(
    [...values].sort((a, b) => a - b),
    0.5,
  );
}

/** A small PSR request (N=40, K=4), different per job. */
function smallJob(seed: number) {
  const next = createRandom(seed);
  const X = Array.from({ length: 40 }, () => Array.from({ length: 4 }, () => Math.round(next() * 1e4) / 100));
  const y = X.map((r) => r[0] - 0.5 * r[1] + 0.25 * r[3] + next());
  return { y, X, theta: X[0].map((v) => v + 1), options: { threshold: [0, 0.5] } };
}

interface Watch {
  latency: number;
  polls: number;
}

/** The plain loop: sleep a second, read, until done (reads through the same client). */
async function everySecond(client: RbpClient, receipt: JobReceipt): Promise<Watch> {
  let polls = 0;
  for (;;) {
    await new Promise((r) => setTimeout(r, 1000));
    polls++;
    if ((await client.status(receipt)).status === "completed") break;
  }
  const noticed = performance.now();
  return { latency: noticed - completedAt.get(receipt.job_id)!, polls };
}

async function watch(client: RbpClient, receipt: JobReceipt): Promise<Watch> {
  let polls = 0;
  await client.wait(receipt, { onProgress: (p) => (polls = p.polls) });
  const noticed = performance.now();
  const done = completedAt.get(receipt.job_id);
  if (done === undefined) throw new Error(`job ${receipt.job_id}: no completion time recorded`);
  return { latency: noticed - done, polls };
}

async function latencyBench(): Promise<void> {
  const service = await startLocalService({ port: 0, workers: 2 });
  const common = { baseUrl: service.url, apiKey: service.credentials.apiKey, accessId: service.credentials.accessId, env: {}, envFile: false as const };
  const adaptive = createClient(common);
  const fixed = createClient({ ...common, poll: { initialDelayMs: 1000, factor: 1, maxDelayMs: 1000 } });
  // The same jobs read through v2, whose GET /results the local service holds until the job ends.
  const v2 = createClient({ ...common, apiVersion: "v2" });
  const servesV2 = await v2.quota().then(
    () => true,
    () => false,
  );
  const h: Watch[] = [];
  const a: Watch[] = [];
  const f: Watch[] = [];
  const g: Watch[] = [];
  const durations: number[] = [];
  try {
    // Warm up the workers and the connections.
    for (let i = 0; i < 10; i++) await adaptive.run("psr", smallJob(1_000_000 + i));

    // Lanes start staggered over one second, so that jobs reach the service one after another
    // (one every 1000/LANES ms) while the once-a-second poller holds each lane for about a second.
    let next = 0;
    const started = performance.now();
    const lane = async (k: number) => {
      await new Promise((r) => setTimeout(r, (k * 1000) / LANES));
      while (next < JOBS) {
        const i = next++;
        const submitted = performance.now();
        const receipt = (await adaptive.submit("psr", smallJob(i))) as JobReceipt;
        const [wa, wf, wg, wh] = await Promise.all([
          watch(adaptive, receipt),
          watch(fixed, receipt),
          everySecond(fixed, receipt),
          servesV2 ? watch(v2, receipt) : undefined,
        ]);
        if (wh) h.push(wh);
        a.push(wa);
        f.push(wf);
        g.push(wg);
        durations.push(completedAt.get(receipt.job_id)! - submitted);
      }
    };
    await Promise.all(Array.from({ length: LANES }, (_, k) => lane(k)));
    const wall = performance.now() - started;

    const NAME = 38;
    const row = (name: string, w: Watch[]) => {
      const l = w.map((x) => x.latency).sort((p, q) => p - q);
      const polls = w.reduce((s, x) => s + x.polls, 0) / w.length;
      return `| ${name.padEnd(NAME)} | ${w.length.toString().padStart(4)} | ${quantile(l, 0.5).toFixed(1).padStart(7)} | ${quantile(l, 0.95).toFixed(1).padStart(7)} | ${l[l.length - 1].toFixed(1).padStart(7)} | ${polls.toFixed(1).padStart(9)} |`;
    };
    console.log(
      `\nCompletion to notice: ${JOBS} small PSR jobs (N=40, K=4, 2 thresholds), ${LANES} in flight (one started every ${(1000 / LANES).toFixed(0)} ms), local service in-process (2 workers)`,
    );
    console.log(
      `job time, submit to completion: p50 ${median(durations).toFixed(1)} ms, p95 ${quantile(
        [...durations].sort((p, q) => p - q),
        0.95,
      ).toFixed(1)} ms; wall ${(wall / 1000).toFixed(1)} s\n`,
    );
    console.log(`| ${"poller".padEnd(NAME)} | jobs |  p50 ms |  p95 ms |  max ms | reads/job |`);
    console.log(`| ${"-".repeat(NAME)} | ---- | ------- | ------- | ------- | --------- |`);
    console.log(row("adaptive wait() (10 ms x1.5, cap 2 s)", a));
    console.log(row("every 1 s, first read at once", f));
    console.log(row("every 1 s (sleep 1 s, then read)", g));
    if (servesV2) console.log(row("v2 wait() (service holds the read)", h));
  } finally {
    await adaptive.close();
    await fixed.close();
    await v2.close();
    await service.close();
  }
}

/** X of `rows` x 10 decimals (6 places), about 10.5 bytes a cell. */
function bigX(rows: number) {
  const next = createRandom(42);
  const X = Array.from({ length: rows }, () => Array.from({ length: 10 }, () => Math.round(next() * 1e8) / 1e6));
  const y = X.map((r) => r[0] + r[9]);
  return { y, X, theta: X[0] };
}

function time(fn: () => unknown): number {
  const t0 = performance.now();
  fn();
  return performance.now() - t0;
}

async function encodeBench(): Promise<void> {
  // Find the number of rows that keeps X just under 5 MiB.
  const perRow = JSON.stringify(bigX(1000).X).length / 1000;
  let rows = Math.floor((X_LIMIT_BYTES - 2) / perRow);
  let request = bigX(rows);
  while (JSON.stringify(request.X).length > X_LIMIT_BYTES) request = bigX((rows -= 50));
  const bytes = JSON.stringify(request.X).length;
  const over = bigX(Math.ceil(rows * 1.2));
  const overBytes = JSON.stringify(over.X).length;
  const settings = { version: "v3" as const, accessId: "bench-user" };
  const body = { access_id: "bench-user", ...request };

  const full: number[] = [];
  const bounds: number[] = [];
  const encode: number[] = [];
  const parse: number[] = [];
  const refuse: number[] = [];
  let refusedWith = "";
  let bodyBytes = 0;
  for (let run = 0; run < RUNS + 1; run++) {
    const t = time(() => (bodyBytes = prepareRequest("psr", request, settings).bodies[0].length));
    const tb = time(() => jsonSizeBounds(request.X));
    const te = time(() => JSON.stringify(request.X));
    const tp = time(() => parseRequest("psr", body, "v3"));
    const tr = time(() => {
      try {
        prepareRequest("psr", over, settings);
      } catch (e) {
        refusedWith = (e as Error).name;
      }
    });
    if (run === 0) continue; // warm-up
    full.push(t);
    bounds.push(tb);
    encode.push(te);
    parse.push(tp);
    refuse.push(tr);
  }
  const mib = (n: number) => (n / 1024 / 1024).toFixed(2);
  console.log(
    `\nValidate and encode a 5 MiB X: ${request.X.length} x 10 decimals, X ${bytes} bytes (${mib(bytes)} MiB), body ${mib(bodyBytes)} MiB; median of ${RUNS} runs\n`,
  );
  const lines: Array<[string, number[]]> = [
    ["prepareRequest: size bounds, encoding, validation, body", full],
    ["  size bounds alone (no encoding)", bounds],
    ["  JSON.stringify(X) alone", encode],
    ["  parseRequest alone (the service's own validation)", parse],
    [`refuse an X of ${mib(overBytes)} MiB (${refusedWith}; not validated)`, refuse],
  ];
  const width = Math.max(...lines.map(([name]) => name.length));
  console.log(`| ${"step".padEnd(width)} | median ms |`);
  console.log(`| ${"-".repeat(width)} | --------- |`);
  for (const [name, values] of lines) console.log(`| ${name.padEnd(width)} | ${median(values).toFixed(1).padStart(9)} |`);
}

await latencyBench();
await encodeBench();
