/**
 * The v2 API over loopback HTTP (docs/api.md section 3), spoken as the official Python client
 * speaks it: the flat POST bodies it sends, GET /results with the receipt as the JSON body, the
 * flat result with its legacy names and deprecated aliases, /binary, /grid-singularity, the
 * quota endpoints, the legacy URLs, authentication, and a table of malformed bodies that must
 * never get a 5xx. The same jobs are read through v3 too.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ReceiptSchema } from "../../src/api/schemas.js";
import type { LocalService } from "../../src/service/index.js";
import { close, column, gold, goldCase, start, synthetic, tempDir, type Client, writeCredentials } from "./helpers.js";
import { col, expectNested2D, expectRefusal, officialGridBody, officialMaxFitBody, officialPsrBody, send, V2, V2Client } from "./v2-helpers.js";

let service: LocalService;
let v3: Client;
let v2: V2Client;

beforeAll(async () => {
  ({ service, client: v3 } = await start({ workers: 2, v2LongPollMs: 10_000 }));
  v2 = new V2Client(service.url, service.credentials.apiKey, service.credentials.accessId);
});
afterAll(() => service.close());

describe("the quickstart 7x5 through v2, with the bodies the official client sends", () => {
  it("Grid: the exact grid body of the client (y N x 1, theta 1 x K, every legacy key, _seed) gives the published composite", async () => {
    const post = await v2.post("grid", officialGridBody());
    expect(post.status, JSON.stringify(post.body)).toBe(200);
    expect(ReceiptSchema.safeParse(post.body).success).toBe(true);
    expect(post.body.job_code).toMatch(/^[0-9a-f]{16}$/);
    expect(Number.isInteger(post.body.job_id)).toBe(true);
    // verify_missing_data has no effect on a Grid: reported, never refused (sections 4.1, 4.2)
    expect(post.body.ignored_options).toEqual(["verify_missing_data"]);

    const r = await v2.settle(post.body);
    const flat = r.body;
    const want = goldCase("grid default").expect;
    expect(flat).toMatchObject({ job_id: post.body.job_id, job_code: post.body.job_code, status_code: 11, error_code: 0 });
    close(flat.yhat[0], want.yhat);
    close(flat.fit[0], want.fit);
    close(flat.adjusted_fit[0], want.adjusted_fit);
    close(flat.yhat_linear[0], want.yhat_linear);
    close(col(flat.weights), want.weights);
    expect(flat.eval_type).toEqual([["both"]]);
    expect(flat.most_eval).toEqual([[true]]);
    expect(flat.K).toEqual([[5]]);
  });

  it('PSR: the client\'s PSR body with eval_type "both" (its default) is computed with relevance; weights, include and the scores are the published ones', async () => {
    const c = goldCase("psr relevance t=0.8");
    const scores = goldCase("scores").expect;
    const { receipt, result } = await v2.run("psr", officialPsrBody({ threshold: [0.8] }));
    expect(receipt.warnings.join(" ")).toContain('eval_type "both"');
    const flat = result.body;
    expect(flat.eval_type).toEqual([["relevance"]]);
    close(flat.yhat[0], c.expect.yhat);
    close(flat.fit[0], c.expect.fit);
    close(flat.adjusted_fit[0], c.expect.adjusted_fit);
    close(flat.asymmetry[0], c.expect.asymmetry);
    close(flat.r_star[0], c.expect.r_star);
    close(flat.lambda_sq[0], c.expect.lambda_sq);
    expect(flat.n).toEqual([[c.expect.n]]);
    expect(col(flat.include)).toEqual(c.expect.include);
    close(col(flat.weights), c.expect.weights);
    close(col(flat.relevance), scores.relevance);
    close(col(flat.similarity), scores.similarity);
    close(col(flat.info_x), scores.info_x);
    close(flat.info_theta[0], scores.info_theta);
  });

  it("PSR at several thresholds: per-threshold fields are 1 x T, weights and include N x T", async () => {
    const sweep = goldCase("psr thresholds sweep");
    const { result } = await v2.run("psr", officialPsrBody({ threshold: [0, 0.2, 0.5, 0.8], eval_type: "relevance" }));
    const flat = result.body;
    close(flat.yhat[0], sweep.expect.yhat);
    close(flat.fit[0], sweep.expect.fit);
    close(flat.adjusted_fit[0], sweep.expect.adjusted_fit);
    close(flat.asymmetry[0], sweep.expect.asymmetry);
    expect(flat.yhat).toHaveLength(1);
    expect(flat.weights).toHaveLength(7);
    expect(flat.weights[0]).toHaveLength(4);
    expect(flat.include[0]).toHaveLength(4);
    expect(flat.r_star_percent).toEqual([[0, 0.2, 0.5, 0.8]]);
  });

  it("MaxFit: the published winner (relevance at 0.8)", async () => {
    const c = goldCase("maxfit default");
    const { result } = await v2.run("maxfit", officialMaxFitBody({ objective: "adjusted_fit" }));
    const flat = result.body;
    close(flat.yhat[0], c.expect.yhat);
    close(flat.fit[0], c.expect.fit);
    close(flat.adjusted_fit[0], c.expect.adjusted_fit);
    expect(flat.eval_type).toEqual([[c.expect.censor_type]]);
    expect(flat.r_star_percent).toEqual([[c.expect.threshold]]);
  });

  it("hand-written bodies: flat y and theta, a scalar threshold, threshold null with threshold_range + stepsize, v3 names at the top level", async () => {
    const c = goldCase("psr relevance t=0.8");
    const base = { y: gold.inputs.y, X: gold.inputs.X, theta: gold.inputs.theta };
    const a = await v2.run("psr", { ...base, threshold: 0.8, eval_type: "relevance" });
    close(a.result.body.yhat[0], c.expect.yhat);
    const b = await v2.run("psr", { ...base, threshold: null, threshold_range: [0.8, 0.8], stepsize: 0.2, censor_type: "relevance", censor_operator: "gte" });
    close(b.result.body.yhat[0], c.expect.yhat);
    // a PSR given no threshold at all sweeps 0, 0.2, ..., 0.8 (G11)
    const d = await v2.run("psr", { ...base, threshold: null, eval_type: "relevance" });
    expect(d.result.body.r_star_percent).toEqual([[0, 0.2, 0.4, 0.6, 0.8]]);
    expect(d.result.body.yhat[0]).toHaveLength(5);
    // conflicting spellings of one option: 400 naming both
    expectRefusal(
      await v2.post("psr", { ...base, eval_type: "relevance", censor_type: "similarity" }),
      400,
      "invalid_input",
      "options.censor_type/options.eval_type",
    );
  });

  it("unknown keys are accepted, ignored and listed in ignored_options", async () => {
    const r = await v2.post("psr", officialPsrBody({ colour: "blue", _frobnicate: [1, 2] }));
    expect(r.status).toBe(200);
    expect(r.body.ignored_options).toEqual(expect.arrayContaining(["colour", "_frobnicate"]));
  });
});

describe("the flat result object (docs/api.md section 3)", () => {
  it("Grid: nested 2-D arrays, the deprecated aliases equal to the names they stand for, no error or status key", async () => {
    const { result } = await v2.run("grid", officialGridBody());
    const flat = result.body;
    expectNested2D(flat);
    expect(flat.error).toBeUndefined();
    expect(flat.status).toBeUndefined();
    for (const key of [
      "yhat",
      "fit",
      "adjusted_fit",
      "kfit",
      "agreement",
      "asymmetry",
      "outlier_influence",
      "info_theta",
      "K",
      "eval_type",
      "most_eval",
      "yhat_linear",
    ]) {
      expect(flat[key], key).toHaveLength(1);
      expect(flat[key][0], key).toHaveLength(1);
    }
    for (const key of ["weights", "relevance", "similarity", "info_x"]) {
      expect(flat[key], key).toHaveLength(7);
      expect(flat[key][0], key).toHaveLength(1);
    }
    const K = 5;
    for (const key of [
      "marginal_contribution_to_conviction",
      "contribution_to_conviction",
      "variable_importance",
      "marginal_contribution_to_prediction",
      "contribution_to_prediction",
      "variable_importance_on_yhat",
      "component_contribution_to_prediction",
    ]) {
      expect(flat[key], key).toHaveLength(1);
      expect(flat[key][0], key).toHaveLength(K);
    }
    expect(flat.variable_importance).toEqual(flat.marginal_contribution_to_conviction);
    expect(flat.contribution_to_conviction).toEqual(flat.marginal_contribution_to_conviction);
    expect(flat.variable_importance_on_yhat).toEqual(flat.marginal_contribution_to_prediction);
    expect(flat.contribution_to_prediction).toEqual(flat.marginal_contribution_to_prediction);
    for (const key of ["ysolo_sigma", "ysolo_skewness", "ysolo_kurtosis", "ysolo_pearson_modality_index", "ysolo_bimodality_coefficient"]) {
      expect(flat[key], key).toHaveLength(1);
    }
    // six decimals, like v3
    const decimals = (v: number) => (String(v).split(".")[1] ?? "").length;
    expect(Math.max(...col(flat.relevance).map(decimals))).toBeLessThanOrEqual(6);
  });

  it("PSR and MaxFit: the calibration fields (n, phi, lambda_sq, rho, r_star, include), no Grid contributions", async () => {
    for (const analysis of ["psr", "maxfit"]) {
      const body = analysis === "psr" ? officialPsrBody({ threshold: [0.8] }) : officialMaxFitBody();
      const flat = (await v2.run(analysis, body)).result.body;
      expectNested2D(flat);
      for (const key of ["n", "phi", "lambda_sq", "rho", "r_star", "r_star_percent", "include"]) expect(flat[key], `${analysis} ${key}`).toBeDefined();
      expect(flat.variable_importance, analysis).toBeUndefined();
      expect(flat.error, analysis).toBeUndefined();
    }
  });

  it("most_eval reports the operator the job ran with", async () => {
    const lte = (await v2.run("psr", officialPsrBody({ most_eval: false }))).result.body;
    expect(lte.most_eval).toEqual([[false]]);
    const gt = (await v2.run("psr", officialPsrBody({ most_eval: null, censor_operator: "gt" }))).result.body;
    expect(gt.most_eval).toEqual([[true]]);
  });
});

describe("/binary, /grid-singularity and the legacy URLs", () => {
  const binary = (() => {
    const { y, X } = synthetic(60, 3, 11);
    return { y: y.map((v) => [v > 0 ? 1 : 0]), X, theta: [X[5]] };
  })();

  it("/binary forces the logistic scale: probabilities for a 0/1 y, as _output_scale logistic gives, whatever _output_scale says", async () => {
    for (const analysis of ["psr", "maxfit", "grid"]) {
      const forced = await v2.run(`${analysis}/binary`, { ...binary, _output_scale: "default", threshold: [0, 0.5] });
      expect(forced.receipt.warnings.join(" "), analysis).toContain("/binary");
      const yhat = forced.result.body.yhat[0] as number[];
      for (const p of yhat) {
        expect(p, analysis).toBeGreaterThan(0);
        expect(p, analysis).toBeLessThan(1);
      }
      const asked = await v2.run(analysis, { ...binary, _output_scale: "logistic", threshold: [0, 0.5] });
      expect(asked.result.body.yhat, analysis).toEqual(forced.result.body.yhat);
      const linear = await v2.run(analysis, { ...binary, threshold: [0, 0.5] });
      expect(linear.result.body.yhat, analysis).not.toEqual(forced.result.body.yhat);
    }
  });

  it("/binary refuses a y that is not 0/1 at POST (400 naming the value), free", async () => {
    const before = (await v2.get(`${V2}/quota/used`)).body.used;
    expectRefusal(await v2.post("psr/binary", officialPsrBody()), 400, "invalid_input", "y[0]");
    expectRefusal(await v2.post("grid/binary", { ...binary, y: binary.y.map(() => [1]) }), 400, "invalid_input", "y");
    expect((await v2.get(`${V2}/quota/used`)).body.used).toBe(before);
  });

  it("/grid-singularity reports the Grid's single highest-adjusted-fit cell as a full result (also /grid_singularity, /binary)", async () => {
    const single = (await v2.run("grid-singularity", officialGridBody())).result.body;
    // the same cell found in the Grid's retained cells, read through v3
    const cells = await v3.run("grid", {
      y: gold.inputs.y,
      X: gold.inputs.X,
      theta: gold.inputs.theta,
      options: { retain_grid_objects: ["yhat_cells", "adjusted_fit_cells", "combi_cells"] },
    });
    const gc = cells.body.results.grid_cells;
    let best = { af: -Infinity, yhat: NaN, combi: [] as number[], censor: "" };
    for (const censor of ["relevance", "similarity"]) {
      gc[censor].adjusted_fit_cells.forEach((row: Array<number | null>, q: number) =>
        row.forEach((af, t) => {
          if (af !== null && gc[censor].yhat_cells[q][t] !== null && af > best.af)
            best = { af, yhat: gc[censor].yhat_cells[q][t], combi: gc.combi_cells[q], censor };
        }),
      );
    }
    close(single.yhat[0], best.yhat, 2e-6);
    close(single.adjusted_fit[0], best.af, 2e-6);
    expect(single.attribute_combi).toEqual([best.combi]);
    expect(single.eval_type).toEqual([[best.censor]]);
    expect(single.K).toEqual([[best.combi.filter((v) => v === 1).length]]);
    expect(single.include).toHaveLength(7);
    expect(single.variable_importance[0]).toHaveLength(5);
    expectNested2D(single);

    const legacy = (await v2.run("grid_singularity", officialGridBody())).result.body;
    expect(legacy.yhat).toEqual(single.yhat);
    const bin = (await v2.run("grid-singularity/binary", { ...binary })).result.body;
    expect(bin.yhat[0][0]).toBeGreaterThan(0);
    expect(bin.yhat[0][0]).toBeLessThan(1);
  });

  it("GET /v2/results is an alias of GET /results; /v2/engine/* answers 410 JSON", async () => {
    const post = await v2.post("psr", officialPsrBody());
    const a = await v2.settle(post.body);
    const b = await v2.results({ job_id: post.body.job_id, job_code: post.body.job_code }, undefined, "/v2/results");
    expect(b.status).toBe(200);
    expect(b.body).toEqual(a.body);
    for (const [method, path] of [
      ["POST", "/v2/engine/relevance"],
      ["GET", "/v2/engine/fit"],
      ["PUT", "/v2/engine/adjusted-fit"],
      ["DELETE", "/v2/engine/similarity/x"],
      ["GET", "/v2/engine"],
    ]) {
      expectRefusal(await send(method, `${service.url}${path}`, { "x-api-key": v2.apiKey! }, method === "GET" ? undefined : { y: [1] }), 410, "gone");
    }
    expectRefusal(await v2.get("/v2/engine/fit", undefined, null), 410, "gone");
  });
});

describe("GET /results", () => {
  it("accepts job_id as an integer or a numeric string, and the receipt in the query string", async () => {
    const post = await v2.post("psr", officialPsrBody());
    const a = await v2.settle(post.body);
    const b = await v2.results({ job_id: String(post.body.job_id), job_code: post.body.job_code });
    expect(b.body).toEqual(a.body);
    const c = await v2.get(`${V2}/results?job_id=${post.body.job_id}&job_code=${post.body.job_code}`);
    expect(c.body).toEqual(a.body);
  });

  it("unknown or mismatched receipts: 200 with status_code 0, error_code 1, 'unknown job'", async () => {
    const post = await v2.post("psr", officialPsrBody());
    for (const receipt of [
      { job_id: 987654, job_code: "0000000000000000" },
      { job_id: post.body.job_id, job_code: "0000000000000000" },
      { job_id: post.body.job_id, job_code: post.body.job_code.toUpperCase() },
      { job_id: -1, job_code: post.body.job_code },
      { job_id: "99999999999999999999", job_code: post.body.job_code },
    ]) {
      const r = await v2.results(receipt);
      expect(r.status, JSON.stringify(receipt)).toBe(200);
      expect(r.body).toEqual({ status_code: 0, error_code: 1, message: "unknown job" });
    }
  });

  it("a failed job: 200 with status_code 10, error_code 3 and the reason; never a yhat or a status key", async () => {
    // a constant column: the covariance is singular with the default gaussian inverse
    const X = gold.inputs.X.map((row) => [...row.slice(0, 4), 1]);
    const { result } = await v2.run("psr", officialPsrBody({ X, theta: [[24, 5, 81, 60, 1]] }));
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({ status_code: 10, error_code: 3, error: "prediction_failed" });
    expect(result.body.message).toMatch(/singular|pseudoinverse/);
    expect(result.body.yhat).toBeUndefined();
    expect(result.body.status).toBeUndefined();
  });

  it("v2 and v3 read the same job with the same numbers; a v3 experiment row carries experiment_id in v2", async () => {
    const post = await v2.post("psr", officialPsrBody({ threshold: [0, 0.5, 0.8], eval_type: "relevance" }));
    const flat = (await v2.settle(post.body)).body;
    const env = await v3.poll(`/v3/results/${post.body.job_id}/${post.body.job_code}`);
    expect(env.status).toBe(200);
    const r = env.body.results;
    expect(flat.yhat[0]).toEqual(r.yhat);
    expect(flat.fit[0]).toEqual(r.fit);
    expect(flat.adjusted_fit[0]).toEqual(r.adjusted_fit);
    expect(flat.kfit[0]).toEqual(r.k_fit);
    expect(flat.weights).toEqual(r.prediction_weights.weights);
    expect(flat.include).toEqual(r.prediction_weights.include);
    expect(col(flat.relevance)).toEqual(r.insights.relevance);
    expect(flat.r_star[0]).toEqual(r.auxiliary.r_star);

    const grid = await v2.post("grid", officialGridBody());
    const gflat = (await v2.settle(grid.body)).body;
    const genv = await v3.poll(`/v3/jobs/${grid.body.job_id}/${grid.body.job_code}`);
    expect(gflat.variable_importance[0]).toEqual(genv.body.results.insights["Impact on Fit"]);
    expect(gflat.variable_importance_on_yhat[0]).toEqual(genv.body.results.insights["Impact on Prediction"]);
    expect(column(genv.body.results.prediction_weights.weights)).toEqual(col(gflat.weights));

    const exp = await v3.post("/v3/psr", { y: gold.inputs.y, X: gold.inputs.X, theta: [gold.inputs.theta, gold.inputs.X[0]], options: { threshold: [0.8] } });
    expect(exp.status).toBe(200);
    const row1 = exp.body.jobs[1];
    const child = (await v2.settle(row1)).body;
    expect(child.experiment_id).toBe(exp.body.experiment_id);
    const childV3 = await v3.poll(`/v3/results/${row1.job_id}/${row1.job_code}`);
    expect(child.yhat[0]).toEqual(childV3.body.results.yhat);
  });

  it("malformed receipts are 400 JSON, never 5xx", async () => {
    for (const body of [
      "",
      "{",
      "[]",
      "null",
      '"1"',
      { job_id: "abc", job_code: "x" },
      { job_id: 1.5, job_code: "x" },
      { job_id: 1 },
      { job_id: true, job_code: "x" },
      { job_code: "x" },
      { job_id: 1, job_code: 7 },
    ]) {
      const r = await v2.results(body);
      expectRefusal(r, 400);
    }
  });
});

describe("quota, authentication and organisations", () => {
  const KEYS = { a: "v2-key-of-org-a-0123456789", b: "v2-key-of-org-b-9876543210" };
  const dir = tempDir();
  let svc: LocalService;
  let a: V2Client;
  let b: V2Client;

  beforeAll(async () => {
    const file = writeCredentials(dir.path, [
      { name: "a", api_key: KEYS.a, plan: { quota: 3 }, users: [{ access_id: "alice" }, { access_id: "old-al", expires: "2020-01-01T00:00:00Z" }] },
      { name: "b", api_key: KEYS.b, plan: { quota: 100 }, users: [{ access_id: "bob" }] },
    ]);
    ({ service: svc } = await start({ credentialsFile: file, workers: 1, v2LongPollMs: 10_000 }));
    a = new V2Client(svc.url, KEYS.a, "alice");
    b = new V2Client(svc.url, KEYS.b, "bob");
  });
  afterAll(async () => {
    await svc.close();
    dir.remove();
  });

  it("403 JSON for a missing or unknown x-api-key on every v2 route, and for a bad access_id", async () => {
    for (const key of [null, "not-a-key-at-all"]) {
      expectRefusal(await a.post("psr", officialPsrBody(), key), 403, "forbidden");
      expectRefusal(await a.results({ job_id: 1, job_code: "0000000000000000" }, key), 403, "forbidden");
      expectRefusal(await a.get(`${V2}/payload/upload/url/X`, { file_name: "1234.json" }, key), 403, "forbidden");
      for (const q of ["/quota", "/quota/used", "/quota/remaining", "/quota/summary"])
        expectRefusal(await a.get(`${V2}${q}`, undefined, key), 403, "forbidden");
    }
    expectRefusal(await a.post("psr", { ...officialPsrBody(), access_id: undefined }), 403, "forbidden", "access_id");
    expectRefusal(await a.as(KEYS.a, "bob").post("psr", officialPsrBody()), 403, "forbidden", "access_id");
    const expired = await a.as(KEYS.a, "old-al").post("psr", officialPsrBody());
    expectRefusal(expired, 403, "forbidden");
    expect(expired.body.message).toBe("Access ID expired.");
    expect(JSON.stringify(expired.body)).not.toContain("v2-key-of-org");
  });

  it("quota endpoints: one unit per accepted POST; reads, refusals and quota calls are free; 429 when spent", async () => {
    const q0 = await a.get(`${V2}/quota/summary`);
    expect(q0.status).toBe(200);
    expect(q0.body).toMatchObject({ quota: 3, used: 0, remaining: 3, unit: "prediction_task" });
    expect(q0.body.period_start).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    expect(q0.body.period_end).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);

    const first = await a.run("psr", officialPsrBody());
    await a.results({ job_id: first.receipt.job_id, job_code: first.receipt.job_code });
    expectRefusal(await a.post("psr", officialPsrBody({ theta: [[1, 2]] })), 400, "invalid_input");
    await a.post("maxfit", officialMaxFitBody());
    expect((await a.get(`${V2}/quota`)).body).toEqual({ quota: 3, period_start: expect.any(String), period_end: expect.any(String) });
    expect((await a.get(`${V2}/quota/used`)).body).toMatchObject({ used: 2 });
    expect((await a.get(`${V2}/quota/remaining`)).body).toMatchObject({ remaining: 1 });
    expect((await a.post("grid", officialGridBody())).status).toBe(200);
    const spent = await a.post("psr", officialPsrBody());
    expectRefusal(spent, 429, "quota_exceeded");
    expect(spent.body.message).toMatch(/^Limit Exceeded/);
    expect((await a.get(`${V2}/quota/summary`)).body).toMatchObject({ quota: 3, used: 3, remaining: 0 });
    // reads still work when the quota is spent, and never answer 429
    expect((await a.results({ job_id: first.receipt.job_id, job_code: first.receipt.job_code })).status).toBe(200);
    // the other organisation has its own quota
    expect((await b.get(`${V2}/quota/summary`)).body).toMatchObject({ quota: 100, used: 0 });
  });

  it("another organisation's job is an unknown job", async () => {
    const mine = await b.run("psr", officialPsrBody());
    expect(mine.result.body.yhat).toBeDefined();
    const theirs = await a.results({ job_id: mine.receipt.job_id, job_code: mine.receipt.job_code });
    expect(theirs.body).toEqual({ status_code: 0, error_code: 1, message: "unknown job" });
  });
});

describe("malformed v2 POST bodies: 4xx JSON, never a 5xx, and free", () => {
  const X = gold.inputs.X;
  const ok = officialGridBody();
  const cases: Array<[string, unknown]> = [
    ["empty body", ""],
    ["not JSON", "{"],
    ["truncated", JSON.stringify(ok).slice(0, 40)],
    ["an array", "[]"],
    ["null", "null"],
    ["a string", '"grid"'],
    ["a number", "42"],
    ["deep nesting", "[".repeat(5000) + "]".repeat(5000)],
    ["no y", { ...ok, y: undefined }],
    ["no X", { ...ok, X: undefined }],
    ["y a string", { ...ok, y: "abc" }],
    ["y N x 2", { ...ok, y: X.map(() => [1, 2]) }],
    ["y with null", { ...ok, y: [[1], [null], [3], [4], [5], [6], [7]] }],
    ["y too short", { ...ok, y: [[1], [2]] }],
    ["y with a NaN token", JSON.stringify({ ...ok, access_id: "ACCESS" }).replace('"y":[[18.8]', '"y":[[NaN]')],
    ["y with Infinity", JSON.stringify({ ...ok, access_id: "ACCESS" }).replace('"y":[[18.8]', '"y":[[Infinity]')],
    ["y with 1e400", JSON.stringify({ ...ok, access_id: "ACCESS" }).replace('"y":[[18.8]', '"y":[[1e400]')],
    ["X a number", { ...ok, X: 5 }],
    ["X an object", { ...ok, X: {} }],
    ["X ragged", { ...ok, X: [...X.slice(0, 6), [1, 2]] }],
    ["X with strings", { ...ok, X: X.map((r) => r.map(String)) }],
    ["X a path", { ...ok, X: "../../etc/passwd.json" }],
    ["X a name without .json", { ...ok, X: "abcdef" }],
    ["N <= K", { ...ok, y: [[1], [2], [3]], X: X.slice(0, 3) }],
    ["theta of the wrong length", { ...ok, theta: [[1, 2]] }],
    ["theta two rows", { ...ok, theta: [gold.inputs.theta, gold.inputs.theta] }],
    ["theta with null", { ...ok, theta: [[1, null, 3, 4, 5]] }],
    ["theta a string", { ...ok, theta: "x" }],
    ["threshold a string", { ...ok, threshold: "half" }],
    ["threshold empty", { ...ok, threshold: [] }],
    ["threshold with a string", { ...ok, threshold: [0.1, "x"] }],
    ["eval_type unknown", { ...ok, eval_type: "sideways" }],
    ["most_eval a string", { ...ok, most_eval: "yes" }],
    ["is_threshold_percent a number", { ...ok, is_threshold_percent: 3 }],
    ["k zero", { ...ok, k: 0 }],
    ["k above K", { ...ok, k: 99 }],
    ["k fractional", { ...ok, k: 1.5 }],
    ["max_iter negative", { ...ok, max_iter: -1 }],
    ["_seed negative", { ...ok, _seed: -5 }],
    ["attribute_combi all zero", { ...ok, attribute_combi: [[0, 0, 0, 0, 0]] }],
    ["attribute_combi a string", { ...ok, attribute_combi: "all" }],
    ["attribute_combi wrong width", { ...ok, attribute_combi: [[1, 1]] }],
    ["inv_method unknown", { ...ok, inv_method: "magic" }],
    ["adj_fit_multiplier unknown", { ...ok, adj_fit_multiplier: "zz" }],
    ["objective unknown", { ...ok, objective: "max" }],
    ["_output_scale unknown", { ...ok, _output_scale: "probit" }],
    ["_retain_grid_objects unknown key", { ...ok, _retain_grid_objects: ["everything"] }],
    ["stepsize zero", { ...ok, threshold: null, threshold_range: [0, 1], stepsize: 0 }],
    ["access_id a number", { ...ok, access_id: 5 }],
    ["access_id empty", { ...ok, access_id: "" }],
  ];

  it.each(cases)("%s", async (_name, body) => {
    const before = (await v2.get(`${V2}/quota/used`)).body.used;
    const payload = typeof body === "string" ? body.replace('"access_id":"ACCESS"', `"access_id":${JSON.stringify(v2.accessId)}`) : body;
    for (const endpoint of ["grid", "psr/binary"]) {
      const r = await v2.post(endpoint, payload);
      expect(r.status, `${endpoint}: ${JSON.stringify(r.body)}`).toBeGreaterThanOrEqual(400);
      expect(r.status, `${endpoint}: ${JSON.stringify(r.body)}`).toBeLessThan(500);
      expectRefusal(r, r.status);
      expect([400, 403], endpoint).toContain(r.status);
    }
    expect((await v2.get(`${V2}/quota/used`)).body.used).toBe(before);
  });

  it("a NaN token in X is a missing value (accepted, as the client's encoder writes null)", async () => {
    const text = JSON.stringify({ ...officialPsrBody(), access_id: v2.accessId }).replace('"X":[[25,2,76', '"X":[[25,NaN,76');
    const r = await v2.post("psr", text);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const flat = (await v2.settle(r.body)).body;
    expect(flat.relevance[0]).toEqual([null]);
  });
});
