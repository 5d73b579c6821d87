/**
 * The v3 API over loopback HTTP (no mocks): receipts, envelopes, experiments, single fields, the
 * quickstart gold vectors, and every refusal with its status and JSON error shape.
 */
import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorBodySchema, ExperimentReceiptSchema, ReceiptSchema } from "../../src/api/schemas.js";
import type { LocalService } from "../../src/service/index.js";
import { close, column, Client, gold, goldCase, quickstart, start } from "./helpers.js";

let service: LocalService;
let client: Client;

beforeAll(async () => {
  ({ service, client } = await start({ maxFieldBytes: 300 }));
});
afterAll(() => service.close());

const resultPath = (r: { job_id: number; job_code: string }) => `/v3/results/${r.job_id}/${r.job_code}`;

function expectError(reply: { status: number; body: any }, status: number, error: string, field?: string) {
  expect(reply.status, JSON.stringify(reply.body)).toBe(status);
  expect(ErrorBodySchema.safeParse(reply.body).success, JSON.stringify(reply.body)).toBe(true);
  expect(reply.body.error).toBe(error);
  expect(reply.body.status_code).toBe(status);
  if (field !== undefined) expect(reply.body.field).toBe(field);
}

describe("POST and results: the quickstart 7x5 gold vectors", () => {
  it("Grid: receipt, then the envelope with the published composite", async () => {
    const receipt = await client.post("/v3/grid", quickstart());
    expect(receipt.status).toBe(200);
    expect(ReceiptSchema.parse(receipt.body)).toEqual({ job_id: receipt.body.job_id, job_code: receipt.body.job_code });
    expect(receipt.body.job_code).toMatch(/^[0-9a-f]{16}$/);

    const done = await client.poll(resultPath(receipt.body));
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ job_id: receipt.body.job_id, job_code: receipt.body.job_code, status: "completed" });
    const { results } = done.body;
    const want = goldCase("grid default").expect;
    close(results.yhat, want.yhat);
    close(results.fit, want.fit);
    close(results.adjusted_fit, want.adjusted_fit);
    close(results.yhat_linear, want.yhat_linear);
    close(column(results.prediction_weights.weights), want.weights);
    expect(results.insights["Impact on Fit"]).toHaveLength(5);
    expect(results.insights["Impact on Prediction"]).toHaveLength(5);
    expect(results.insights["Impact on Fit"]).toEqual(results.grid_insights.impact_on_fit);
    // read to six decimals
    const decimals = (v: number) => (String(v).split(".")[1] ?? "").length;
    expect(Math.max(...results.insights.relevance.map(decimals))).toBeLessThanOrEqual(6);

    // the same resource under /jobs and under the /v3/prediction-engine prefix
    const again = await client.get(`/v3/prediction-engine/jobs/${receipt.body.job_id}/${receipt.body.job_code}`);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(done.body);
  });

  it("PSR: scores and the threshold sweep", async () => {
    const scores = goldCase("scores").expect;
    const a = await client.run("psr", quickstart({ options: { threshold: [0] } }));
    expect(a.status).toBe(200);
    close(a.body.results.insights.relevance, scores.relevance);
    close(a.body.results.insights.similarity, scores.similarity);
    close(a.body.results.insights.info_x, scores.info_x);
    close(a.body.results.insights.info_theta, scores.info_theta);
    expect(a.body.results.insights["Impact on Fit"]).toBeUndefined();

    const sweep = goldCase("psr thresholds sweep");
    const b = await client.run("psr", quickstart({ options: sweep.options }));
    close(b.body.results.yhat, sweep.expect.yhat);
    close(b.body.results.fit, sweep.expect.fit);
    close(b.body.results.adjusted_fit, sweep.expect.adjusted_fit);
  });

  it("MaxFit: the published winner", async () => {
    const c = goldCase("maxfit default");
    const r = await client.run("maxfit", quickstart({ options: c.options }));
    expect(r.body.results.censor_type).toEqual([c.expect.censor_type]);
    close(r.body.results.thresholds, c.expect.threshold);
    close(r.body.results.yhat, c.expect.yhat);
    close(r.body.results.fit, c.expect.fit);
  });

  it("takes the v2 option names, in options or at the top level, as the v3 ones", async () => {
    const c = goldCase("psr relevance t=0.8");
    const v3 = await client.run("psr", quickstart({ options: c.options }));
    const v2 = await client.run("psr", quickstart({ threshold: [0.8], eval_type: "relevance", is_threshold_percent: true, most_eval: true }));
    expect(v2.body.results).toEqual(v3.body.results);
    close(column(v3.body.results.prediction_weights.weights), c.expect.weights);
  });

  it("reports ignored keys and the default theta on the receipt", async () => {
    const { theta: _theta, ...noTheta } = quickstart();
    const r = await client.post("/v3/grid", { ...noTheta, colour: "blue", options: { frobnicate: 1 } });
    expect(r.status).toBe(200);
    expect(r.body.theta_source).toBe("last_row_of_X");
    expect(r.body.warnings.join(" ")).toContain("colour");
    expect(r.body.warnings.join(" ")).toContain("frobnicate");
  });
});

describe("experiments", () => {
  it("several theta rows: one job per row, compact yhat and fit per row, one unit per row", async () => {
    const before = (await client.get("/v3/quota")).body;
    const thetas = [gold.inputs.theta, gold.inputs.X[0], gold.inputs.X[3]];
    const r = await client.post("/v3/psr", quickstart({ theta: thetas, options: { threshold: [0, 0.5] } }));
    expect(r.status).toBe(200);
    const receipt = ExperimentReceiptSchema.parse(r.body);
    expect(r.body.n_rows).toBe(3);
    expect(receipt.jobs.map((j) => j.row)).toEqual([0, 1, 2]);
    expect(receipt.experiment_code).toMatch(/^[0-9a-f]{16}$/);

    const parent = await client.poll(`/v3/experiments/${receipt.experiment_id}/${receipt.experiment_code}`);
    expect(parent.status).toBe(200);
    expect(parent.body).toMatchObject({ experiment_id: receipt.experiment_id, status: "completed", n_rows: 3 });
    for (const [i, row] of parent.body.rows.entries()) {
      const child = await client.get(resultPath(receipt.jobs[i]));
      expect(child.status).toBe(200);
      expect(row).toMatchObject({ row: i, job_id: receipt.jobs[i].job_id, status: "completed" });
      expect(row.yhat).toEqual(child.body.results.yhat);
      expect(row.fit).toEqual(child.body.results.fit);
      expect(row.yhat).toHaveLength(2);
    }
    const after = (await client.get("/v3/quota")).body;
    expect(after.used - before.used).toBe(3);
  });

  it("a failed experiment: every row failed with its reason", async () => {
    const X = gold.inputs.X.map((row) => [...row, row[0]]); // a duplicate column: singular covariance
    const r = await client.post("/v3/psr", {
      y: gold.inputs.y,
      X,
      theta: [
        [...gold.inputs.theta, 24],
        [...gold.inputs.X[1], 29],
      ],
    });
    expect(r.status).toBe(200);
    const parent = await client.poll(`/v3/experiments/${r.body.experiment_id}/${r.body.experiment_code}`);
    expect(parent.status).toBe(200);
    expect(parent.body.status).toBe("failed");
    for (const row of parent.body.rows) {
      expect(row).toMatchObject({ status: "failed", yhat: null, fit: null, error_code: 3 });
      expect(row.message).toContain("pseudoinverse");
    }
  });
});

describe("failed jobs", () => {
  it("409 with the reason when the computation cannot go on", async () => {
    const X = gold.inputs.X.map((row) => [...row, 2 * row[1]]);
    const r = await client.run("psr", { y: gold.inputs.y, X, theta: [...gold.inputs.theta, 10] });
    expect(r.status).toBe(409);
    expect(r.body).toMatchObject({ status: "failed", error: "job_failed", status_code: 10, error_code: 3 });
    expect(r.body.message).toContain("pseudoinverse");
    expect(ErrorBodySchema.safeParse(r.body).success).toBe(true);
    const field = await client.get(`/v3/jobs/${r.body.job_id}/${r.body.job_code}/yhat`);
    expect(field.status).toBe(409);
  });
});

describe("single fields", () => {
  let receipt: { job_id: number; job_code: string };
  let results: any;
  const field = (path: string) => client.get(`/v3/jobs/${receipt.job_id}/${receipt.job_code}/${path}`);

  beforeAll(async () => {
    receipt = (await client.post("/v3/grid", quickstart())).body;
    results = (await client.poll(resultPath(receipt))).body.results;
  });

  it("insights/relevance", async () => {
    const r = await field("insights/relevance");
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ field: "insights/relevance", json_path: "$.results.insights.relevance", shape: [7], values: results.insights.relevance });
  });

  it("insights/Impact on Fit, spaces encoded or as the snake_case alias", async () => {
    const r = await field("insights/Impact%20on%20Fit");
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ field: "insights/Impact on Fit", json_path: "$.results.insights['Impact on Fit']", shape: [5] });
    expect(r.body.values).toEqual(results.insights["Impact on Fit"]);
    const alias = await field("insights/impact_on_fit");
    expect(alias.status).toBe(200);
    expect(alias.body.json_path).toBe("$.results.insights['Impact on Fit']");
    expect(alias.body.values).toEqual(r.body.values);
    const prediction = await field("insights/Impact%20on%20Prediction");
    expect(prediction.body.values).toEqual(results.grid_insights.impact_on_prediction);
  });

  it("yhat, matrices, scalars, array elements", async () => {
    expect((await field("yhat")).body).toEqual({ field: "yhat", json_path: "$.results.yhat", shape: [1], values: results.yhat });
    const weights = await field("prediction_weights/weights");
    expect(weights.body.shape).toEqual([7, 1]);
    const n = await field("n_observations");
    expect(n.body).toMatchObject({ shape: [], values: 7 });
    const cell = await field("prediction_weights/weights/3/0");
    expect(cell.body).toMatchObject({ json_path: "$.results.prediction_weights.weights[3][0]", shape: [], values: results.prediction_weights.weights[3][0] });
  });

  it("404 for an unknown field, naming what exists at the deepest valid prefix", async () => {
    const r = await field("insights/relevence");
    expectError(r, 404, "not_found", "insights/relevence");
    expect(r.body.valid_prefix).toBe("insights");
    expect(r.body.available).toContain("relevance");
    expect((await field("YHAT")).status).toBe(404); // case-sensitive
  });

  it("413 above the field size limit, naming smaller parts", async () => {
    const r = await field("insights");
    expectError(r, 413, "field_too_large", "insights");
    expect(r.body.limit).toBe(300);
    expect(r.body.bytes).toBeGreaterThan(300);
    expect(r.body.shape).toBeNull();
    expect(r.body.smaller_fields).toContain("insights/relevance");
    expect(r.body.message).toContain("insights/Impact on Fit");
    expect((await field("insights/relevance")).status).toBe(200);
  });
});

describe("refusals: one JSON error shape, never a 5xx for bad input", () => {
  it("400 for malformed JSON", async () => {
    expectError(await client.post("/v3/grid", '{"y": [1, 2'), 400, "malformed_json", "body");
    expectError(await client.post("/v3/grid", ""), 400, "malformed_json");
  });

  it("422 for invalid values and forbidden combinations, naming the field", async () => {
    expectError(await client.post("/v3/grid", "[1, 2]"), 422, "invalid_input", "body");
    expectError(await client.post("/v3/grid", { X: gold.inputs.X }), 422, "invalid_input", "y");
    expectError(await client.post("/v3/psr", quickstart({ theta: [1, 2, 3] })), 422, "invalid_input", "theta");
    expectError(await client.post("/v3/psr", quickstart({ options: { censor_type: "both" } })), 422, "invalid_input", "options.censor_type");
    expectError(await client.post("/v3/psr", quickstart({ options: { censor_operator: "ge" } })), 422, "invalid_input", "options.censor_operator");
    const combi = await client.post("/v3/grid", quickstart({ options: { required_attributes: [1, 0, 0, 0, 0], attribute_combi: [[1, 1, 0, 0, 0]] } }));
    expectError(combi, 422, "invalid_input");
    expect(combi.body.message).toContain("attribute_combi");
    const both = await client.post("/v3/psr", quickstart({ options: { censor_type: "relevance", eval_type: "similarity" } }));
    expectError(both, 422, "invalid_input");
    expect(both.body.field).toContain("censor_type");
    expect(both.body.field).toContain("eval_type");
    expect(both.body.details[0].expected).toBeTypeOf("string");
  });

  it("413 for a body over the limit (10 MiB), also when it arrives in chunks without a length", async () => {
    const big = JSON.stringify({ access_id: client.accessId, y: [], X: [], pad: "x".repeat(11 * 1024 * 1024) });
    expectError(await client.post("/v3/grid", big), 413, "payload_too_large");

    // chunked, without Content-Length
    let sent = 0;
    const chunk = new TextEncoder().encode(" ".repeat(1024 * 1024));
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 12) controller.close();
        else {
          sent++;
          controller.enqueue(chunk);
        }
      },
    });
    const res = await fetch(`${service.url}/v3/grid`, {
      method: "POST",
      headers: { "x-api-key": client.apiKey!, "content-type": "application/json" },
      body: stream,
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: string }).error).toBe("payload_too_large");

    // refused while streaming: the 413 arrives although the request body has not ended
    const early = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(`${service.url}/v3/psr`, { method: "POST", headers: { "x-api-key": client.apiKey!, "transfer-encoding": "chunked" } }, (res) => {
        let body = "";
        res.on("data", (c) => (body += c));
        res.on("end", () => {
          resolve({ status: res.statusCode!, body });
          req.destroy();
        });
      });
      req.on("error", reject);
      const mib = Buffer.alloc(1024 * 1024, 32);
      for (let i = 0; i < 11; i++) req.write(mib);
      // no req.end(): the client is still "sending"
    });
    expect(early.status).toBe(413);
    expect(JSON.parse(early.body).error).toBe("payload_too_large");
  });

  it("404 for unknown jobs, codes and routes; 405 for a wrong method", async () => {
    const receipt = (await client.post("/v3/psr", quickstart())).body;
    expectError(await client.get(`/v3/results/${receipt.job_id}/0000000000000000`), 404, "not_found");
    expectError(await client.get(`/v3/results/999999/${receipt.job_code}`), 404, "not_found");
    expectError(await client.get(`/v3/results/abc/${receipt.job_code}`), 404, "not_found");
    expectError(await client.get(`/v3/experiments/1/0000000000000000`), 404, "not_found");
    expectError(await client.get(`/v3/nothing`), 404, "not_found");
    const wrong = await client.get("/v3/grid");
    expectError(wrong, 405, "method_not_allowed");
    expect(wrong.headers.get("allow")).toBe("POST");
  });

  it("refused POSTs cost nothing, and odd bodies never give a 5xx", async () => {
    const before = (await client.get("/v3/quota")).body.used;
    const bodies: unknown[] = [
      "null",
      "42",
      '"text"',
      "{}",
      { y: "abc", X: [[1]] },
      { y: [1, 2, 3], X: [[1], [2], [null]] },
      { y: [1, 2, 3], X: [[1, 2], [3]] },
      { y: [1, 2, 3, 4], X: [[1], [2], [3], [4]], theta: [[1], [2, 3]] },
      { y: [1, 2, 3, 4], X: [[1], [2], [3], [4]], theta: [1], options: "fast" },
      { y: [1, 2, 3, 4], X: [[1], [2], [3], [4]], theta: [1], options: { threshold: "high" } },
      { y: [1, 2, 3, 4], X: [[1], [2], [3], [4]], theta: [1], options: { threshold: [] } },
      { y: [1, 2, 3, 4], X: [[1], [2], [3], [4]], theta: [1], options: { min_k: 9 } },
      { y: [1e308, 1e308, 1, 2], X: [[1], [2], [3], [4]], theta: [1] },
      { y: [1, 2, 3, 4], X: [[1], [2], [3], [4]], theta: [1], options: { attribute_combi: [[2]] } },
      { y: [1, 2, 3, 4], X: [[1], [2], [3], [4]], theta: [1], options: { seed: -1, max_iter: 0 } },
      { access_id: 7, y: [1, 2], X: [[1], [2]] },
    ];
    let accepted = 0;
    for (const body of bodies) {
      for (const analysis of ["grid", "psr", "maxfit"]) {
        const r = await client.post(`/v3/${analysis}`, body);
        expect(r.status, `${analysis} ${JSON.stringify(body)}: ${JSON.stringify(r.body)}`).toBeLessThan(500);
        if (r.status === 200) {
          accepted++;
          await client.poll(resultPath(r.body)); // accepted: it must finish one way or the other
        } else {
          expect(ErrorBodySchema.safeParse(r.body).success, JSON.stringify(r.body)).toBe(true);
        }
      }
    }
    const after = (await client.get("/v3/quota")).body.used;
    expect(after - before).toBe(accepted);
    expect(accepted).toBeLessThan(bodies.length * 3);
  });
});
