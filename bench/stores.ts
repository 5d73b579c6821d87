/**
 * The embedded store against the PostgreSQL store, for `npm run bench:service` (section 3):
 * the same load on
 *   a. `rbp serve` with the embedded store and one engine thread,
 *   b. `rbp serve --database URL --workers 0` (a front end that runs nothing) + 1 `rbp worker`,
 *   c. the same front end + 2 `rbp worker` processes,
 * each measured in this one run. Load: 300 small PSR jobs (N = 50, K = 3) by 16 concurrent clients,
 * each POSTing, polling GET /v3/results every 5 ms to the result, then POSTing the next; prints
 * jobs/s and POST-to-result latency p50 / p95 / p99. PostgreSQL is Debian's server started for the
 * run (test/pg-server.ts: initdb in a temporary directory, fsync off), stopped at the end. Skipped
 * with a note when the server is not installed (bash scripts/install-postgres.sh).
 */
import { performance } from "node:perf_hooks";
import { spawnServe, type ServeProcess } from "../scripts/rbp-serve.js";
import { postgresBin, spawnWorker, startPostgres, type WorkerProcess } from "../test/pg-server.js";
import { createRandom } from "../src/engine/random.js";

const LOAD = { jobs: 300, clients: 16, pollMs: 5, N: 50, K: 3 };

interface Figures {
  label: string;
  jobsPerSecond: number;
  p50: number;
  p95: number;
  p99: number;
  /** GETs answered per job (polls until the result). */
  getsPerJob: number;
}

function body(seed: number): Record<string, unknown> {
  const random = createRandom(seed);
  const X = Array.from({ length: LOAD.N }, () => Array.from({ length: LOAD.K }, () => random() - 0.5));
  const y = X.map((r) => r[0] - 2 * r[LOAD.K - 1] + 0.1 * (random() - 0.5));
  return { y, X, theta: X[0], options: { threshold: [0, 0.2, 0.5, 0.8] } };
}

async function load(front: ServeProcess, label: string): Promise<Figures> {
  const headers = { "x-api-key": front.apiKey!, "content-type": "application/json" };
  const bodies = Array.from({ length: 8 }, (_, i) => JSON.stringify({ access_id: front.accessId, ...body(i + 1) }));
  const latencies: number[] = [];
  let gets = 0;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: LOAD.clients }, async () => {
      while (next < LOAD.jobs) {
        const i = next++;
        const t0 = performance.now();
        const receipt = (await (await fetch(`${front.url}/v3/psr`, { method: "POST", headers, body: bodies[i % bodies.length] })).json()) as {
          job_id: number;
          job_code: string;
        };
        for (;;) {
          const res = await fetch(`${front.url}/v3/results/${receipt.job_id}/${receipt.job_code}`, { headers });
          await res.arrayBuffer();
          gets++;
          if (res.status === 200) break;
          if (res.status !== 202) throw new Error(`${label}: GET answered ${res.status}`);
          await new Promise((r) => setTimeout(r, LOAD.pollMs));
        }
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))];
  return { label, jobsPerSecond: LOAD.jobs / seconds, p50: q(0.5), p95: q(0.95), p99: q(0.99), getsPerJob: gets / LOAD.jobs };
}

/** Runs the three set-ups one after the other and prints one table with ratios to the embedded store. */
export async function compareStores(): Promise<void> {
  console.log(
    `\n3. Embedded store vs PostgreSQL: ${LOAD.jobs} PSR jobs (N=${LOAD.N}, K=${LOAD.K}), ${LOAD.clients} concurrent clients polling every ${LOAD.pollMs} ms`,
  );
  if (!postgresBin()) {
    console.log("   skipped: PostgreSQL server not installed (bash scripts/install-postgres.sh)");
    return;
  }
  const guard = setTimeout(() => {
    console.error("bench:service: the store comparison took over 300 s, stopping");
    process.exit(1);
  }, 300_000);
  guard.unref();
  const env = { CSA_API_KEY: "bench-key-0123456789abcdef", CSA_ACCESS_ID: "bench" };
  const rows: Figures[] = [];
  const embedded = await spawnServe(["--port", "0", "--quiet", "--workers", "1"], env);
  try {
    rows.push(await load(embedded, "embedded, 1 engine thread"));
  } finally {
    embedded.child.kill("SIGTERM");
  }
  const pgServer = await startPostgres();
  const workers: WorkerProcess[] = [];
  let front: ServeProcess | undefined;
  try {
    front = await spawnServe(["--port", "0", "--quiet", "--workers", "0", "--database", pgServer.url, "--migrate"], env);
    workers.push(await spawnWorker(pgServer.url, ["--quiet"]));
    rows.push(await load(front, "PostgreSQL, front end + 1 rbp worker"));
    workers.push(await spawnWorker(pgServer.url, ["--quiet"]));
    rows.push(await load(front, "PostgreSQL, front end + 2 rbp workers"));
  } finally {
    front?.child.kill("SIGTERM");
    await Promise.all(workers.map((w) => w.stop()));
    await pgServer.stop();
  }
  const base = rows[0];
  const pad = (s: string, n: number) => s.padEnd(n);
  console.log(`   ${pad("set-up", 40)} ${pad("jobs/s", 8)} ${pad("x embedded", 11)} ${pad("p50 ms", 8)} ${pad("p95 ms", 8)} ${pad("p99 ms", 8)} GETs/job`);
  for (const r of rows) {
    console.log(
      `   ${pad(r.label, 40)} ${pad(r.jobsPerSecond.toFixed(1), 8)} ${pad((r.jobsPerSecond / base.jobsPerSecond).toFixed(2), 11)} ${pad(r.p50.toFixed(1), 8)} ${pad(r.p95.toFixed(1), 8)} ${pad(r.p99.toFixed(1), 8)} ${r.getsPerJob.toFixed(1)}`,
    );
  }
  console.log("   (one run, on whatever else the machine is doing: compare rows of this table, not across runs)");
  clearTimeout(guard);
}

// Run alone: npx tsx bench/stores.ts
if (import.meta.url === `file://${process.argv[1]}`) {
  await compareStores();
}
