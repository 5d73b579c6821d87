/**
 * Shared by the suites: the gold vectors the hosted engine printed for the quickstart 7 x 5 data
 * (the project's copy in test/fixtures, source named there), seeded synthetic data, and the tolerance check the service's six-decimal
 * numbers are compared with.
 */
import { readFileSync } from "node:fs";
import { expect } from "vitest";

export interface GoldCase {
  name: string;
  options?: Record<string, unknown>;
  expect: Record<string, any>;
}

export const gold = JSON.parse(readFileSync(new URL("./fixtures/quickstart-7x5.json", import.meta.url), "utf8")) as {
  inputs: { y: number[]; X: number[][]; theta: number[] };
  cases: GoldCase[];
};

/** The gold case whose name starts with `prefix`. */
export const goldCase = (prefix: string): GoldCase => gold.cases.find((c) => c.name.startsWith(prefix))!;

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

/** |a - b| <= tol elementwise, allowing for the binary representation of decimals (3.28524 - 3.285239). */
export function close(actual: ArrayLike<number | null> | number | null | undefined, expected: ArrayLike<number> | number, tol = 1e-6): void {
  const a = typeof actual === "number" || actual === null || actual === undefined ? [actual] : Array.from(actual);
  const e = typeof expected === "number" ? [expected] : Array.from(expected);
  expect(a).toHaveLength(e.length);
  a.forEach((v, i) => {
    expect(v, `index ${i}`).not.toBeNull();
    expect(Math.abs((v as number) - e[i]), `index ${i}: ${v} vs ${e[i]}`).toBeLessThanOrEqual(tol + 1e-12);
  });
}

/** Column t of a matrix. */
export const column = (m: Array<Array<number | null>>, t = 0) => m.map((row) => row[t] as number);
