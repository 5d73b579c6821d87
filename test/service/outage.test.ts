/**
 * Outages said as they are (src/service/outage.ts, docs/limits.md "When the store is down"): with
 * the store unreachable, every route that needs it answers 503 `store_unavailable` with
 * Retry-After and a message naming the store and the real cause, reads included; never a 500,
 * never "too many open files" for a refused connection, nothing charged; and the service
 * recovers when the store is back. Two stores: a real PostgreSQL server stopped mid-test
 * (test/pg-server.ts), and a file store whose data dir is removed.
 */
import { renameSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalService, type LocalService } from "../../src/service/index.js";
import { postgresBin, startPostgres, type PostgresServer } from "../pg-server.js";
import { Client, quickstart, tempDir, type Reply } from "./helpers.js";

interface Fixture {
  service: LocalService;
  client: Client;
  job: { id: number; code: string };
  experiment: { id: number; code: string };
  uploadUrl: string;
  logs: string[];
}

/** A service with one finished job, one finished experiment and an upload URL, its log kept. */
async function fixture(options: { dataDir?: string; database?: string }): Promise<Fixture> {
  const logs: string[] = [];
  const service = await startLocalService({ port: 0, workers: 1, migrate: options.database !== undefined, ...options, log: (l) => logs.push(l) });
  const client = new Client(service.url, service.credentials.apiKey, service.credentials.accessId);
  const done = await client.run("psr", quickstart());
  expect(done.status).toBe(200);
  const posted = await client.post("/v3/psr", quickstart({ theta: [quickstart().theta, quickstart().theta] }));
  expect(posted.status, JSON.stringify(posted.body)).toBe(200);
  const experiment = { id: posted.body.experiment_id, code: posted.body.experiment_code };
  await client.poll(`/v3/experiments/${experiment.id}/${experiment.code}`);
  const url = await client.get("/v2/prediction-engine/payload/upload/url/X?file_name=a.json");
  expect(url.status).toBe(200);
  return { service, client, job: { id: done.body.job_id, code: done.body.job_code }, experiment, uploadUrl: url.body.url, logs };
}

/** Every route that reads or writes the store, as [name, request]. */
function routes(f: Fixture): Array<[string, () => Promise<Reply>]> {
  const { client, job, experiment } = f;
  const j = `${job.id}/${job.code}`;
  return [
    ["GET /v3/quota", () => client.get("/v3/quota")],
    ["POST /v3/psr", () => client.post("/v3/psr", quickstart())],
    ["POST /v3/grid (experiment)", () => client.post("/v3/grid", quickstart({ theta: [quickstart().theta, quickstart().theta] }))],
    ["GET /v3/results", () => client.get(`/v3/results/${j}`)],
    ["GET /v3/jobs", () => client.get(`/v3/jobs/${j}`)],
    ["GET /v3/jobs field", () => client.get(`/v3/jobs/${j}/yhat`)],
    ["GET /v3/experiments", () => client.get(`/v3/experiments/${experiment.id}/${experiment.code}`)],
    ["GET /v2 quota", () => client.get("/v2/prediction-engine/quota")],
    ["GET /v2 quota/remaining", () => client.get("/v2/prediction-engine/quota/remaining")],
    ["POST /v2 psr", () => client.post("/v2/prediction-engine/psr", quickstart())],
    ["GET /v2 results", () => client.get(`/v2/prediction-engine/results?job_id=${job.id}&job_code=${job.code}`)],
    [
      "PUT /v2 upload",
      async () => {
        const res = await fetch(f.uploadUrl, {
          method: "PUT",
          headers: { "content-type": "application/json" },
          body: JSON.stringify([
            [1, 2],
            [3, 4],
          ]),
        });
        return { status: res.status, headers: res.headers, body: await res.json() };
      },
    ],
  ];
}

function expectOutage(name: string, r: Reply, store: RegExp, cause: RegExp): void {
  const said = `${name}: ${r.status} ${JSON.stringify(r.body)}`;
  expect(r.status, said).toBe(503);
  expect(r.body.error, said).toBe("store_unavailable");
  expect(r.headers.get("retry-after"), said).toMatch(/^\d+$/);
  expect(r.body.message, said).toMatch(store);
  expect(r.body.message, said).toMatch(cause);
  expect(r.body.message, said).not.toMatch(/too many open files/);
}

describe.skipIf(postgresBin() === undefined)("with PostgreSQL stopped", () => {
  let server: PostgresServer;
  let f: Fixture;
  beforeAll(async () => {
    server = await startPostgres();
    f = await fixture({ database: server.url });
  }, 120_000);
  afterAll(async () => {
    await f?.service.close();
    await server?.stop();
  }, 60_000);

  it("every route answers 503 naming PostgreSQL and ECONNREFUSED, nothing is charged, and it recovers", async () => {
    const before = (await f.client.get("/v3/quota")).body.used;
    await server.halt("fast");
    try {
      for (const [name, call] of routes(f))
        expectOutage(name, await call(), /the PostgreSQL store \(127\.0\.0\.1:\d+\/rbp\)/, /ECONNREFUSED|closed the connection|shutting down/);
      expect(f.logs.join("\n")).not.toMatch(/internal error|\n\s+at /);
      expect(f.logs.join("\n")).toMatch(/store unavailable: the PostgreSQL store/);
    } finally {
      await server.start();
    }
    const after = await f.client.get("/v3/quota");
    expect(after.status).toBe(200);
    expect(after.body.used).toBe(before);
    expect((await f.client.run("psr", quickstart())).status).toBe(200);
  }, 120_000);
});

describe("with the file store's directory removed", () => {
  const dir = tempDir();
  let f: Fixture;
  beforeAll(async () => {
    f = await fixture({ dataDir: dir.path });
  }, 60_000);
  afterAll(async () => {
    await f?.service.close();
    dir.remove();
  });

  it("every route answers 503 naming the file store and that its directory is gone, and it recovers", async () => {
    const used = (await f.client.get("/v3/quota")).body.used;
    renameSync(dir.path, `${dir.path}.away`);
    try {
      for (const [name, call] of routes(f)) expectOutage(name, await call(), /the file store \(--data-dir\)/, /its directory is gone \(ENOENT\)/);
      expect(f.logs.join("\n")).not.toMatch(/internal error|\n\s+at /);
    } finally {
      renameSync(`${dir.path}.away`, dir.path);
    }
    const after = await f.client.get("/v3/quota");
    expect(after.status).toBe(200);
    expect(after.body.used).toBe(used);
    expect((await f.client.run("psr", quickstart())).status).toBe(200);
  }, 60_000);
});
