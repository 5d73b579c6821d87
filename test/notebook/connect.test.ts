/**
 * connect(): the embedded local service once per process, the hosted service when a key is set
 * (here a second local service with its own key standing in for it, reached through the same
 * client path), memoisation, replacement, disconnect, and the configuration errors.
 */
import { inspect } from "node:util";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startLocalService, type LocalService } from "../../src/service/index.js";
import { connect, currentConnection, disconnect, grid, quota, PredictionError, Connection } from "../../src/notebook/index.js";
import { JUPYTER_DISPLAY, type MimeBundle } from "../../src/display/index.js";
import { gold, near, quickstartRows, quickstartTheta } from "./helpers.js";

const LOCAL = { hosted: false, env: {}, envFile: false as const, local: { workers: 1 } };

let hosted: LocalService;
const HOSTED_KEY = "hosted-org-key-5f1c9a7e2b";
const HOSTED_USER = "analyst-0042";

beforeAll(async () => {
  hosted = await startLocalService({ port: 0, apiKey: HOSTED_KEY, accessId: HOSTED_USER, workers: 1, quota: 50 });
});
afterAll(async () => {
  await disconnect();
  await hosted.close();
});
afterEach(async () => {
  await disconnect();
});

describe("the embedded local service", () => {
  it("starts once: connect() again, and grid's implicit connect, reuse it", async () => {
    const a = await connect(LOCAL);
    expect(a).toBeInstanceOf(Connection);
    expect(a.mode).toBe("local");
    expect(a.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v3$/);
    expect(a.apiVersion).toBe("v3");
    expect(await connect()).toBe(a);
    expect(await connect(LOCAL)).toBe(a);
    expect(await currentConnection()).toBe(a);

    const before = (await a.quota()).used;
    const p = await grid(quickstartRows(), { y: "Points", theta: quickstartTheta() }, {}, { progress: "none" });
    expect(p.service).toBe("local");
    expect(near(p.yhat, gold.cases.find((c) => c.name.startsWith("grid default"))!.expect.yhat)).toBe(true);
    expect(await connect()).toBe(a);
    expect((await quota()).used).toBe(before + 1);
  });

  it("concurrent first calls share one connection", async () => {
    const [a, b, c] = await Promise.all([connect(LOCAL), connect(LOCAL), connect()]);
    expect(b).toBe(a);
    expect(c).toBe(a);
  });

  it("disconnect() closes it; the next call starts a new one", async () => {
    const a = await connect(LOCAL);
    await disconnect();
    expect(a.closed).toBe(true);
    expect(await currentConnection()).toBeUndefined();
    const b = await connect(LOCAL);
    expect(b).not.toBe(a);
    expect(b.baseUrl).not.toBe(a.baseUrl);
  });

  it("other options replace the connection and close the old one", async () => {
    const a = await connect(LOCAL);
    const b = await connect({ ...LOCAL, apiVersion: "v2" });
    expect(b).not.toBe(a);
    expect(b.apiVersion).toBe("v2");
    expect(b.baseUrl).toMatch(/\/v2\/prediction-engine$/);
    await new Promise((r) => setTimeout(r, 50));
    expect(a.closed).toBe(true);
    // A v2 connection runs the same analyses.
    const p = await grid(quickstartRows(), { y: "Points", theta: quickstartTheta() }, {}, { progress: "none" });
    expect(near(p.yhat, 3.285239)).toBe(true);
  });

  it("connect({ hosted: false }) on the local service reuses the running one: earlier jobs stay known", async () => {
    const a = await connect(); // as a notebook's first grid(...) does
    expect(a.mode).toBe("local");
    const p = await grid(quickstartRows(), { y: "Points", theta: quickstartTheta() }, {}, { progress: "none" });
    const b = await connect({ hosted: false }); // %rbp connect local
    expect(b.baseUrl).toBe(a.baseUrl);
    expect((await b.client.status(p.receipt)).status).toBe("completed"); // %rbp status p
    expect(await connect({ hosted: false })).toBe(b);
    // Another API version is another client of the same service: the job reads through v2 too.
    const v2 = await connect({ hosted: false, apiVersion: "v2" });
    expect(v2.apiVersion).toBe("v2");
    expect(v2.baseUrl.replace(/\/v2\/prediction-engine$/, "")).toBe(a.baseUrl.replace(/\/v3$/, ""));
    expect((await v2.client.result(p.receipt)).yhat).toBeDefined();
    await new Promise((r) => setTimeout(r, 50));
    expect(b.closed).toBe(true); // its client only: the service went on with v2
    expect((await v2.quota()).used).toBe(1);
  });

  it("fresh: true (%rbp connect local fresh), or other workers or quota, start a new service", async () => {
    const a = await connect(LOCAL);
    const p = await grid(quickstartRows(), { y: "Points", theta: quickstartTheta() }, {}, { progress: "none" });
    const b = await connect({ ...LOCAL, fresh: true });
    expect(b.baseUrl).not.toBe(a.baseUrl);
    const unknown = await b.client.status(p.receipt).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(Error);
    const c = await connect({ ...LOCAL, local: { workers: 1, quota: 7 } });
    expect(c.baseUrl).not.toBe(b.baseUrl);
    expect((await c.quota()).quota).toBe(7);
    expect(await connect({ ...LOCAL, local: { quota: 7 } })).not.toBe(c); // a new client of the same service
    expect((await connect()).baseUrl).toBe(c.baseUrl);
  });

  it("a connect that fails leaves the working connection and its options in place", async () => {
    const a = await connect(LOCAL);
    const failed = await connect({ env: { CSA_API_KEY: HOSTED_KEY }, envFile: false }).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(PredictionError);
    await new Promise((r) => setTimeout(r, 50));
    expect(a.closed).toBe(false);
    expect(await currentConnection()).toBe(a);
    expect(await connect()).toBe(a);
    const p = await grid(quickstartRows(), { y: "Points", theta: quickstartTheta() }, {}, { progress: "none" });
    expect(p.service).toBe("local");
  });

  it("without a key in the environment, connect() is local even when .env is absent", async () => {
    const c = await connect({ env: {}, envFile: "/nonexistent/.env", local: { workers: 1 } });
    expect(c.mode).toBe("local");
  });

  it("shows where it is connected, never a key", async () => {
    const c = await connect(LOCAL);
    const text = inspect(c);
    expect(text).toMatch(/^Connection \{ embedded local service at http:\/\/127\.0\.0\.1:\d+\/v3 \(API v3\) \}$/);
    expect(JSON.stringify(c)).not.toMatch(/key/i);
    expect((c[JUPYTER_DISPLAY]() as MimeBundle)["text/plain"]).toContain("Connected to the embedded local service");
  });
});

describe("the hosted service", () => {
  const hostedEnv = () => ({ CSA_API_KEY: HOSTED_KEY, CSA_ACCESS_ID: HOSTED_USER, RBP_BASE_URL: hosted.url });

  it("is used when CSA_API_KEY is set, through the same client calls", async () => {
    const c = await connect({ env: hostedEnv(), envFile: false });
    expect(c.mode).toBe("hosted");
    expect(c.baseUrl).toBe(`${hosted.url}/v3`);
    const before = await c.quota();
    expect(before.quota).toBe(50);
    const p = await grid(quickstartRows(), { y: "Points", theta: quickstartTheta() }, {}, { progress: "none" });
    expect(p.service).toBe("hosted");
    expect(near(p.yhat, 3.285239)).toBe(true);
    expect(p.combinations).toBe(31);
    // The job ran on the "hosted" service: its quota paid for it, and its client can read the job.
    expect((await c.quota()).used).toBe(before.used + 1);
    const field = await c.client.field(p.receipt, "yhat");
    expect(field.values).toEqual([p.yhat]);
  });

  it("explicit options win over the environment; hosted: false forces the local service", async () => {
    const c = await connect({ baseUrl: hosted.url, apiKey: HOSTED_KEY, accessId: HOSTED_USER, env: {}, envFile: false });
    expect(c.mode).toBe("hosted");
    const l = await connect({ ...LOCAL, env: hostedEnv() });
    expect(l.mode).toBe("local");
    expect(l.baseUrl).not.toContain(String(hosted.port));
  });

  it("needs a base URL: a clear error that names RBP_BASE_URL and never shows the key", async () => {
    const error = await connect({ env: { CSA_API_KEY: HOSTED_KEY }, envFile: false }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PredictionError);
    const e = error as PredictionError;
    expect(e.kind).toBe("configuration");
    expect(e.field).toBe("RBP_BASE_URL");
    expect(e.message).toContain("CSA_API_KEY is set");
    expect(e.hint).toContain("connect({ hosted: false })");
    for (const text of [e.message, e.stack, inspect(e), JSON.stringify(e), e.bundle()["text/html"]]) expect(text).not.toContain(HOSTED_KEY);
    expect(await currentConnection()).toBeUndefined();
  });

  it("hosted: true without a key is a configuration error", async () => {
    const e = (await connect({ hosted: true, baseUrl: hosted.url, env: {}, envFile: false }).catch((x: unknown) => x)) as PredictionError;
    expect(e).toBeInstanceOf(PredictionError);
    expect(e.kind).toBe("configuration");
    expect(e.message).toMatch(/no API key/);
  });

  it("reads each setting once per connect, and the connection scrubs with what it read", async () => {
    const reads: Record<string, number> = {};
    const env = new Proxy(hostedEnv() as Record<string, string>, {
      get(target, name: string) {
        reads[name] = (reads[name] ?? 0) + 1;
        return target[name];
      },
    });
    const c = await connect({ env, envFile: false });
    expect(c.mode).toBe("hosted");
    // Read once each (before: the access id three times, by connect, its redactor and the client).
    for (const name of ["CSA_API_KEY", "CSA_ACCESS_ID", "RBP_BASE_URL"]) expect(reads[name], name).toBe(1);
    expect(c.scrub(`${HOSTED_KEY} ${HOSTED_USER}`)).toBe("[redacted] [redacted]");
    // A local connection made while CSA_API_KEY is set scrubs that key too, though it never sends it.
    const l = await connect({ ...LOCAL, env: hostedEnv() });
    expect(l.scrub(`${HOSTED_KEY}`)).toBe("[redacted]");
  });

  it("reads CSA_API_KEY and RBP_BASE_URL from a .env file like the client", async () => {
    const { mkdtempSync, writeFileSync } = await import("node:fs");
    const { join } = await import("node:path");
    const { tmpdir } = await import("node:os");
    const dir = mkdtempSync(join(tmpdir(), "rbp-env-"));
    const file = join(dir, ".env");
    writeFileSync(file, `CSA_API_KEY=${HOSTED_KEY}\nCSA_ACCESS_ID=${HOSTED_USER}\nRBP_BASE_URL=${hosted.url}\n`);
    const c = await connect({ env: {}, envFile: file });
    expect(c.mode).toBe("hosted");
    expect((await c.quota()).quota).toBe(50);
  });
});
