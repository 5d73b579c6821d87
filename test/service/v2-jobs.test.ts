/**
 * v2 GET /results while jobs run (docs/api.md section 3): the long-poll (a slow job answered when it
 * finishes, in one GET), the running and queued bodies (200, status_code 10 / 1, error_code 0,
 * statusMsg, no yhat, no error key), a job over its time limit (error_code 2), and a caller that
 * goes away during the long-poll.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalService } from "../../src/service/index.js";
import { start, synthetic } from "./helpers.js";
import { send, V2, V2Client } from "./v2-helpers.js";

// About a second of Grid (2047 combinations x 10 thresholds on 2000 rows).
const slow = (() => {
  const { y, X } = synthetic(2000, 11, 7);
  return { y: y.map((v) => [v]), X, theta: [X[0]], threshold: [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9], max_iter: 4095 };
})();
/**
 * A Grid of 10,000 rows x 16,383 combinations x 10 thresholds x 2 censors (3.3e9 cell-observations,
 * over the default maxWork, raised below): several seconds on one worker, however fast the engine
 * gets here, so it always runs into the 1.5 s limit (2,000 rows stopped doing so once the engine
 * took 1.5 s for them).
 */
const slower = (() => {
  const { y, X } = synthetic(10_000, 14, 7);
  return { y: y.map((v) => [v]), X, theta: [X[0]], threshold: [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9], max_iter: 16383 };
})();
const quick = (() => {
  const { y, X } = synthetic(40, 3, 3);
  return { y: y.map((v) => [v]), X, theta: [X[0]], threshold: [0.5] };
})();

describe("long-poll (v2LongPollMs 20 s)", () => {
  let service: LocalService;
  let v2: V2Client;
  beforeAll(async () => {
    ({ service } = await start({ workers: 1, v2LongPollMs: 20_000 }));
    v2 = new V2Client(service.url, service.credentials.apiKey, service.credentials.accessId);
  });
  afterAll(() => service.close());

  it("a slow job is answered by one GET, held open until the job finishes", async () => {
    const post = await v2.post("grid", slow);
    expect(post.status, JSON.stringify(post.body)).toBe(200);
    const r = await v2.results({ job_id: post.body.job_id, job_code: post.body.job_code });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ job_id: post.body.job_id, status_code: 11, error_code: 0 });
    expect(r.body.yhat[0][0]).toEqual(expect.any(Number));
    // (that the read is held until the job ends, not answered at once, is shown without a clock in
    // v2-long-poll.test.ts, on a job that cannot end before the test releases it)
  });

  it("a caller that goes away during the long-poll leaves the service working", async () => {
    const post = await v2.post("grid", slow);
    const abort = new AbortController();
    const pending = send(
      "GET",
      `${service.url}${V2}/results`,
      { "x-api-key": v2.apiKey! },
      { job_id: post.body.job_id, job_code: post.body.job_code },
      { signal: abort.signal },
    ).catch((e: unknown) => e);
    // a round trip after the GET was sent, then the caller goes away (no fixed sleep)
    expect((await v2.get("/v3/quota")).status).toBe(200);
    abort.abort();
    expect(await pending).toBeInstanceOf(Error);
    const r = await v2.results({ job_id: post.body.job_id, job_code: post.body.job_code });
    expect(r.body.status_code).toBe(11);
  });
});

describe("running, queued and timed-out jobs (v2LongPollMs 150 ms, one worker, 1.5 s limit)", () => {
  let service: LocalService;
  let v2: V2Client;
  beforeAll(async () => {
    ({ service } = await start({ workers: 1, v2LongPollMs: 150, jobTimeoutMs: 1500, limits: { maxWork: 1e10 } }));
    v2 = new V2Client(service.url, service.credentials.apiKey, service.credentials.accessId);
  });
  afterAll(() => service.close());

  it("running: 200, status_code 10, error_code 0, statusMsg, no yhat, no error; queued: status_code 1; over the limit: error_code 2", async () => {
    const running = await v2.post("grid", slower);
    const queued = await v2.post("psr", quick);
    expect(running.status).toBe(200);
    expect(queued.status).toBe(200);

    // queued (status_code 1) while the worker starts, then running (10); each GET is held 150 ms
    let a = await v2.results({ job_id: running.body.job_id, job_code: running.body.job_code });
    for (let i = 0; i < 100 && a.body.status_code === 1; i++) a = await v2.results({ job_id: running.body.job_id, job_code: running.body.job_code });
    expect(a.status).toBe(200);
    expect(a.body).toEqual({ job_id: running.body.job_id, job_code: running.body.job_code, status_code: 10, error_code: 0, statusMsg: "PROCESSING" });

    const b = await v2.results({ job_id: queued.body.job_id, job_code: queued.body.job_code });
    expect(b.body).toEqual({ job_id: queued.body.job_id, job_code: queued.body.job_code, status_code: 1, error_code: 0, statusMsg: "PROCESSING" });

    const failed = await v2.settle(running.body);
    expect(failed.body).toMatchObject({ job_id: running.body.job_id, status_code: 10, error_code: 2, error: "process_job" });
    expect(failed.body.message).toContain("time limit");
    expect(failed.body.yhat).toBeUndefined();

    const done = await v2.settle(queued.body);
    expect(done.body.status_code).toBe(11);
    expect(done.body.yhat).toHaveLength(1);
  });

  it("v3 sees the same job states (202 running, 409 failed)", async () => {
    const post = await v2.post("grid", slower);
    const r3 = await send("GET", `${service.url}/v3/results/${post.body.job_id}/${post.body.job_code}`, { "x-api-key": v2.apiKey! });
    expect(r3.status).toBe(202);
    const failed = await v2.settle(post.body);
    expect(failed.body.error_code).toBe(2);
    const f3 = await send("GET", `${service.url}/v3/results/${post.body.job_id}/${post.body.job_code}`, { "x-api-key": v2.apiKey! });
    expect(f3.status).toBe(409);
    expect(f3.body.error_code).toBe(2);
  });
});
