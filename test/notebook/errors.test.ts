/**
 * Failures of a call: each class of problem (data, invalid request, credentials, quota, failed
 * job, connection) is a PredictionError whose message, stack, inspection, JSON and HTML bundle are
 * readable text with the field at fault, and never contain the API key; in a (simulated) tslab
 * kernel the error is displayed in the cell before it is thrown.
 */
import type { MimeBundle } from "../../src/display/index.js";
import { inspect } from "node:util";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { AuthenticationError, QuotaExceededError, ValidationError, JobFailedError } from "../../src/client/index.js";
import { FrameError } from "../../src/frame/index.js";
import { startLocalService, type LocalService } from "../../src/service/index.js";
import { connect, disconnect, grid, psr, quota, PredictionError, type RunSettings } from "../../src/notebook/index.js";
import { JUPYTER_DISPLAY } from "../../src/display/index.js";
import { quickstartRows, quickstartTheta, simulateTslab } from "./helpers.js";

const KEY = "org-secret-key-7d3f0c2b9a18";
const USER = "analyst-7";
let service: LocalService;
const quiet: RunSettings = { progress: "none" };

beforeAll(async () => {
  service = await startLocalService({ port: 0, apiKey: KEY, accessId: USER, workers: 1, quota: 3 });
});
afterAll(async () => {
  await service.close();
});
afterEach(async () => {
  await disconnect();
});

function hosted(apiKey = KEY) {
  return connect({ baseUrl: service.url, apiKey, accessId: USER, env: {}, envFile: false });
}

async function failure(p: Promise<unknown>): Promise<PredictionError> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(PredictionError);
  return e as PredictionError;
}

/** Every text form of the error: readable, no stack frames, no key. */
function expectReadable(e: PredictionError, secret = KEY): void {
  const forms = [
    e.message,
    String(e.stack),
    inspect(e),
    JSON.stringify(e),
    e.bundle()["text/html"]!,
    e.bundle()["text/plain"],
    (e[JUPYTER_DISPLAY]() as MimeBundle)["text/plain"],
  ];
  for (const text of forms) {
    expect(text).not.toContain(secret);
    expect(text).not.toMatch(/\n\s+at /); // no stack frames
  }
  expect(inspect(e)).toBe(e.text());
  expect(e.stack).toBe(e.text());
  expect(e.text().startsWith(`PredictionError: ${e.message}`)).toBe(true);
  expect(e.bundle()["text/html"]).toContain(`data-rbp-error="${e.kind}"`);
}

describe("each class of problem", () => {
  it("data: names the column; nothing is sent", async () => {
    await hosted();
    const before = (await quota()).used;
    const e = await failure(grid(quickstartRows(), { y: "Pts" }, {}, quiet));
    expect(e.kind).toBe("data");
    expect(e.subject).toBe("Grid");
    expect(e.field).toBe("Pts");
    expect(e.message).toMatch(/^Grid: the data cannot be used\. outcome column "Pts" is not in the data; the columns are "Name", "Points"/);
    expect(e.hint).toContain("Nothing was sent");
    expect(e.cause).toBeInstanceOf(FrameError);
    expectReadable(e);
    expect((await quota()).used).toBe(before);
  });

  it("an invalid request refused before sending: the field, no quota spent", async () => {
    await hosted();
    const before = (await quota()).used;
    const rows = quickstartRows().slice(0, 3); // N = 3 <= K = 5
    const e = await failure(psr(rows, { y: "Points", theta: quickstartTheta() }, {}, quiet));
    expect(e.kind).toBe("invalid-request");
    expect(e.cause).toBeInstanceOf(ValidationError);
    expect((e.cause as ValidationError).local).toBe(true);
    expect(e.field).toBeDefined();
    expect(e.message).toContain("nothing was sent and no quota was spent");
    expect(e.hint).toBeUndefined();
    expectReadable(e);
    expect((await quota()).used).toBe(before);
  });

  it("an invalid option: the option's field", async () => {
    await hosted();
    const e = await failure(psr(quickstartRows(), { y: "Points", theta: quickstartTheta() }, { censor_type: "both" as never }, quiet));
    expect(e.kind).toBe("invalid-request");
    expect(e.field).toBe("options.censor_type");
    expect(e.message).toContain("options.censor_type");
    expectReadable(e);
  });

  it("credentials: a wrong key is refused, and the wrong key is not shown either", async () => {
    const wrong = "wrong-key-0f9e8d7c6b5a";
    await hosted(wrong);
    const e = await failure(grid(quickstartRows(), { y: "Points" }, {}, quiet));
    expect(e.kind).toBe("authentication");
    expect(e.status).toBe(403);
    expect(e.cause).toBeInstanceOf(AuthenticationError);
    expect(e.hint).toContain("CSA_API_KEY");
    expectReadable(e, wrong);
    expectReadable(e, KEY);
  });

  it("a failed job: the service's reason and a hint for a singular covariance", async () => {
    await hosted();
    const rows = [1, 2, 3, 4, 5, 6].map((v, i) => ({ y: v, a: i + 1, b: i + 1, c: [3, 1, 4, 1, 9, 2][i] }));
    const e = await failure(psr(rows, { y: "y", theta: { a: 1, b: 1, c: 1 } }, {}, quiet));
    expect(e.kind).toBe("job-failed");
    expect(e.cause).toBeInstanceOf(JobFailedError);
    expect(e.detail).toMatch(/singular/i);
    expect(e.jobId).toBeGreaterThan(0);
    expectReadable(e);
  });

  it("the quota: what is left, nothing charged", async () => {
    await hosted();
    const left = (await quota()).remaining;
    for (let i = 0; i < left; i++) await grid(quickstartRows(), { y: "Points" }, { max_k: 1 }, quiet);
    const e = await failure(grid(quickstartRows(), { y: "Points" }, {}, quiet));
    expect(e.kind).toBe("quota");
    expect(e.status).toBe(429);
    expect(e.cause).toBeInstanceOf(QuotaExceededError);
    expect(e.hint).toMatch(/0 units left, 1 needed\. Nothing was charged/);
    expectReadable(e);
  });

  it("the connection: a service that does not answer", async () => {
    const dead = await startLocalService({ port: 0, apiKey: KEY, accessId: USER, workers: 1 });
    const url = dead.url;
    await dead.close();
    await connect({ baseUrl: url, apiKey: KEY, accessId: USER, env: {}, envFile: false });
    const e = await failure(grid(quickstartRows(), { y: "Points" }, {}, quiet));
    expect(e.kind).toBe("connection");
    expect(e.hint).toContain("RBP_BASE_URL");
    expectReadable(e);
  });

  it("the key is scrubbed from our own text too (a column named like the key)", async () => {
    await hosted();
    const rows = quickstartRows().map((r) => ({ ...r, [KEY]: 1 }));
    const e = await failure(grid(rows, { y: "Nope" }, {}, quiet));
    expect(e.kind).toBe("data");
    expect(e.message).toContain("[redacted]");
    expectReadable(e);
  });
});

describe("in a notebook kernel", () => {
  it("the failure is displayed in the cell, then thrown; the progress line ends as failed", async () => {
    await hosted("another-wrong-key-123456");
    const kernel = simulateTslab();
    try {
      const e = await failure(grid(quickstartRows(), { y: "Points" }));
      const errorOutputs = kernel.messages.filter((m) => typeof m.data["text/html"] === "string" && (m.data["text/html"] as string).includes("rbp-error"));
      expect(errorOutputs).toHaveLength(1);
      expect(errorOutputs[0].data["text/plain"]).toBe(e.text());
      expect(errorOutputs[0].data["text/html"]).toContain("the service did not accept the credentials");
      expect(errorOutputs[0].data["text/html"]).toContain("field: <code>x-api-key</code>");
      const progress = kernel.messages.filter((m) => m.transient.display_id !== undefined);
      expect(progress.length).toBeGreaterThanOrEqual(1);
      expect(progress[progress.length - 1].data["text/plain"]).toMatch(/^Grid · failed in/);
      expect(JSON.stringify(kernel.messages)).not.toContain("another-wrong-key-123456");
    } finally {
      kernel.restore();
    }
  });

  it("showErrors: false only throws", async () => {
    const kernel = simulateTslab();
    try {
      await failure(grid(quickstartRows(), { y: "Pts" }, {}, { progress: "none", showErrors: false }));
      expect(kernel.messages).toHaveLength(0);
    } finally {
      kernel.restore();
    }
  });

  it("usage errors of prediction methods are readable too", async () => {
    await connect({ hosted: false, env: {}, envFile: false, local: { workers: 1 } });
    const p = await psr(quickstartRows(), { y: "Points", theta: quickstartTheta() }, {}, quiet);
    let e: unknown;
    try {
      p.impactChart();
    } catch (x) {
      e = x;
    }
    expect(e).toBeInstanceOf(PredictionError);
    expect((e as PredictionError).kind).toBe("usage");
    expect(inspect(e)).toMatch(/^PredictionError: PSR: this does not apply here\. Impact on Fit and Impact on Prediction come from a Grid/);
  });
});
