/** Shared by the client suites that run against the local service. */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import { createClient, type ClientOptions, type RbpClient } from "../../src/client/index.js";
import type { LocalService } from "../../src/service/index.js";

const vectorsPath = fileURLToPath(new URL("../../../shared/vectors/quickstart-7x5.json", import.meta.url));
export const gold = JSON.parse(readFileSync(vectorsPath, "utf8")) as {
  inputs: { y: number[]; X: number[][]; theta: number[] };
  cases: Array<{ name: string; options?: Record<string, unknown>; expect: Record<string, any> }>;
};
export const goldCase = (prefix: string) => gold.cases.find((c) => c.name.startsWith(prefix))!;

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

/** Correlated data with a little noise; deterministic. */
export function synthetic(N: number, K: number, seed = 1): { y: number[]; X: number[][] } {
  let s = seed >>> 0;
  const next = () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32 - 0.5;
  };
  const X = Array.from({ length: N }, () => {
    const row: number[] = [];
    for (let j = 0; j < K; j++) row.push(next() + (j > 0 ? 0.4 * row[j - 1] : 0));
    return row;
  });
  const y = X.map((row) => row[0] - 2 * row[K - 1] + next());
  return { y, X };
}

/** |a - b| <= tol elementwise (the service publishes 6 decimals). */
export function close(actual: ArrayLike<number | null> | number | null | undefined, expected: ArrayLike<number> | number, tol = 1e-6): void {
  const a = typeof actual === "number" || actual === null || actual === undefined ? [actual] : Array.from(actual);
  const e = typeof expected === "number" ? [expected] : Array.from(expected);
  expect(a).toHaveLength(e.length);
  a.forEach((v, i) => {
    expect(v, `index ${i}`).not.toBeNull();
    expect(Math.abs((v as number) - e[i]), `index ${i}: ${v} vs ${e[i]}`).toBeLessThanOrEqual(tol + 1e-12);
  });
}

export const column = (m: Array<Array<number | null>>, t = 0) => m.map((row) => row[t] as number);

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
