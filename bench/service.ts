/**
 * `npm run bench:service`: the local prediction service under load, over loopback HTTP.
 *
 * The service runs in its own process (`rbp serve --port 0 --quiet`, from the sources through
 * tsx, one worker per core), so that the load generator here does not share its event loop.
 *
 * 1. Throughput: 600 small PSR jobs (N = 50, K = 3, thresholds 0, .2, .5, .8) by 16 concurrent
 *    clients; each POSTs, then polls GET /v3/results every 2 ms until the result (200), then
 *    POSTs the next. Prints jobs/s and the POST-to-result latency (p50, p95, p99).
 * 2. Reads while the pool is saturated: Grids of N = 2,000, K = 12 (all 4,095 combinations x 4
 *    thresholds x 2 censors) queued, several per worker (enough for about 8 s of work), then
 *    1,500 reads by 4 concurrent readers, round robin over: a completed PSR result, a completed
 *    Grid result (about 100 KB), a single field, the quota, an experiment. Prints p50 / p99 / max
 *    per kind, next to the same reads with an idle pool, and whether every worker was still busy
 *    when the last read ended.
 *
 * 3. Reads while large requests are served (issue 11, item 7): one reader GETs a small completed
 *    result every 5 ms, first with nothing else going on, then while these are in flight at once:
 *    a 10,000-row PSR experiment POST (N = 200, K = 5; its 10,000 jobs then run), a 100 MB v2 X
 *    upload (PUT), and field reads of a Grid result of about 150 MB (retained weights_cells,
 *    with --max-retained-values raised for it), each a first read of that result (it is too large
 *    for the service's result cache). Prints the reader's p50 / p99 / max next to the idle ones,
 *    and how long each large request took. Bodies are built before the clock starts.
 * 4. One notebook's Grid on every core: one large Grid (N = 10,000, K = 14, 1,000 sampled
 *    combinations) POSTed to a local service (in this process: startLocalService) with 1 and
 *    with 2 workers, POST to result, median of 3; the results must be identical.
 * 5. An experiment: 200 theta rows against the N = 1,000, K = 10 default Grid through a local
 *    service with every core (bench/local-run.ts), rows shared per task (the default: sharing
 *    what does not depend on theta) and one row per task; every row must be identical to the row
 *    run alone. Target (issue 15): at most 3 s.
 * 6. The embedded store against PostgreSQL with 1 and 2 worker processes (bench/stores.ts).
 *
 * `npm run bench:service -- 3` runs scenario 3 alone (any of 1 to 6; `--only-grid` is 4 and 5).
 *
 * Bounded: a fixed number of jobs and reads, data from the engine's seeded generator, and a
 * 600 s overall limit; the service is stopped at the end (its unfinished Grids with it).
 */
import { spawn, type ChildProcess } from "node:child_process";
import os from "node:os";
import { performance } from "node:perf_hooks";
import { createRandom } from "../src/engine/random.js";
import { spawnServe } from "../scripts/rbp-serve.js";
import { compareStores } from "./stores.js";
import type { LocalServiceOptions } from "../src/service/index.js";
import { EXPERIMENT, localRunner, serviceExperiment } from "./local-run.js";
import { syntheticData } from "./synthetic.js";

const SMALL = { N: 50, K: 3, jobs: 600, clients: 16, pollMs: 2 };
const GRID = { N: 2000, K: 12, targetSeconds: 8 };
const READS = { count: 1500, readers: 4 };
const OVERALL_LIMIT_MS = 600_000;
const LARGE = { experimentRows: 10_000, uploadBytes: 100 * 1024 * 1024, fieldReads: 3, big: { N: 2000, K: 10, thresholds: [0, 0.2, 0.5, 0.8] } };
const LARGE_GRID = { N: 10_000, K: 14, maxIter: 1000, runs: 5, warm: 4 };

// ---------------------------------------------------------------------------------------------
// The service and a small client

interface Server {
  child: ChildProcess;
  url: string;
  apiKey: string;
  accessId: string;
}

async function startServer(): Promise<Server> {
  // Scenario 3 reads a result of about 150 MB: raise the retained-values limit for it.
  const { child, url, apiKey, accessId } = await spawnServe(["--port", "0", "--quiet", "--max-retained-values", "40000000"]);
  return { child, url, apiKey: apiKey!, accessId: accessId! };
}

let server: Server;

async function get(path: string): Promise<{ status: number; body: any }> {
  const res = await fetch(server.url + path, { headers: { "x-api-key": server.apiKey } });
  return { status: res.status, body: await res.json() };
}

async function post(path: string, body: Record<string, unknown>): Promise<{ status: number; body: any }> {
  const res = await fetch(server.url + path, {
    method: "POST",
    headers: { "x-api-key": server.apiKey, "content-type": "application/json" },
    body: JSON.stringify({ access_id: server.accessId, ...body }),
  });
  return { status: res.status, body: await res.json() };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const resultPath = (r: { job_id: number; job_code: string }) => `/v3/results/${r.job_id}/${r.job_code}`;

let polls = 0;

async function pollToEnd(path: string, intervalMs: number): Promise<{ status: number; body: any }> {
  for (;;) {
    const r = await get(path);
    polls++;
    if (r.status !== 202) return r;
    await sleep(intervalMs);
  }
}

// ---------------------------------------------------------------------------------------------
// Data and statistics

/** Correlated attributes and a linear outcome with noise, from the engine's seeded generator. */
function synthetic(N: number, K: number, seed: number): { y: number[]; X: number[][]; theta: number[] } {
  const u = createRandom(seed);
  const row = () => {
    const x: number[] = [];
    for (let j = 0; j < K; j++) x.push(u() - 0.5 + (j > 0 ? 0.5 * x[j - 1] : 0));
    return x;
  };
  const X = Array.from({ length: N }, row);
  const y = X.map((x) => x.reduce((s, v, j) => s + (j % 2 ? -v : v), 0) + 0.3 * (u() - 0.5));
  return { y, X, theta: row() };
}

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

const ms = (v: number) => (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2));

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ");
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

// ---------------------------------------------------------------------------------------------
// 1. Throughput of small PSR jobs

async function throughput(): Promise<void> {
  const bodies = Array.from({ length: 8 }, (_, s) => ({ ...synthetic(SMALL.N, SMALL.K, 100 + s), options: { threshold: [0, 0.2, 0.5, 0.8] } }));
  // warm-up: start the workers and let the JIT see the code
  await Promise.all(Array.from({ length: 32 }, (_, i) => post("/v3/psr", bodies[i % 8]).then((r) => pollToEnd(resultPath(r.body), SMALL.pollMs))));

  const latencies: number[] = [];
  polls = 0;
  let next = 0;
  let failed = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: SMALL.clients }, async () => {
      while (next < SMALL.jobs) {
        const i = next++;
        const start = performance.now();
        const receipt = await post("/v3/psr", bodies[i % bodies.length]);
        if (receipt.status !== 200) throw new Error(`POST refused: ${JSON.stringify(receipt.body)}`);
        const end = await pollToEnd(resultPath(receipt.body), SMALL.pollMs);
        if (end.status !== 200) failed++;
        latencies.push(performance.now() - start);
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  latencies.sort((a, b) => a - b);
  console.log(
    `\n1. POST-to-result throughput: ${SMALL.jobs} PSR jobs (N=${SMALL.N}, K=${SMALL.K}, 4 thresholds), ${SMALL.clients} concurrent clients, polling every ${SMALL.pollMs} ms`,
  );
  console.log(
    table(
      ["jobs", "failed", "seconds", "jobs/s", "GETs/job", "requests/s", "p50 ms", "p95 ms", "p99 ms", "max ms"],
      [
        [
          String(SMALL.jobs),
          String(failed),
          seconds.toFixed(2),
          (SMALL.jobs / seconds).toFixed(0),
          (polls / SMALL.jobs).toFixed(1),
          ((SMALL.jobs + polls) / seconds).toFixed(0),
          ms(quantile(latencies, 0.5)),
          ms(quantile(latencies, 0.95)),
          ms(quantile(latencies, 0.99)),
          ms(latencies[latencies.length - 1]),
        ],
      ],
    ),
  );
}

// ---------------------------------------------------------------------------------------------
// 2. Reads while the pool is saturated with Grids

interface ReadKind {
  name: string;
  path: string;
}

async function readRound(kinds: ReadKind[], count: number): Promise<Map<string, number[]>> {
  const times = new Map(kinds.map((k) => [k.name, [] as number[]]));
  let next = 0;
  await Promise.all(
    Array.from({ length: READS.readers }, async () => {
      while (next < count) {
        const kind = kinds[next++ % kinds.length];
        const start = performance.now();
        const res = await fetch(server.url + kind.path, { headers: { "x-api-key": server.apiKey } });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`${kind.name}: status ${res.status}`);
        times.get(kind.name)!.push(performance.now() - start);
      }
    }),
  );
  return times;
}

async function saturatedReads(): Promise<void> {
  const small = await post("/v3/psr", { ...synthetic(SMALL.N, SMALL.K, 7), options: { threshold: [0, 0.5] } });
  const experiment = await post("/v3/psr", {
    ...synthetic(SMALL.N, SMALL.K, 8),
    theta: [
      [0, 0, 0],
      [0.1, 0.2, 0.3],
      [-0.2, 0, 0.2],
    ],
  });
  await pollToEnd(resultPath(small.body), 5);
  await pollToEnd(`/v3/experiments/${experiment.body.experiment_id}/${experiment.body.experiment_code}`, 5);

  // one Grid alone: its time decides how many keep every worker busy for GRID.targetSeconds
  const gridBody = (seed: number) => ({ ...synthetic(GRID.N, GRID.K, seed), options: { max_iter: 2 ** GRID.K - 1 } });
  const t0 = performance.now();
  const probe = await post("/v3/grid", gridBody(1));
  const probeResult = await pollToEnd(resultPath(probe.body), 20);
  if (probeResult.status !== 200) throw new Error(`the Grid failed: ${JSON.stringify(probeResult.body).slice(0, 300)}`);
  const gridSeconds = (performance.now() - t0) / 1000;
  const workers = os.availableParallelism();
  const perWorker = Math.max(2, Math.ceil(GRID.targetSeconds / gridSeconds));

  const kinds: ReadKind[] = [
    { name: "GET result (PSR, N=50)", path: resultPath(small.body) },
    { name: `GET result (Grid, N=${GRID.N}, ${(JSON.stringify(probeResult.body).length / 1024).toFixed(0)} KB)`, path: resultPath(probe.body) },
    { name: "GET field (yhat)", path: `/v3/jobs/${small.body.job_id}/${small.body.job_code}/yhat` },
    { name: "GET quota", path: "/v3/quota" },
    { name: "GET experiment (3 rows)", path: `/v3/experiments/${experiment.body.experiment_id}/${experiment.body.experiment_code}` },
  ];

  await readRound(kinds, 200); // warm-up
  const idle = await readRound(kinds, READS.count);

  const grids = await Promise.all(Array.from({ length: workers * perWorker }, (_, i) => post("/v3/grid", gridBody(10 + i))));
  // wait until every worker runs a Grid
  for (let i = 0; ; i++) {
    const states = await Promise.all(grids.map((g) => get(resultPath(g.body))));
    if (states.filter((s) => s.body.status === "running").length >= workers) break;
    if (i > 1000) throw new Error("the Grids never started");
    await sleep(10);
  }
  const tBusy = performance.now();
  const busy = await readRound(kinds, READS.count);
  const readSeconds = (performance.now() - tBusy) / 1000;
  const states = await Promise.all(grids.map((g) => get(resultPath(g.body))));
  const unfinished = states.filter((s) => s.status === 202).length;
  const running = states.filter((s) => s.body.status === "running").length;

  console.log(
    `\n2. Reads while the pool is saturated: ${workers} workers; ${grids.length} Grids queued (N=${GRID.N}, K=${GRID.K}, ` +
      `${2 ** GRID.K - 1} combinations x 4 thresholds x 2 censors; ${gridSeconds.toFixed(2)} s each alone), ` +
      `${READS.count} reads by ${READS.readers} concurrent readers in ${readSeconds.toFixed(2)} s`,
  );
  const rows: string[][] = [];
  const all = { idle: [] as number[], busy: [] as number[] };
  for (const k of kinds) {
    const a = [...idle.get(k.name)!].sort((x, y) => x - y);
    const b = [...busy.get(k.name)!].sort((x, y) => x - y);
    all.idle.push(...a);
    all.busy.push(...b);
    rows.push([k.name, String(b.length), ms(quantile(a, 0.5)), ms(quantile(a, 0.99)), ms(quantile(b, 0.5)), ms(quantile(b, 0.99)), ms(b[b.length - 1])]);
  }
  all.idle.sort((x, y) => x - y);
  all.busy.sort((x, y) => x - y);
  rows.push([
    "all reads",
    String(all.busy.length),
    ms(quantile(all.idle, 0.5)),
    ms(quantile(all.idle, 0.99)),
    ms(quantile(all.busy, 0.5)),
    ms(quantile(all.busy, 0.99)),
    ms(all.busy[all.busy.length - 1]),
  ]);
  console.log(table(["read", "n", "idle p50 ms", "idle p99 ms", "saturated p50 ms", "saturated p99 ms", "saturated max ms"], rows));
  console.log(
    `after the last read: ${running} Grids running, ${unfinished - running} queued, ${grids.length - unfinished} finished` +
      (running >= workers ? " (every worker was still busy)" : " (WARNING: the pool was no longer saturated; raise GRID.targetSeconds)"),
  );
}

// ---------------------------------------------------------------------------------------------
// 3. Reads while large requests are served

/** argv: url, key, minimum reads. Reads every 5 ms until "stop" on stdin (and the minimum). */
const READER_SCRIPT = `
const [url, key, min] = process.argv.slice(1);
let stop = false;
process.stdin.on("data", (d) => { if (String(d).includes("stop")) stop = true; });
const times = [];
while (!stop || times.length < Number(min)) {
  const t = performance.now();
  const r = await fetch(url, { headers: { "x-api-key": key } });
  await r.arrayBuffer();
  if (r.status !== 200) { console.error("reader: status " + r.status); process.exit(1); }
  times.push(performance.now() - t);
  await new Promise((r) => setTimeout(r, 5));
}
process.stdout.write(JSON.stringify(times));
process.exit(0);
`;

async function largeRequests(): Promise<void> {
  // Bodies, built before the clock starts.
  const data = synthetic(200, 5, 23);
  const experimentBody = JSON.stringify({
    access_id: server.accessId,
    y: data.y,
    X: data.X,
    theta: Array.from({ length: LARGE.experimentRows }, (_, i) => data.X[i % 200]),
  });
  // Written straight into one buffer: no millions of retained strings for this process's GC to
  // walk while it measures.
  const u = createRandom(24);
  const uploadBody = Buffer.allocUnsafe(LARGE.uploadBytes + 1024);
  let at = uploadBody.write("[");
  for (let i = 0; at < LARGE.uploadBytes; i++) {
    const row = `${i > 0 ? "," : ""}[${Array.from({ length: 8 }, () => (u() - 0.5).toFixed(8)).join(",")}]`;
    at += uploadBody.write(row, at);
  }
  at += uploadBody.write("]", at);
  const uploadPayload = uploadBody.subarray(0, at);
  const small = await post("/v3/psr", { ...synthetic(SMALL.N, SMALL.K, 21), options: { threshold: [0, 0.5] } });
  await pollToEnd(resultPath(small.body), 5);
  const smallPath = resultPath(small.body);

  // The large result: a Grid keeping weights_cells (N x T x Q x 2 censors values).
  const { N, K, thresholds } = LARGE.big;
  const big = await post("/v3/grid", {
    ...synthetic(N, K, 22),
    options: { threshold: thresholds, max_iter: 2 ** K - 1, retain_grid_objects: ["weights_cells"] },
  });
  if (big.status !== 200) throw new Error(`the large Grid was refused: ${JSON.stringify(big.body).slice(0, 300)}`);
  const bigField = `/v3/jobs/${big.body.job_id}/${big.body.job_code}/yhat`;
  const bigDone = await pollToEnd(bigField, 50); // a field, not the whole result, while it runs
  if (bigDone.status !== 200) throw new Error(`the large Grid failed: ${JSON.stringify(bigDone.body).slice(0, 300)}`);
  const bigBytes = (await (await fetch(server.url + resultPath(big.body), { headers: { "x-api-key": server.apiKey } })).arrayBuffer()).byteLength;

  const urlReply = await fetch(`${server.url}/v2/prediction-engine/payload/upload/url/X?file_name=bench.json`, { headers: { "x-api-key": server.apiKey } });
  const uploadUrl = ((await urlReply.json()) as { url: string }).url;

  // The reader runs in a process of its own, so that this one's work (sending 100 MB, its GC)
  // does not show in the figures: it reads until told to stop, then prints its latencies.
  const reader = (minReads: number): { stop: () => void; times: Promise<number[]> } => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", READER_SCRIPT, server.url + smallPath, server.apiKey, String(minReads)], {
      stdio: ["pipe", "pipe", "inherit"],
    });
    let out = "";
    child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
    const times = new Promise<number[]>((resolve, reject) =>
      child.on("exit", (code) => (code === 0 ? resolve((JSON.parse(out) as number[]).sort((a, b) => a - b)) : reject(new Error(`reader exited with ${code}`)))),
    );
    return { stop: () => child.stdin!.end("stop\n"), times };
  };

  const idleReader = reader(300);
  idleReader.stop();
  const idle = await idleReader.times;

  const took: Record<string, number> = {};
  const timed = async (name: string, run: () => Promise<Response>): Promise<void> => {
    const t = performance.now();
    const res = await run();
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${name}: status ${res.status}`);
    took[name] = performance.now() - t;
  };
  const busyReader = reader(20);
  await sleep(300); // the reader process is up and reading
  const t0 = performance.now();
  // RBP_BENCH_LARGE=post,upload,field runs a subset (to see which request costs what).
  const parts = new Set((process.env.RBP_BENCH_LARGE ?? "post,upload,field").split(","));
  await Promise.all([
    !parts.has("post")
      ? undefined
      : timed(`POST experiment (${LARGE.experimentRows.toLocaleString("en-US")} rows, ${(experimentBody.length / 1e6).toFixed(1)} MB)`, () =>
          fetch(server.url + "/v3/psr", { method: "POST", headers: { "x-api-key": server.apiKey, "content-type": "application/json" }, body: experimentBody }),
        ),
    !parts.has("upload")
      ? undefined
      : timed(`PUT upload (${(uploadPayload.length / 1e6).toFixed(0)} MB)`, () =>
          fetch(uploadUrl, { method: "PUT", headers: { "content-type": "application/json" }, body: uploadPayload }),
        ),
    (async () => {
      for (let i = 0; i < (parts.has("field") ? LARGE.fieldReads : 0); i++) {
        await timed(`GET field yhat of a ${(bigBytes / 1e6).toFixed(0)} MB result (read ${i + 1})`, () =>
          fetch(server.url + bigField, { headers: { "x-api-key": server.apiKey } }),
        );
      }
    })(),
  ]);
  const wall = performance.now() - t0;
  busyReader.stop();
  const busy = await busyReader.times;

  console.log(
    `\n3. Reads of a small result (every 5 ms, one reader in its own process) while large requests are in flight, all at once ` +
      `(${(wall / 1000).toFixed(1)} s; ${Object.keys(took).length} large requests, listed below). The service's 2 workers run the experiment's jobs meanwhile.`,
  );
  console.log(
    table(
      ["reads", "n", "p50 ms", "p99 ms", "max ms"],
      [
        ["idle", String(idle.length), ms(quantile(idle, 0.5)), ms(quantile(idle, 0.99)), ms(idle[idle.length - 1])],
        ["during the large requests", String(busy.length), ms(quantile(busy, 0.5)), ms(quantile(busy, 0.99)), ms(busy[busy.length - 1])],
      ],
    ),
  );
  console.log(
    table(
      ["large request", "ms"],
      Object.entries(took).map(([k, v]) => [k, ms(v)]),
    ),
  );
}

// ---------------------------------------------------------------------------------------------
// 4 and 5. One large Grid on 1 and 2 workers; a 200-row experiment, rows alone and shared

/**
 * Runs the same POST on two local services, alternately (so that machine noise falls on both
 * alike), after `warm` untimed runs on each: a notebook session runs many Grids, and a worker's
 * first ones run code not yet optimised (with 2 workers each sees half the chunks, so it warms
 * more slowly; cold, the first run took 1.1 s against 0.3 s warm).
 */
async function alternate(
  a: LocalServiceOptions,
  b: LocalServiceOptions,
  path: string,
  body: Record<string, unknown>,
  runs: number,
  warm = 0,
): Promise<{ a: number[]; b: number[] }> {
  const [ra, rb] = [await localRunner(a), await localRunner(b)];
  const times = { a: [] as number[], b: [] as number[] };
  try {
    for (let r = 0; r < warm; r++) {
      await ra.run(path, body);
      await rb.run(path, body);
    }
    for (let r = 0; r < runs; r++) {
      const x = await ra.run(path, body);
      const y = await rb.run(path, body);
      if (x.results !== y.results) throw new Error(`MISMATCH on ${path}: the results differ between ${JSON.stringify(a)} and ${JSON.stringify(b)}`);
      times.a.push(x.ms);
      times.b.push(y.ms);
    }
  } finally {
    await Promise.all([ra.close(), rb.close()]);
  }
  return times;
}

async function largeGridAndExperiment(): Promise<void> {
  const median = (v: number[]) => [...v].sort((a, b) => a - b)[v.length >> 1];
  const large = syntheticData(LARGE_GRID.N, LARGE_GRID.K, 2);
  const gridBody = {
    y: Array.from(large.data.y),
    X: Array.from({ length: LARGE_GRID.N }, (_, i) => Array.from(large.data.X.subarray(i * LARGE_GRID.K, (i + 1) * LARGE_GRID.K))),
    theta: Array.from(large.theta),
    options: { max_iter: LARGE_GRID.maxIter, seed: 42 },
  };
  const grids = await alternate({ workers: 1 }, { workers: 2 }, "/v3/grid", gridBody, LARGE_GRID.runs, LARGE_GRID.warm);
  const one = { times: grids.a };
  const two = { times: grids.b };
  console.log(
    `\n4. One large Grid (N=${LARGE_GRID.N.toLocaleString("en-US")}, K=${LARGE_GRID.K}, ${LARGE_GRID.maxIter} sampled combinations) through a local service, POST to result, median of ${LARGE_GRID.runs} after ${LARGE_GRID.warm} untimed runs on each, the two services alternating; the POST's parse, the merge, encoding and the result's transfer do not spread`,
  );
  console.log(
    table(
      ["workers", "ms", "speed-up"],
      [
        ["1", ms(median(one.times)), "1.00x"],
        ["2", ms(median(two.times)), `${(median(one.times) / median(two.times)).toFixed(2)}x`],
      ],
    ),
  );
  console.log("the result is identical with 1 and 2 workers");

  const e = await serviceExperiment();
  console.log(
    `\n5. An experiment of ${EXPERIMENT.rows} theta rows on the N=${EXPERIMENT.N.toLocaleString("en-US")}, K=${EXPERIMENT.K} default Grid through a local service (startLocalService, HTTP on loopback) with ${e.workers} workers, POST to the last row's result, median of ${e.runs}, the two services alternating`,
  );
  console.log(
    table(
      ["rows per task", "ms", "speed-up"],
      [
        ["1 (each row alone)", ms(e.aloneMs), "1.00x"],
        ["shared (the default)", ms(e.sharedMs), `${(e.aloneMs / e.sharedMs).toFixed(2)}x`],
      ],
    ),
  );
  console.log(
    `every row is identical to the row run alone; target <= ${EXPERIMENT.targetMs / 1000} s: ${e.sharedMs <= EXPERIMENT.targetMs ? "MET" : "MISSED"} (${(e.sharedMs / 1000).toFixed(2)} s)`,
  );
}

// ---------------------------------------------------------------------------------------------

const limit = setTimeout(() => {
  console.error(`bench:service: over ${OVERALL_LIMIT_MS / 1000} s, stopping`);
  server?.child.kill("SIGKILL");
  process.exit(1);
}, OVERALL_LIMIT_MS);
limit.unref();

const args = process.argv.slice(2);
const only = args.includes("--only-grid") ? [4, 5] : args.map(Number).filter((n) => n >= 1 && n <= 6);
const run = (n: number) => only.length === 0 || only.includes(n);
server = await startServer();
console.log(`bench:service: rbp serve at ${server.url}, ${os.availableParallelism()} workers, Node ${process.version}, ${os.cpus()[0]?.model ?? "cpu"}`);
try {
  if (run(1)) await throughput();
  if (run(2)) await saturatedReads();
  if (run(3)) await largeRequests();
  if (run(4) || run(5)) await largeGridAndExperiment();
} finally {
  const exited = new Promise((r) => server.child.on("exit", r));
  server.child.kill("SIGTERM");
  await exited;
}
// 6. The embedded store against PostgreSQL with 1 and 2 worker processes (bench/stores.ts), with its own time limit.
clearTimeout(limit);
if (run(6)) await compareStores();
