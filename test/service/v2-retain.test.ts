/**
 * v2 returns the Grid cells the official client asks to keep (issue 12, item 2): the exact bodies
 * of client 2.3.0 (`_is_retain_all_grid_objects: true`) and 2.5.0 (`_retain_grid_objects` as a
 * list) over loopback, the cells under the client's VALID_RETAIN_KEYS names in the layout of
 * src/api/v2-result.ts (censors side by side along the threshold axis), equal to the engine's.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { datasetFromRows, grid } from "../../src/engine/index.js";
import type { LocalService } from "../../src/service/index.js";
import { officialV2Body } from "../official-v2.js";
import { gold, start } from "./helpers.js";
import { expectNested2D, V2Client } from "./v2-helpers.js";

let service: LocalService;
let v2: V2Client;

beforeAll(async () => {
  ({ service } = await start({ workers: 1, v2LongPollMs: 10_000 }));
  v2 = new V2Client(service.url, service.credentials.apiKey, service.credentials.accessId);
});
afterAll(() => service.close());

/** Client 2.3.0's GridOptions: `_is_retain_all_grid_objects` where 2.4+ has `_retain_grid_objects`. */
function body230(retainAll: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(officialV2Body("grid"))) {
    if (key === "_retain_grid_objects") out._is_retain_all_grid_objects = retainAll;
    else out[key] = value;
  }
  return out;
}

const body250 = (keys: string[]) => officialV2Body("grid", gold.inputs, { _retain_grid_objects: keys });

const data = datasetFromRows(gold.inputs.y, gold.inputs.X);
const theta = Float64Array.from(gold.inputs.theta);
const T = 4;
const Q = 31;
const N = 7;
const K = 5;
const ALL = ["yhat_cells", "adjusted_fit_cells", "n_cells", "weights_cells", "k_cells", "combi_cells", "ysolo_cells"] as const;
const CELL_KEYS = [...ALL, "ysolo_distribution"];

/** The engine's cells for the client's Grid (its _seed 7, k 1, max_iter 1000). */
const engine = grid(data, theta, { seed: 7, min_k: 1, max_iter: 1000, retain: [...ALL] }).grid_cells!;
/** Same nesting, numbers within the service's six decimals (NaN on the engine side is null on the wire). */
function closeNested(actual: unknown, expected: unknown, path = "value"): void {
  if (Array.isArray(expected)) {
    expect(Array.isArray(actual), `${path} is an array`).toBe(true);
    expect((actual as unknown[]).length, `${path} length`).toBe(expected.length);
    expected.forEach((e, i) => closeNested((actual as unknown[])[i], e, `${path}[${i}]`));
  } else if (typeof expected === "number" && !Number.isFinite(expected)) {
    expect(actual, path).toBeNull();
  } else {
    expect(Math.abs((actual as number) - (expected as number)), `${path}: ${actual} vs ${expected}`).toBeLessThanOrEqual(
      5e-7 + 1e-9 * Math.abs(expected as number),
    );
  }
}

describe("v2 Grid with retained cells, as the official client asks", () => {
  it("client 2.3.0, _is_retain_all_grid_objects: true: every cell array, named as VALID_RETAIN_KEYS, in the documented layout", async () => {
    const { receipt, result } = await v2.run("grid", body230(true));
    expect(receipt.ignored_options ?? []).not.toContain("_is_retain_all_grid_objects");
    const flat = result.body;
    expect(flat.status_code).toBe(11);
    for (const key of ALL) expect(flat, key).toHaveProperty(key);
    expectNested2D(flat);

    expect(flat.combi_cells).toEqual(engine.combi_cells);
    expect(flat.k_cells).toEqual(engine.k_cells!.map((k) => [k, k, k, k]));
    closeNested(flat.ysolo_cells, engine.ysolo_cells, "ysolo_cells");
    for (const key of ["yhat_cells", "adjusted_fit_cells", "n_cells"] as const) {
      expect(flat[key], key).toHaveLength(Q);
      expect(flat[key][0], key).toHaveLength(2 * T);
      // Row q: relevance's four thresholds, then similarity's.
      const want = engine.relevance![key]!.map((row, q) => [...row, ...engine.similarity![key]![q]]);
      closeNested(flat[key], want, key);
    }
    expect(flat.weights_cells).toHaveLength(N);
    expect(flat.weights_cells[0]).toHaveLength(2 * T);
    expect(flat.weights_cells[0][0]).toHaveLength(Q);
    const weights = engine.relevance!.weights_cells!.map((block, i) => [...block, ...engine.similarity!.weights_cells![i]]);
    closeNested(flat.weights_cells, weights, "weights_cells");
    // A cell's weights sum to 1 (PSR weights), so the layout is what it says.
    const sum = (flat.weights_cells as number[][][]).reduce((s, row) => s + row[T + 1][Q - 1], 0);
    expect(sum).toBeCloseTo(1, 5);
    const full = (flat.combi_cells as number[][]).findIndex((row) => row.every((bit) => bit === 1));
    expect(flat.k_cells[full]).toEqual([K, K, K, K]);
  });

  it("client 2.5.0, _retain_grid_objects ['yhat_cells', 'k_cells', 'combi_cells']: exactly those", async () => {
    const { receipt, result } = await v2.run("grid", body250(["yhat_cells", "k_cells", "combi_cells"]));
    expect(receipt.ignored_options ?? []).not.toContain("_retain_grid_objects");
    const flat = result.body;
    const present = CELL_KEYS.filter((key) => key in flat);
    expect(present.sort()).toEqual(["combi_cells", "k_cells", "yhat_cells"]);
    closeNested(
      flat.yhat_cells,
      engine.relevance!.yhat_cells!.map((row, q) => [...row, ...engine.similarity!.yhat_cells![q]]),
      "yhat_cells",
    );
    expect(flat.combi_cells).toEqual(engine.combi_cells);
    // The composite is unchanged by what is kept.
    expect(flat.yhat[0][0]).toBeCloseTo(3.2852397, 6);
  });

  it("one censor (eval_type relevance): its T columns only", async () => {
    const { result } = await v2.run("grid", { ...body250(["n_cells"]), eval_type: "relevance" });
    const flat = result.body;
    expect(flat.n_cells).toHaveLength(Q);
    expect(flat.n_cells[0]).toHaveLength(T);
    expect(flat.n_cells).toEqual(engine.relevance!.n_cells);
  });

  it("no retain (the client's default false, and 2.3.0's false): no cell arrays", async () => {
    for (const body of [officialV2Body("grid"), body230(false)]) {
      const flat = (await v2.run("grid", body)).result.body;
      for (const key of CELL_KEYS) expect(flat, key).not.toHaveProperty(key);
    }
  });
});
