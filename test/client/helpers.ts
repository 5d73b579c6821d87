/** Shared by the client suites that run against the local service. */
import { createClient, type ClientOptions, type RbpClient } from "../../src/client/index.js";
import type { LocalService } from "../../src/service/index.js";
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
