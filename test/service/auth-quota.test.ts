/**
 * Credentials, isolation between organisations, and quota, over HTTP with a credentials file.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorBodySchema } from "../../src/api/schemas.js";
import type { LocalService } from "../../src/service/index.js";
import { Client, quickstart, start, tempDir, writeCredentials } from "./helpers.js";

const KEYS = { a: "key-of-org-a-0123456789", b: "key-of-org-b-9876543210", c: "key-of-org-c-5555555555" };
const dir = tempDir();
const logs: string[] = [];
let service: LocalService;
let a: Client;
let b: Client;
let c: Client;

beforeAll(async () => {
  const file = writeCredentials(dir.path, [
    { name: "a", api_key: KEYS.a, plan: { quota: 3 }, users: [{ access_id: "alice" }, { access_id: "old-al", expires: "2020-01-01T00:00:00Z" }] },
    { name: "b", api_key: KEYS.b, plan: { quota: 100 }, users: [{ access_id: "bob" }] },
    { name: "c", api_key: KEYS.c, plan: { quota: 5 }, users: [{ access_id: "carol" }] },
  ]);
  ({ service } = await start({ credentialsFile: file, log: (line) => logs.push(line) }));
  expect(service.credentials).toMatchObject({ apiKey: KEYS.a, accessId: "alice", source: "file" });
  a = new Client(service.url, KEYS.a, "alice");
  b = new Client(service.url, KEYS.b, "bob");
  c = new Client(service.url, KEYS.c, "carol");
});
afterAll(async () => {
  await service.close();
  dir.remove();
});

function expectRefusal(r: { status: number; body: any }, status: number, error: string) {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(ErrorBodySchema.safeParse(r.body).success).toBe(true);
  expect(r.body.error).toBe(error);
  expect(JSON.stringify(r.body)).not.toContain("key-of-org");
}

describe("authentication", () => {
  it("401 without x-api-key, 403 with an unknown key, on every route", async () => {
    for (const path of ["/v3/quota", "/v3/results/1/0123456789abcdef", "/v3/jobs/1/0123456789abcdef/yhat", "/v3/experiments/1/0123456789abcdef"]) {
      expectRefusal(await a.get(path, null), 401, "unauthorized");
      expectRefusal(await a.get(path, "not-a-key"), 403, "forbidden");
    }
    expectRefusal(await a.post("/v3/grid", quickstart(), null), 401, "unauthorized");
    expectRefusal(await a.post("/v3/grid", quickstart(), "not-a-key"), 403, "forbidden");
  });

  it("403 for an access_id that is missing, another organisation's, unknown or expired", async () => {
    expectRefusal(await a.post("/v3/psr", { ...quickstart(), access_id: undefined }), 403, "forbidden");
    expectRefusal(await a.post("/v3/psr", { ...quickstart(), access_id: "bob" }), 403, "forbidden");
    expectRefusal(await a.post("/v3/psr", { ...quickstart(), access_id: "mallory" }), 403, "forbidden");
    const expired = await a.as(KEYS.a, "old-al").post("/v3/psr", quickstart());
    expectRefusal(expired, 403, "forbidden");
    expect(expired.body.message).toContain("expired");
    expect(expired.body.field).toBe("access_id");
  });

  it("a job and an experiment are visible only to their own organisation", async () => {
    const job = (await b.post("/v3/psr", quickstart())).body;
    const done = await b.poll(`/v3/results/${job.job_id}/${job.job_code}`);
    expect(done.status).toBe(200);
    expectRefusal(await c.get(`/v3/results/${job.job_id}/${job.job_code}`), 404, "not_found");
    expectRefusal(await c.get(`/v3/jobs/${job.job_id}/${job.job_code}/yhat`), 404, "not_found");
    const experiment = (await b.post("/v3/psr", quickstart({ theta: [quickstart().theta, quickstart().theta] }))).body;
    expect((await b.poll(`/v3/experiments/${experiment.experiment_id}/${experiment.experiment_code}`)).status).toBe(200);
    expectRefusal(await c.get(`/v3/experiments/${experiment.experiment_id}/${experiment.experiment_code}`), 404, "not_found");
  });

  it("never logs keys or access ids", () => {
    expect(logs.length).toBeGreaterThan(0);
    for (const line of logs) {
      for (const secret of [...Object.values(KEYS), "alice", "bob", "carol"]) expect(line).not.toContain(secret);
    }
  });
});

describe("quota", () => {
  it("one unit per POST, one per theta row of an experiment; 429 with what remains; refusals cost nothing", async () => {
    expect((await a.get("/v3/quota")).body).toEqual({ quota: 3, used: 0, remaining: 3, unit: "prediction_task" });
    expect((await a.post("/v3/psr", quickstart())).status).toBe(200);
    expect((await a.post("/v3/psr", quickstart({ options: { censor_type: "both" } }))).status).toBe(422);
    expect((await a.post("/v3/psr", "{oops")).status).toBe(400);
    expect((await a.get("/v3/quota")).body.remaining).toBe(2);

    const three = quickstart({ theta: [quickstart().theta, quickstart().theta, quickstart().theta] });
    const refused = await a.post("/v3/psr", three);
    expectRefusal(refused, 429, "quota_exceeded");
    expect(refused.body).toMatchObject({ remaining: 2, required: 3, quota: 3, used: 1 });
    expect((await a.get("/v3/quota")).body.remaining).toBe(2);

    const two = quickstart({ theta: [quickstart().theta, quickstart().theta] });
    expect((await a.post("/v3/psr", two)).status).toBe(200);
    const empty = await a.post("/v3/psr", quickstart());
    expectRefusal(empty, 429, "quota_exceeded");
    expect(empty.body.remaining).toBe(0);
    expect(empty.body.message).toContain("Limit Exceeded");
    // invalid input is reported as such, before quota
    expect((await a.post("/v3/psr", quickstart({ theta: [1] }))).status).toBe(422);
    // reads stay free
    expect((await a.get("/v3/quota")).body).toEqual({ quota: 3, used: 3, remaining: 0, unit: "prediction_task" });
    expect((await b.get("/v3/quota")).body.remaining).toBeGreaterThan(90);
  });

  it("concurrent POSTs never overspend", async () => {
    const replies = await Promise.all(Array.from({ length: 12 }, () => c.post("/v3/psr", quickstart())));
    const statuses = replies.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(7);
    expect((await c.get("/v3/quota")).body).toMatchObject({ used: 5, remaining: 0 });
  });
});
