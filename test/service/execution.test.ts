/**
 * Jobs on the worker pool, seen over HTTP: the HTTP loop answers and other jobs complete while a
 * Grid runs, a Grid over its time limit fails with its reason, and queued/running show as 202.
 * Nothing here races a clock: "while it runs" is checked on a service whose limit is far away.
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

async function waitFor(p: string, status: string, by: Client = client): Promise<any> {
  for (let i = 0; i < 500; i++) {
    const r = await by.get(p);
    if (r.body.status === status) return r;
    await new Promise((res) => setTimeout(res, 10));
  }
  throw new Error(`${p} never became ${status}`);
}

describe("execution on the worker pool", () => {
  it("while a Grid runs, HTTP answers and other jobs complete on the other worker", async () => {
    // A service whose time limit the Grid cannot reach during the test, however loaded the machine:
    // "while it runs" is then a fact of the job's state, not a race with its limit.
    const patient = await start({ workers: 2, jobTimeoutMs: 600_000, limits: { maxWork: 1e10 } });
    try {
      const c = patient.client;
      const receipt = (await c.post("/v3/grid", slow)).body;
      const running = await waitFor(path(receipt), "running", c);
      expect(running.status).toBe(202);
      expect(running.body).toMatchObject({ job_id: receipt.job_id, job_code: receipt.job_code, status: "running", status_code: 10, error_code: 0 });
      expect(running.body.error).toBeUndefined();
      expect(running.headers.get("retry-after")).toBe("1");
      expect((await c.get(`/v3/jobs/${receipt.job_id}/${receipt.job_code}/yhat`)).status).toBe(202);

      // the event loop answers while the Grid computes: the quota's answer comes before the job's end
      expect((await c.get("/v3/quota")).status).toBe(200);
      expect((await c.get(path(receipt))).status).toBe(202);

      // other jobs complete on the other worker meanwhile
      for (let i = 0; i < 3; i++) expect((await c.run("psr", quickstart())).status).toBe(200);
      expect((await c.get(path(receipt))).status).toBe(202);
    } finally {
      await patient.service.close();
    }
  }, 120_000);

  it("a Grid over the time limit fails with its reason; the stopped worker is replaced", async () => {
    const receipt = (await client.post("/v3/grid", slow)).body;
    const failed = await client.poll(path(receipt), 120_000);
    expect(failed.status).toBe(409);
    expect(failed.body).toMatchObject({ status: "failed", error: "job_failed", error_code: 2, status_code: 10 });
    expect(failed.body.message).toContain(`exceeded its time limit of ${LIMIT_MS / 1000} s`);

    // the stopped worker was replaced
    expect((await client.run("grid", quickstart())).status).toBe(200);
  }, 120_000);

  it("jobs wait while every worker is busy, shown as queued (status_code 1)", async () => {
    // on a service whose limit the Grids cannot reach during the test: the workers stay busy
    const patient = await start({ workers: 2, jobTimeoutMs: 600_000, limits: { maxWork: 1e10 } });
    try {
      const c = patient.client;
      const a = (await c.post("/v3/grid", slow)).body;
      const b = (await c.post("/v3/grid", slow)).body;
      const quick = (await c.post("/v3/psr", quickstart())).body;
      await waitFor(path(a), "running", c);
      await waitFor(path(b), "running", c);
      const queued = await c.get(path(quick));
      expect(queued.status).toBe(202);
      expect(queued.body).toMatchObject({ status: "queued", status_code: 1, error_code: 0 });
    } finally {
      await patient.service.close();
    }
  }, 120_000);

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
  }, 120_000);
});
