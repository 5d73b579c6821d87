/** Shared by the client suites that run against the local service. */
import type { Worker } from "node:worker_threads";
import { createClient, type ClientOptions, type RbpClient } from "../../src/client/index.js";
import { startLocalService, type LocalService } from "../../src/service/index.js";
import { startWorker } from "../../src/threads/worker-script.js";
import { gold } from "../gold.js";

export { close, column, gold, goldCase, synthetic } from "../gold.js";

/** The quickstart request (7 x 5). */
export const quickstart = () => ({ y: [...gold.inputs.y], X: gold.inputs.X.map((r) => [...r]), theta: [...gold.inputs.theta] });

export function clientFor(service: LocalService, options: ClientOptions = {}): RbpClient {
  return createClient({
    baseUrl: service.url,
    apiKey: service.credentials.apiKey,
    accessId: service.credentials.accessId,
    env: {},
    envFile: false,
    ...options,
  });
}

/** X with two equal columns: a singular covariance, so a job with inv_method gaussian fails. */
export const singular = () => ({
  y: [1, 2, 3, 4, 5, 6],
  X: [
    [1, 1, 3],
    [2, 2, 1],
    [3, 3, 4],
    [4, 4, 1],
    [5, 5, 9],
    [6, 6, 2],
  ],
  theta: [1, 1, 1],
});

/**
 * A local service whose one worker holds every job it is given until `release()` (the service's
 * own worker code, in test/service/fixtures/gated-worker.ts): a job is "running" exactly as long as
 * the test wants, so no test here depends on how long a Grid takes.
 */
export async function gatedService(): Promise<{ service: LocalService; release: () => void }> {
  const workers: Worker[] = [];
  const service = await startLocalService({
    port: 0,
    workers: 1,
    spawn: () => {
      const worker = startWorker("../service/fixtures/gated-worker", import.meta.url);
      workers.push(worker);
      return worker;
    },
  });
  return {
    service,
    release: () => {
      for (const worker of workers) worker.postMessage({ release: true });
    },
  };
}
