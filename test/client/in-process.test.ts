/**
 * The in-process wire (src/client/in-process.ts) against the HTTP wire: two embedded services
 * started alike, one client of each, the same calls in the same order. Every answer (receipts,
 * results with their envelopes, experiment states, quota) and every error (class, message, status,
 * code, field and the error's own numbers) must be the same; only the random job and experiment
 * codes and the clock's times differ between two services. The in-process client must also really
 * stay off HTTP for what it serves (its transport logs every HTTP request it makes).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, isExperimentReceipt, type ExperimentReceipt, type JobReceipt, type RbpClient } from "../../src/client/index.js";
import { startLocalService, type LocalService } from "../../src/service/index.js";
import { quickstart, singular } from "./helpers.js";

const KEY = "in-process-test-key";
const ACCESS = "in-process-tester";
const QUOTA = 40;

interface Twin {
  service: LocalService;
  client: RbpClient;
  /** A client with another access id (403 on POST). */
  stranger: RbpClient;
  /** The HTTP requests the client sent. */
  http: string[];
}

async function twin(inProcess: boolean): Promise<Twin> {
  const service = await startLocalService({ port: 0, workers: 2, apiKey: KEY, accessId: ACCESS, quota: QUOTA, limits: { maxThetaRows: 12 } });
  const endpoint = inProcess ? service.lane?.endpoint : undefined;
  if (inProcess) expect(endpoint).toBeDefined();
  const http: string[] = [];
  const options = { baseUrl: service.url, apiKey: KEY, env: {}, envFile: false as const, inProcess: endpoint };
  const client = createClient({ ...options, accessId: ACCESS, log: (line) => http.push(line) });
  const stranger = createClient({ ...options, accessId: "someone-else" });
  return { service, client, stranger, http };
}

/** What differs between two services by design: random codes and the clock. */
const RANDOM = new Set(["job_code", "experiment_code", "created_at", "started_at", "finished_at"]);
function mask(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(mask);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, RANDOM.has(k) ? "*" : mask(v)]));
}

/** An outcome as compared: the masked value, or the error's visible parts. */
async function outcome(call: () => Promise<unknown>): Promise<unknown> {
  try {
    return { ok: mask(await call()) };
  } catch (error) {
    const e = error as Error & Record<string, unknown>;
    const seen: Record<string, unknown> = { class: e.constructor.name, name: e.name, message: e.message };
    for (const k of ["status", "code", "field", "expected", "reason", "jobId", "errorCode", "remaining", "required", "quota", "local", "attempts", "request"])
      if (e[k] !== undefined) seen[k] = e[k];
    return { error: mask(seen) };
  }
}

/** The same calls, in the same order, on one twin; every outcome in order. */
async function script(t: Twin): Promise<unknown[]> {
  const { client } = t;
  const out: unknown[] = [];
  const step = async (call: () => Promise<unknown>) => {
    const o = await outcome(call);
    out.push(o);
    return o;
  };
  await step(() => client.quota());
  // A Grid without theta: the last row of X, said in the receipt; the whole envelope of the read.
  const grid = (await client.submit("grid", { y: quickstart().y, X: quickstart().X })) as JobReceipt;
  out.push(mask(grid));
  await step(() => client.wait(grid));
  await step(() => client.status(grid));
  await step(() => client.field(grid, "yhat"));
  // Options with a key the service ignores: the receipt's warnings.
  await step(async () => {
    const r = (await client.submit("psr", {
      ...quickstart(),
      options: { threshold: [0, 0.8], censor_type: "relevance", not_an_option: 1 } as never,
    })) as JobReceipt;
    return { receipt: r, result: await client.wait(r) };
  });
  // An experiment: its receipt, its state, every row's result.
  await step(async () => {
    const r = (await client.submit("psr", { ...quickstart(), theta: [quickstart().theta, quickstart().X[1], quickstart().X[2]] })) as ExperimentReceipt;
    expect(isExperimentReceipt(r)).toBe(true);
    const state = await client.waitExperiment(r);
    const rows = await Promise.all(r.jobs.map((j) => client.result(j)));
    return { receipt: r, state, rows };
  });
  // A job that fails in the engine, and an experiment whose rows all fail.
  const s = singular();
  await step(async () => client.wait((await client.submit("psr", s)) as JobReceipt));
  await step(async () => client.waitExperiment((await client.submit("psr", { ...s, theta: [s.theta, [2, 2, 2]] })) as ExperimentReceipt));
  // Refused by the service: over its limit of theta rows (422), and no quota spent.
  await step(() => client.submit("psr", { ...quickstart(), theta: Array.from({ length: 13 }, () => quickstart().theta) }));
  // Refused locally (the same check on both paths).
  await step(() => client.submit("psr", { ...quickstart(), theta: [1, 2] }));
  // Another access id: 403.
  await step(() => t.stranger.submit("psr", quickstart()));
  // More than the plan has left: 429, nothing created.
  await step(() => client.submit("psr", { ...quickstart(), theta: Array.from({ length: 12 }, () => quickstart().theta) }));
  await step(() => client.submit("psr", { ...quickstart(), theta: Array.from({ length: 12 }, () => quickstart().theta) }));
  await step(() => client.submit("psr", { ...quickstart(), theta: Array.from({ length: 12 }, () => quickstart().theta) }));
  // Unknown job: 404.
  await step(() => client.status({ job_id: 9999, job_code: "nope" }));
  // A value JSON would change (-0): sent over HTTP by the in-process client, the same answer.
  await step(async () => client.run("psr", { ...quickstart(), X: quickstart().X.map((row, i) => (i === 0 ? [-0, ...row.slice(1)] : row)) }));
  await step(() => client.quota());
  return out;
}

let viaHttp: Twin;
let inProcess: Twin;
let outcomes: { http: unknown[]; inProcess: unknown[] };

beforeAll(async () => {
  viaHttp = await twin(false);
  inProcess = await twin(true);
  outcomes = { http: await script(viaHttp), inProcess: await script(inProcess) };
}, 120_000);

afterAll(async () => {
  for (const t of [viaHttp, inProcess]) {
    await t?.client.close();
    await t?.stranger.close();
    await t?.service.close();
  }
});

describe("the in-process wire answers as the HTTP wire", () => {
  it("every answer and every error of the same calls is the same", () => {
    expect(outcomes.inProcess).toHaveLength(outcomes.http.length);
    outcomes.http.forEach((expected, i) => expect(outcomes.inProcess[i], `call ${i}`).toEqual(expected));
  });

  it("the script meets every kind of answer: a result, a 409, a 422, a local refusal, a 403, a 429 and a 404", () => {
    const errors = outcomes.http.flatMap((o) =>
      (o as { error?: { status?: number; local?: boolean } }).error ? [(o as { error: { status?: number; local?: boolean } }).error] : [],
    );
    expect(errors.map((e) => String(e.status ?? (e.local ? "local" : undefined))).sort()).toEqual(["403", "404", "409", "422", "429", "local"]);
  });

  it("the in-process client sent over HTTP only what it does not serve: the field read and the request with -0", () => {
    expect(viaHttp.http.length).toBeGreaterThan(10);
    expect(inProcess.http.map((line) => line.split(" ").slice(0, 2).join(" "))).toEqual([
      expect.stringMatching(/^GET \/v3\/jobs\/\d+\/\S+\/yhat$/),
      "POST /v3/psr",
    ]);
  });
});
