/**
 * A local service in this process (startLocalService: real HTTP on loopback, as a notebook's
 * embedded service), a POST timed to its last job's result, and the 200-row experiment of issue
 * 15 item 3 on it. Used by `npm run bench` and `npm run bench:service`.
 */
import os from "node:os";
import { performance } from "node:perf_hooks";
import { startLocalService, type LocalServiceOptions } from "../src/service/index.js";
import { syntheticData } from "./synthetic.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface LocalRunner {
  /** POSTs `body`, then reads every job's result; ms from POST to the last result read, and the results (JSON, one line per job; made after the clock stops). */
  run(path: string, body: Record<string, unknown>): Promise<{ ms: number; results: string }>;
  close(): Promise<void>;
}

/**
 * @example
 * const runner = await localRunner({ workers: 2 });
 * const { ms } = await runner.run("/v3/grid", { y, X, theta });
 */
export async function localRunner(options: LocalServiceOptions): Promise<LocalRunner> {
  const local = await startLocalService({ ...options, quota: 1_000_000 });
  const headers = { "x-api-key": local.credentials.apiKey, "content-type": "application/json" };
  const read = async (p: string) => {
    const res = await fetch(local.url + p, { headers });
    return { status: res.status, text: await res.text() };
  };
  return {
    close: () => local.close(),
    async run(path, body) {
      const start = performance.now();
      const res = await fetch(local.url + path, { method: "POST", headers, body: JSON.stringify({ access_id: local.credentials.accessId, ...body }) });
      const receipt = (await res.json()) as { job_id?: number; job_code?: string; jobs?: Array<{ job_id: number; job_code: string }> };
      if (res.status !== 200) throw new Error(`POST refused: ${JSON.stringify(receipt)}`);
      const jobs = receipt.jobs ?? [{ job_id: receipt.job_id!, job_code: receipt.job_code! }];
      const texts: string[] = [];
      for (const job of jobs) {
        for (;;) {
          const got = await read(`/v3/results/${job.job_id}/${job.job_code}`);
          if (got.status === 200) {
            texts.push(got.text);
            break;
          }
          if (got.status !== 202) throw new Error(`job ${job.job_id}: ${got.status} ${got.text.slice(0, 200)}`);
          await sleep(5);
        }
      }
      const ms = performance.now() - start;
      // Compared after the clock stops: each answer's results, without the job's ids.
      return { ms, results: texts.map((text) => JSON.stringify((JSON.parse(text) as { results: unknown }).results)).join("\n") };
    },
  };
}

export const EXPERIMENT = { N: 1000, K: 10, rows: 200, targetMs: 3000 };

/** The experiment's request body: EXPERIMENT.rows thetas against one X and y, default Grid options. */
export function experimentBody(): Record<string, unknown> {
  const { N, K } = EXPERIMENT;
  const e = syntheticData(N, K, 1, EXPERIMENT.rows);
  return {
    y: Array.from(e.data.y),
    X: Array.from({ length: N }, (_, i) => Array.from(e.data.X.subarray(i * K, (i + 1) * K))),
    theta: e.thetas.map((t) => Array.from(t)),
  };
}

export interface ExperimentFigures {
  workers: number;
  /** POST to the last row's result, rows shared per task (the service's default). */
  sharedMs: number;
  /** The same with one row per task (experimentRowsPerTask 1: each row run alone). */
  aloneMs: number;
  /** Timed runs of each (medians above). */
  runs: number;
}

/**
 * The 200-row experiment through a local service with every core, rows shared per task (the
 * default) and one row per task, alternately; throws when a row differs from the row run alone.
 * A 20-row warm-up on each (worker start-up and JIT), then `runs` timed runs each: medians.
 */
export async function serviceExperiment(workers = os.availableParallelism(), runs = 3): Promise<ExperimentFigures> {
  const body = experimentBody();
  const shared = await localRunner({ workers });
  const alone = await localRunner({ workers, experimentRowsPerTask: 1 });
  try {
    const warmUp = { ...body, theta: (body.theta as number[][]).slice(0, 20) };
    await shared.run("/v3/grid", warmUp);
    await alone.run("/v3/grid", warmUp);
    const times = { shared: [] as number[], alone: [] as number[] };
    for (let r = 0; r < runs; r++) {
      const a = await shared.run("/v3/grid", body);
      const b = await alone.run("/v3/grid", body);
      if (a.results !== b.results) throw new Error("MISMATCH: an experiment row run with others differs from the row run alone");
      times.shared.push(a.ms);
      times.alone.push(b.ms);
    }
    const median = (v: number[]) => [...v].sort((x, y) => x - y)[v.length >> 1];
    return { workers, sharedMs: median(times.shared), aloneMs: median(times.alone), runs };
  } finally {
    await Promise.all([shared.close(), alone.close()]);
  }
}
