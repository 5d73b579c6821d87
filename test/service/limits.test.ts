/**
 * Work the service refuses at POST, for free (issue 11, items 3 and 5): requests the engine would
 * refuse once running (more than 255 thresholds, a v2 threshold_range expanding beyond that, a
 * logistic scale with y not 0/1, too few complete rows), and requests beyond the service's limits
 * (combinations, attributes, theta rows, retained values, rows x cells). Each answers 422 (v2:
 * 400) naming the option and the limit, and the quota is untouched.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalService } from "../../src/service/index.js";
import { BODY_LIMITS, DEFAULT_LIMITS } from "../../src/service/limits.js";
import { Client, quickstart, start, synthetic } from "./helpers.js";
import { officialGridBody, officialPsrBody, send, V2 } from "./v2-helpers.js";

let service: LocalService;
let client: Client;

beforeAll(async () => {
  ({ service, client } = await start({ workers: 1 }));
});
afterAll(() => service?.close());

async function used(): Promise<number> {
  return (await client.get("/v3/quota")).body.used;
}

/** POSTs to v3 and expects a free 422 naming `field`. */
async function refusedV3(path: string, body: Record<string, unknown>, field: string, error = "invalid_input"): Promise<any> {
  const before = await used();
  const r = await client.post(path, body);
  expect(r.status, JSON.stringify(r.body)).toBe(422);
  expect(r.body.error).toBe(error);
  expect(r.body.field).toBe(field);
  expect(await used()).toBe(before);
  return r.body;
}

async function refusedV2(path: string, body: Record<string, unknown>, field: string): Promise<any> {
  const before = await used();
  const r = await send("POST", `${service.url}${V2}${path}`, { "x-api-key": client.apiKey! }, { ...body, access_id: client.accessId });
  expect(r.status, JSON.stringify(r.body)).toBe(400);
  expect(r.body.field).toBe(field);
  expect(await used()).toBe(before);
  return r.body;
}

const thresholds = (n: number) => Array.from({ length: n }, (_, i) => i / n);

describe("what the engine would refuse is refused at POST, free (item 5)", () => {
  it("v3: a threshold list longer than 255", async () => {
    const body = await refusedV3("/v3/psr", quickstart({ options: { threshold: thresholds(256) } }), "options.threshold");
    expect(body.message).toContain("at most 255 thresholds");
    expect((await client.post("/v3/psr", quickstart({ options: { threshold: thresholds(255) } }))).status).toBe(200);
  });

  it("v2: a threshold_range / stepsize expansion beyond 255, and a list longer than 255", async () => {
    const body = await refusedV2("/psr", officialPsrBody({ threshold: null, threshold_range: [0, 1], stepsize: 0.001 }), "options.stepsize");
    expect(body.message).toContain("at most 255 thresholds");
    expect(body.message).toContain("1,001");
    await refusedV2("/grid", officialGridBody({ threshold: thresholds(300) }), "options.threshold");
  });

  it("v3: prediction_scale logistic with y not 0/1, or one class only (psr, maxfit, grid)", async () => {
    for (const analysis of ["psr", "maxfit", "grid"]) {
      const body = await refusedV3(`/v3/${analysis}`, quickstart({ options: { prediction_scale: "logistic" } }), "y[0]");
      expect(body.message).toContain('0 or 1 when prediction_scale is "logistic"');
      const ones = (quickstart().y as number[]).map(() => 1);
      await refusedV3(`/v3/${analysis}`, quickstart({ y: ones, options: { prediction_scale: "logistic" } }), "y");
    }
    const binary = (quickstart().y as number[]).map((v, i) => i % 2);
    expect((await client.post("/v3/psr", quickstart({ y: binary, options: { prediction_scale: "logistic" } }))).status).toBe(200);
  });

  it("v2: _output_scale logistic with y not 0/1", async () => {
    await refusedV2("/psr", officialPsrBody({ _output_scale: "logistic" }), "y[0]");
  });

  it("psr and maxfit: no more complete rows than attributes", async () => {
    const X = (quickstart().X as number[][]).map((row, i) => (i < 3 ? row.map((v, j) => (j === 0 ? null : v)) : row));
    const body = await refusedV3("/v3/psr", quickstart({ X }), "X");
    expect(body.message).toContain("4 complete rows for K=5");
  });
});

describe("the service's limits (item 3)", () => {
  it("a Grid of K=30 with max_iter 1e9 is refused naming max_iter and the limit", async () => {
    const { y, X } = synthetic(200, 30, 3);
    const body = await refusedV3("/v3/grid", { y, X, theta: X[0], options: { max_iter: 1e9 } }, "options.max_iter", "limit_exceeded");
    expect(body.limit_name).toBe("maxCombinations");
    expect(body.limit).toBe(DEFAULT_LIMITS.maxCombinations);
    expect(body.requested).toBe(1e9);
    expect(body.message).toContain("at most 100,000 Grid combinations per job");
    expect(body.message).toContain("--max-combinations");
  });

  it("a large max_iter over a small K is fine: the count is what the constraints admit", async () => {
    expect((await client.post("/v3/grid", quickstart({ options: { max_iter: 1e9 } }))).status).toBe(200);
  });

  it("attributes, theta rows, retained values and rows x cells", async () => {
    const wide = synthetic(150, 101, 3);
    const a = await refusedV3("/v3/psr", { y: wide.y, X: wide.X, theta: wide.X[0] }, "X", "limit_exceeded");
    expect(a).toMatchObject({ limit_name: "maxAttributes", limit: 100, requested: 101 });

    const theta = quickstart().theta as number[];
    const rows = Array.from({ length: 10_001 }, () => theta);
    const t = await refusedV3("/v3/psr", quickstart({ theta: rows }), "theta", "limit_exceeded");
    expect(t).toMatchObject({ limit_name: "maxThetaRows", limit: 10_000, requested: 10_001 });

    const { y, X } = synthetic(2000, 14, 3);
    // weights_cells: N x T x Q x censors = 2000 x 4 x 1000 x 2 = 16,000,000 values.
    const r = await refusedV3(
      "/v3/grid",
      { y, X, theta: X[0], options: { retain_grid_objects: ["weights_cells"] } },
      "options.retain_grid_objects",
      "limit_exceeded",
    );
    expect(r).toMatchObject({ limit_name: "maxRetainedValues", requested: 16_000_000 });

    const big = synthetic(20_000, 14, 3);
    // 20,000 rows x 16,383 combinations x 2 thresholds x 2 censors
    const w = await refusedV3(
      "/v3/grid",
      { y: big.y, X: big.X, theta: big.X[0], options: { max_iter: 16383, threshold: [0, 0.5] } },
      "options.max_iter",
      "limit_exceeded",
    );
    expect(w).toMatchObject({ limit_name: "maxWork", limit: 1e9, requested: 20_000 * 16383 * 4 });
  });

  it("v2 refuses the same Grid with a 400 naming max_iter", async () => {
    const { y, X } = synthetic(200, 30, 3);
    const body = await refusedV2("/grid", { y: y.map((v) => [v]), X, theta: [X[0]], max_iter: 1e9 }, "options.max_iter");
    expect(body.error).toBe("limit_exceeded");
  });

  it("limits are raised per service", async () => {
    const { service: s, client: c } = await start({ workers: 1, limits: { maxCombinations: 10 } });
    try {
      const r = await c.post("/v3/grid", quickstart({ options: { max_iter: 11 } }));
      expect(r.status).toBe(422);
      expect(r.body).toMatchObject({ field: "options.max_iter", limit: 10, requested: 11 });
      expect((await c.post("/v3/grid", quickstart({ options: { max_iter: 10 } }))).status).toBe(200);
    } finally {
      await s.close();
    }
  });
});

describe("names a client sends are bounded (issue 26, item 4)", () => {
  const long = (n: number) => "k".repeat(n);

  it("v3: a 5 MiB unknown option key is refused naming it (quoted short) and the limit, and not charged", async () => {
    const body = await refusedV3("/v3/psr", quickstart({ options: { [long(5 * 1024 * 1024)]: 1 } }), `options.${long(64)}...(${5 * 1024 * 1024} characters)`);
    expect(body.limit).toBe(BODY_LIMITS.maxNameChars);
    expect(body.limit_name).toBe("maxNameChars");
    expect(body.message.length).toBeLessThan(400);
  });

  it("v3: a long top-level field name, and a key inside an option's value", async () => {
    await refusedV3("/v3/grid", quickstart({ [long(BODY_LIMITS.maxNameChars + 1)]: 1 }), `${long(64)}...(${BODY_LIMITS.maxNameChars + 1} characters)`);
    await refusedV3("/v3/grid", quickstart({ options: { max_iter: { [long(300)]: 1 } } }), `options.max_iter.${long(64)}...(300 characters)`);
  });

  it("a name of exactly the limit is accepted (and ignored with a warning)", async () => {
    const r = await client.post("/v3/psr", quickstart({ options: { [long(BODY_LIMITS.maxNameChars)]: 1 } }));
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.warnings).toHaveLength(1);
  });

  it("v3: an object of more keys than the limit is refused, free", async () => {
    const options = Object.fromEntries(Array.from({ length: BODY_LIMITS.maxObjectKeys + 1 }, (_, i) => [`unknown_${i}`, 1]));
    const body = await refusedV3("/v3/psr", quickstart({ options }), "options");
    expect(body.limit_name).toBe("maxObjectKeys");
  });

  it("v2: a long option key (small and large bodies) is a 400 naming it, free", async () => {
    await refusedV2("/psr", officialPsrBody({ [long(1000)]: true }), `${long(64)}...(1000 characters)`);
    await refusedV2("/psr", officialPsrBody({ [long(1024 * 1024)]: true }), `${long(64)}...(${1024 * 1024} characters)`);
  });
});
