/**
 * The client against the local service over loopback, version 2 (`/v2/prediction-engine`): the
 * same calls as v3, GET /results with the receipt as a JSON body, flat results normalised into
 * the same Result, several theta rows posted as one job each and grouped by the client.
 *
 * WAITS FOR THE V2 ROUTES: the suite probes the service and is skipped (not faked) while the
 * local service does not serve `/v2/prediction-engine` yet; it runs as soon as it does.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AbortError,
  AuthenticationError,
  createClient,
  isExperimentReceipt,
  JobFailedError,
  NotFoundError,
  QuotaExceededError,
  TimeoutError,
  ValidationError,
  type ExperimentProgress,
  type ExperimentReceipt,
  type ExperimentRun,
  type JobReceipt,
  type RbpClient,
  type Result,
} from "../../src/client/index.js";
import { startLocalService, type LocalService } from "../../src/service/index.js";
import { clientFor, close, column, gatedService, gold, goldCase, quickstart, singular } from "./helpers.js";

/** Does the local service serve v2? (A 404 "no route" while the v2 routes are not there yet.) */
async function servesV2(): Promise<boolean> {
  const probe = await startLocalService({ port: 0, workers: 1 });
  try {
    const res = await fetch(`${probe.url}/v2/prediction-engine/quota/summary`, { headers: { "x-api-key": probe.credentials.apiKey } });
    await res.arrayBuffer();
    return res.status === 200;
  } finally {
    await probe.close();
  }
}
const V2 = await servesV2();

describe.skipIf(!V2)("v2 through the client (waits for the v2 routes of the local service)", () => {
  let service: LocalService;
  let v2: RbpClient;
  let v3: RbpClient;

  beforeAll(async () => {
    service = await startLocalService({ port: 0, workers: 2 });
    v2 = clientFor(service, { apiVersion: "v2" });
    v3 = clientFor(service);
  });
  afterAll(async () => {
    await v2?.close();
    await v3?.close();
    await service?.close();
  });

  /** Fields both versions carry are equal (v2 has no thresholds/analysis/warnings; v3 no most_eval). */
  function sameOnCommonFields(a: Result, b: Result): void {
    for (const key of [
      "yhat",
      "fit",
      "adjusted_fit",
      "agreement",
      "asymmetry",
      "outlier_influence",
      "k_fit",
      "weights",
      "relevance",
      "similarity",
      "info_x",
      "info_theta",
    ] as const) {
      expect(b[key], key).toEqual(a[key]);
    }
  }

  it("a version root in the base URL selects v2", () => {
    const c = createClient({ baseUrl: `${service.url}/v2/prediction-engine`, apiKey: "k-123456", env: {}, envFile: false });
    expect(c.apiVersion).toBe("v2");
    expect(c.baseUrl).toBe(`${service.url}/v2/prediction-engine`);
    void c.close();
  });

  it("submit, status, wait, result and field: the quickstart PSR at relevance 0.8, equal to v3", async () => {
    const c = goldCase("psr relevance t=0.8");
    const receipt = await v2.submit("psr", { ...quickstart(), options: c.options as never });
    expect(isExperimentReceipt(receipt)).toBe(false);
    expect(["queued", "running", "completed"]).toContain((await v2.status(receipt)).status);
    const r = await v2.wait(receipt);
    close(r.yhat, c.expect.yhat);
    close(r.fit, c.expect.fit);
    close(column(r.weights), c.expect.weights);
    expect(column(r.include!)).toEqual(c.expect.include);
    expect(await v2.result(receipt)).toEqual(r);

    const viaV3 = await v3.run("psr", { ...quickstart(), options: c.options as never });
    sameOnCommonFields(viaV3, r);

    const yhat = await v2.field(receipt, "yhat");
    expect(yhat.json_path).toBe("$.yhat");
    expect((yhat.values as number[][]).flat()[0]).toBeCloseTo(c.expect.yhat, 6);
    const relevance = await v2.field(receipt, "relevance");
    close((relevance.values as number[][]).flat(), goldCase("scores").expect.relevance);
    expect(await v2.field(receipt, "no_such_field").catch((e: unknown) => e)).toBeInstanceOf(NotFoundError);
  });

  it("run grid and maxfit: the published numbers", async () => {
    const g = await v2.run("grid", quickstart());
    close(g.yhat, goldCase("grid default").expect.yhat);
    close(g.fit, goldCase("grid default").expect.fit);
    expect(g.grid_insights?.impact_on_fit).toHaveLength(5);
    const m = goldCase("maxfit default");
    const r = await v2.run("maxfit", { ...quickstart(), options: m.options as never });
    close(r.yhat, m.expect.yhat);
    close(r.adjusted_fit, m.expect.adjusted_fit);
  });

  it("several theta rows: one job per row, grouped by the client, one quota unit each", async () => {
    const before = await v2.quota();
    const thetas = [gold.inputs.theta, gold.inputs.X[0], gold.inputs.X[3]];
    const receipt = (await v2.submit("psr", { ...quickstart(), theta: thetas, options: { threshold: [0.8] } })) as ExperimentReceipt;
    expect(receipt.grouped_by).toBe("client");
    expect(receipt.experiment_id).toBeNull();
    expect(receipt.jobs.map((j) => j.row)).toEqual([0, 1, 2]);
    const progress: ExperimentProgress[] = [];
    const state = await v2.waitExperiment(receipt, { onProgress: (p) => progress.push({ ...p }) });
    expect(state.status).toBe("completed");
    expect(progress.at(-1)).toMatchObject({ done: 3, total: 3, failed: 0 });
    close(state.rows[0].yhat!, goldCase("psr relevance t=0.8").expect.yhat);
    expect((await v2.quota()).used).toBe(before.used + 3);

    const run = (await v2.run("psr", { ...quickstart(), theta: thetas, options: { threshold: [0.8] } })) as ExperimentRun;
    expect(run.results).toHaveLength(3);
    expect(run.results[1]!.yhat).toEqual(state.rows[1].yhat);
  });

  it("invalid requests fail locally and cost nothing", async () => {
    const before = await v2.quota();
    const { y, X, theta } = quickstart();
    const e = await v2.submit("psr", { y, X, theta: theta.slice(1) }).catch((e: unknown) => e);
    expect(e).toBeInstanceOf(ValidationError);
    expect((e as ValidationError).field).toBe("theta");
    expect(await v2.quota()).toEqual(before);
  });

  it("errors: 403, an unknown job, a failed job", async () => {
    const wrong = clientFor(service, { apiVersion: "v2", apiKey: "not-the-key-0000" });
    try {
      expect(await wrong.quota().catch((e: unknown) => e)).toBeInstanceOf(AuthenticationError);
    } finally {
      await wrong.close();
    }
    const wrongUser = clientFor(service, { apiVersion: "v2", accessId: "nobody-at-all" });
    try {
      expect(await wrongUser.submit("psr", quickstart()).catch((e: unknown) => e)).toBeInstanceOf(AuthenticationError);
    } finally {
      await wrongUser.close();
    }
    expect(await v2.result({ job_id: 987654, job_code: "0000000000000000" }).catch((e: unknown) => e)).toBeInstanceOf(NotFoundError);
    const failed = await v2.run("psr", singular()).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(JobFailedError);
    expect((failed as JobFailedError).errorCode).toBe(3);
    expect((failed as JobFailedError).reason).toMatch(/singular|pseudoinverse/);
  });

  it("the service holds a running job's read (long-poll): wait's timeoutMs and signal still end it on time", async () => {
    // The job is held by a gated worker until release(): it is surely still running below, however
    // fast the engine or loaded the machine.
    const gated = await gatedService();
    const held = clientFor(gated.service, { apiVersion: "v2" });
    try {
      const receipt = (await held.submit("grid", quickstart())) as JobReceipt;
      // the service holds the read until the job ends: a TimeoutError (not the result) shows the wait
      // ended the held read at its own deadline
      const late = await held.wait(receipt, { timeoutMs: 40 }).catch((e: unknown) => e);
      expect(late).toBeInstanceOf(TimeoutError);
      expect((late as TimeoutError).phase).toBe("wait");
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 20);
      // AbortError, not the result: the abort ended the held read, the job is still held
      expect(await held.wait(receipt, { signal: controller.signal }).catch((e: unknown) => e)).toBeInstanceOf(AbortError);
      gated.release();
      close((await held.wait(receipt)).yhat, goldCase("grid default").expect.yhat);
    } finally {
      await held.close();
      await gated.service.close();
    }
  });

  describe("quota of a group", () => {
    let tight: LocalService;
    let c: RbpClient;
    beforeAll(async () => {
      tight = await startLocalService({ port: 0, workers: 1, quota: 2 });
      c = clientFor(tight, { apiVersion: "v2" });
    });
    afterAll(async () => {
      await c?.close();
      await tight?.close();
    });

    it("a group larger than the remaining quota is refused before anything is posted", async () => {
      const e = await c.submit("psr", { ...quickstart(), theta: [gold.inputs.theta, gold.inputs.X[0], gold.inputs.X[1]] }).catch((e: unknown) => e);
      expect(e).toBeInstanceOf(QuotaExceededError);
      expect((e as QuotaExceededError).required).toBe(3);
      expect((e as QuotaExceededError).remaining).toBe(2);
      expect((await c.quota()).used).toBe(0);
      const ok = (await c.submit("psr", quickstart())) as JobReceipt;
      await c.wait(ok);
      expect((await c.quota()).used).toBe(1);
    });
  });
});

describe("v2 availability", () => {
  it(`the local service ${V2 ? "serves" : "does not serve yet"} /v2/prediction-engine`, () => {
    // Informational: the v2 suite above runs only when the routes are there.
    expect(typeof V2).toBe("boolean");
  });
});
