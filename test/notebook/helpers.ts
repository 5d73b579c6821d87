/** Shared by the notebook suites: the quickstart data as a notebook holds it, and a simulated tslab kernel. */
import { createRequire } from "node:module";
import * as dfd from "danfojs";
import { vi } from "vitest";
import { gold } from "../gold.js";

export { gold, goldCase } from "../gold.js";

/** Names a notebook would give the quickstart's columns and rows. */
export const NAMES = ["Age", "Experience", "Height", "Weight", "Score"];
export const PEOPLE = ["Ann", "Ben", "Cat", "Dan", "Eve", "Fay", "Gus"];

/** The quickstart as row objects `{ Name, Points, Age, ... }`. */
export function quickstartRows(): Array<Record<string, string | number>> {
  const { y, X } = gold.inputs;
  return y.map((v, i) => ({ Name: PEOPLE[i], Points: v, ...Object.fromEntries(NAMES.map((n, j) => [n, X[i][j]])) }));
}

/** The quickstart as a danfo DataFrame indexed by name. */
export function quickstartFrame(): dfd.DataFrame {
  const { y, X } = gold.inputs;
  const columns: Record<string, number[]> = { Points: [...y] };
  NAMES.forEach((n, j) => (columns[n] = X.map((r) => r[j])));
  return new dfd.DataFrame(columns, { index: PEOPLE });
}

/** The quickstart's theta as one row object. */
export function quickstartTheta(): Record<string, number> {
  return Object.fromEntries(NAMES.map((n, j) => [n, gold.inputs.theta[j]]));
}

/** |a - b| <= tol (the service publishes 6 decimals). */
export function near(actual: number | null | undefined, expected: number, tol = 1e-6): boolean {
  return typeof actual === "number" && Math.abs(actual - expected) <= tol + 1e-12;
}

const g = globalThis as Record<string, unknown>;
const cache = createRequire(import.meta.url).cache;
const FAKE_JUPYTER = "/opt/fake/lib/node_modules/tslab/dist/jupyter.js";

export interface KernelMessage {
  data: Record<string, unknown>;
  transient: Record<string, unknown>;
  update: boolean;
}

/**
 * Makes this process look like tslab to display() (as test/display/jupyter.test.ts does): the
 * `__tslab__` global and tslab's writer in the module cache. Returns the messages sent and a
 * function that ends the simulation.
 */
export function simulateTslab(): { messages: KernelMessage[]; restore: () => void } {
  const messages: KernelMessage[] = [];
  const write = vi.fn((message: { data: Record<string, unknown>; transient: Record<string, unknown> }, update: boolean) => {
    messages.push({ data: message.data, transient: message.transient, update });
  });
  g.__tslab__ = { exports: {}, require: () => ({}) };
  cache[FAKE_JUPYTER] = { exports: { lastWriteDisplayData: write } } as never;
  return {
    messages,
    restore: () => {
      delete g.__tslab__;
      delete cache[FAKE_JUPYTER];
    },
  };
}
