/**
 * Jobs on the worker pool, seen over HTTP: a Grid over its time limit fails with its reason while
 * other jobs complete, the HTTP loop answers while Grids run, and queued/running show as 202.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalService } from "../../src/service/index.js";
import { Client, quickstart, start, synthetic } from "./helpers.js";

let service: LocalService;
let client: Client;

// A Grid of 16383 combinations x 10 thresholds on 10,000 rows (3.3e9 cell-observations, over the
// default maxWork, raised below): several seconds even spread over both workers, far over the limit
// however fast the engine gets here.
const slow = (() => {
  const { y, X } = synthetic(10_000, 14, 7);
  return { y, X, theta: X[0], options: { max_iter: 16383, threshold: [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9] } };
})();
const LIMIT_MS = 1500;

beforeAll(async () => {
  ({ service, client } = await start({ workers: 2, jobTimeoutMs: LIMIT_MS, limits: { maxWork: 1e10 } }));
});
afterAll(() => service.close());

const path = (r: { job_id: number; job_code: string }) => `/v3/results/${r.job_id}/${r.job_code}`;

async function waitFor(p: string, status: string): Promise<any> {
  for (let i = 0; i < 500; i++) {
    const r = await client.get(p);
    if (r.body.status === status) return r;
    await new Promise((res) => setTimeout(res, 10));
  }
  throw new Error(`${p} never became ${status}`);
}

describe("execution on the worker pool", () => {
  it("a Grid over the time limit fails with its reason while other jobs complete; HTTP stays responsive", async () => {
    const receipt = (await client.post("/v3/grid", slow)).body;
    const running = await waitFor(path(receipt), "running");
    expect(running.status).toBe(202);
    expect(running.body).toMatchObject({ job_id: receipt.job_id, job_code: receipt.job_code, status: "running", status_code: 10, error_code: 0 });
    expect(running.body.error).toBeUndefined();
    expect(running.headers.get("retry-after")).toBe("1");
    expect((await client.get(`/v3/jobs/${receipt.job_id}/${receipt.job_code}/yhat`)).status).toBe(202);

    // the event loop answers at once while the Grid computes
    const t0 = performance.now();
    expect((await client.get("/v3/quota")).status).toBe(200);
    expect(performance.now() - t0).toBeLessThan(500);

    // other jobs complete on the other worker meanwhile
    for (let i = 0; i < 3; i++) expect((await client.run("psr", quickstart())).status).toBe(200);
    expect((await client.get(path(receipt))).status).toBe(202);

    const failed = await client.poll(path(receipt));
    expect(failed.status).toBe(409);
    expect(failed.body).toMatchObject({ status: "failed", error: "job_failed", error_code: 2, status_code: 10 });
    expect(failed.body.message).toContain(`exceeded its time limit of ${LIMIT_MS / 1000} s`);

    // the stopped worker was replaced
    expect((await client.run("grid", quickstart())).status).toBe(200);
  });

  it("jobs wait in order while every worker is busy, shown as queued (status_code 1)", async () => {
    const a = (await client.post("/v3/grid", slow)).body;
    const b = (await client.post("/v3/grid", slow)).body;
    const c = (await client.post("/v3/psr", quickstart())).body;
    await waitFor(path(a), "running");
    await waitFor(path(b), "running");
    const queued = await client.get(path(c));
    expect(queued.status).toBe(202);
    expect(queued.body).toMatchObject({ status: "queued", status_code: 1, error_code: 0 });
    expect((await client.poll(path(c))).status).toBe(200);
    expect((await client.poll(path(a))).status).toBe(409);
    expect((await client.poll(path(b))).status).toBe(409);
  });

  it("an experiment answers 202 until every row is done", async () => {
    const body = { ...slow, theta: [slow.X[0], slow.X[1]], options: { ...slow.options } };
    const receipt = (await client.post("/v3/grid", body)).body;
    const first = await client.get(`/v3/experiments/${receipt.experiment_id}/${receipt.experiment_code}`);
    expect(first.status).toBe(202);
    expect(first.body.status).toBe("running");
    expect(first.headers.get("retry-after")).toBe("1");
    const last = await client.poll(`/v3/experiments/${receipt.experiment_id}/${receipt.experiment_code}`);
    expect(last.status).toBe(200);
    expect(last.body.status).toBe("failed");
    expect(last.body.rows.map((r: { message: string }) => r.message)).toEqual([expect.stringContaining("time limit"), expect.stringContaining("time limit")]);
  });
});
