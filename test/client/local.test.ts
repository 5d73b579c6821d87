/**
 * The client against the local service over loopback, version 3: every call, the quickstart 7x5
 * gold numbers through the client, validation failures that cost no quota, and the typed errors
 * the real service produces (401 needs a request without a key, which this client never sends:
 * see faults.test.ts).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  AbortError,
  AuthenticationError,
  FieldTooLargeError,
  isExperimentReceipt,
  JobFailedError,
  JobPendingError,
  NotFoundError,
  PayloadTooLargeError,
  QuotaExceededError,
  TimeoutError,
  ValidationError,
  type ExperimentProgress,
  type ExperimentReceipt,
  type ExperimentRun,
  type JobReceipt,
  type RbpClient,
  type WaitProgress,
} from "../../src/client/index.js";
import { startLocalService, type LocalService } from "../../src/service/index.js";
import { clientFor, close, column, gatedService, gold, goldCase, quickstart, singular, synthetic } from "./helpers.js";

let service: LocalService;
let client: RbpClient;

beforeAll(async () => {
  service = await startLocalService({ port: 0, workers: 2 });
  client = clientFor(service);
});
afterAll(async () => {
  await client?.close();
  await service?.close();
});

describe("v3: the quickstart 7x5 gold numbers through the client", () => {
  it("run grid: the published composite", async () => {
    const c = goldCase("grid default");
    const r = await client.run("grid", quickstart());
    close(r.yhat, c.expect.yhat);
    close(r.fit, c.expect.fit);
    close(r.adjusted_fit, c.expect.adjusted_fit);
    close(r.yhat_linear ?? null, c.expect.yhat_linear);
    close(column(r.weights), c.expect.weights);
    expect(r.analysis).toBe("grid");
    expect(r.grid_insights?.impact_on_fit).toHaveLength(5);
  });

  it("submit, status, wait and result for PSR at relevance 0.8", async () => {
    const c = goldCase("psr relevance t=0.8");
    const receipt = await client.submit("psr", { ...quickstart(), options: c.options as never });
    expect(isExperimentReceipt(receipt)).toBe(false);
    expect(Number.isInteger(receipt.job_id)).toBe(true);
    expect(receipt.job_code).toMatch(/^[0-9a-f]{16}$/);

    const snap = await client.status(receipt);
    expect(["queued", "running", "completed"]).toContain(snap.status);

    const progress: WaitProgress[] = [];
    const r = await client.wait(receipt, { onProgress: (p) => progress.push(p) });
    expect(progress.at(-1)!.status).toBe("completed");
    expect(progress.map((p) => p.polls)).toEqual(progress.map((_, i) => i + 1));
    close(r.yhat, c.expect.yhat);
    close(r.fit, c.expect.fit);
    close(r.asymmetry, c.expect.asymmetry);
    close(r.adjusted_fit, c.expect.adjusted_fit);
    close(column(r.weights), c.expect.weights);
    expect(column(r.include!)).toEqual(c.expect.include);
    close(r.r_star ?? null, c.expect.r_star);
    close(r.lambda_sq ?? null, c.expect.lambda_sq);
    expect(r.n).toEqual([c.expect.n]);

    const again = await client.result(receipt);
    expect(again).toEqual(r);
    const done = await client.status(receipt);
    expect(done.status).toBe("completed");
    if (done.status === "completed") expect((done.raw as { status: string }).status).toBe("completed");
  });

  it("run maxfit: the winner is relevance at 0.8", async () => {
    const c = goldCase("maxfit default");
    const r = await client.run("maxfit", { ...quickstart(), options: c.options as never });
    close(r.yhat, c.expect.yhat);
    close(r.fit, c.expect.fit);
    close(r.adjusted_fit, c.expect.adjusted_fit);
    expect(r.censor_type).toEqual([c.expect.censor_type]);
    expect(r.thresholds).toEqual([c.expect.threshold]);
  });

  it("run psr over a threshold sweep, and the scores as fields", async () => {
    const c = goldCase("psr thresholds sweep");
    const receipt = await client.submit("psr", { ...quickstart(), options: c.options as never });
    const r = await client.wait(receipt);
    close(r.yhat, c.expect.yhat);
    close(r.fit, c.expect.fit);
    close(r.adjusted_fit, c.expect.adjusted_fit);

    const scores = goldCase("scores").expect;
    const relevance = await client.field(receipt, "insights/relevance");
    expect(relevance.field).toBe("insights/relevance");
    expect(relevance.json_path).toBe("$.results.insights.relevance");
    expect(relevance.shape).toEqual([7]);
    close(relevance.values as number[], scores.relevance);
    const yhat = await client.field(receipt, "yhat");
    expect(yhat.shape).toEqual([4]);
    close(yhat.values as number[], c.expect.yhat);
    const weights = await client.field(receipt, "/prediction_weights/weights/");
    expect(weights.shape).toEqual([7, 4]);
    // A group of fields has no shape: the service says null and the client accepts it.
    const insights = await client.field(receipt, "insights");
    expect(insights.shape).toBeNull();
    close((insights.values as { relevance: number[] }).relevance, scores.relevance);
  });

  it("Grid without theta uses the last row of X, and says so", async () => {
    const { y, X } = quickstart();
    const receipt = await client.submit("grid", { y, X });
    expect(receipt.theta_source).toBe("last_row_of_X");
    const r = await client.wait(receipt);
    expect(r.yhat).toHaveLength(1);
  });

  it("missing values in X (null and NaN) go through", async () => {
    const { y, X, theta } = quickstart();
    X[2][1] = null as never;
    X[2][3] = NaN;
    const r = await client.run("psr", { y, X, theta, options: { threshold: [0, 0.5] } });
    expect(r.yhat).toHaveLength(2);
    expect(r.relevance?.[2]).toBeNull();
  });
});

describe("v3: experiments", () => {
  const thetas = [gold.inputs.theta, gold.inputs.X[0], gold.inputs.X[3]];

  it("submit gives an experiment receipt; experiment() and waitExperiment() report every row", async () => {
    const receipt = await client.submit("psr", { ...quickstart(), theta: thetas, options: { threshold: [0.8] } });
    expect(isExperimentReceipt(receipt)).toBe(true);
    const e = receipt as ExperimentReceipt;
    expect(e.grouped_by).toBe("service");
    expect(e.n_rows).toBe(3);
    expect(e.jobs.map((j) => j.row)).toEqual([0, 1, 2]);

    const view = await client.experiment(e);
    expect(view.experiment_id).toBe(e.experiment_id);
    expect(view.n_rows).toBe(3);

    const progress: ExperimentProgress[] = [];
    const state = await client.waitExperiment(e, { onProgress: (p) => progress.push({ ...p }) });
    expect(state.status).toBe("completed");
    expect(state.n_completed).toBe(3);
    expect(progress.at(-1)).toMatchObject({ done: 3, total: 3, failed: 0 });
    for (let i = 1; i < progress.length; i++) expect(progress[i].done).toBeGreaterThanOrEqual(progress[i - 1].done);

    // Row 0 is the quickstart theta: the published PSR at relevance 0.8.
    close(state.rows[0].yhat!, goldCase("psr relevance t=0.8").expect.yhat);
    // Each row equals the same request made alone.
    const alone = await client.run("psr", { ...quickstart(), theta: thetas[2], options: { threshold: [0.8] } });
    expect(state.rows[2].yhat).toEqual(alone.yhat);

    // wait() on an experiment receipt is waitExperiment.
    expect((await client.wait(e)).status).toBe("completed");
  });

  it("run on several theta rows returns every row's full result", async () => {
    const run = (await client.run("grid", { ...quickstart(), theta: thetas })) as ExperimentRun;
    expect(run.receipt.n_rows).toBe(3);
    expect(run.state.status).toBe("completed");
    expect(run.results).toHaveLength(3);
    close(run.results[0]!.yhat, goldCase("grid default").expect.yhat);
    expect(run.results.every((r) => r !== null && r.analysis === "grid")).toBe(true);
  });

  it("a failing experiment: every row failed, with the service's reason", async () => {
    const s = singular();
    const receipt = (await client.submit("psr", { ...s, theta: [s.theta, [2, 2, 2]] })) as ExperimentReceipt;
    const state = await client.waitExperiment(receipt);
    expect(state.status).toBe("failed");
    expect(state.n_failed).toBe(2);
    expect(state.rows[0].message).toMatch(/singular/);
    expect(state.rows[0].error_code).toBe(3);
  });
});

describe("v3: quota and validation before sending", () => {
  it("quota(): a job costs one unit, an experiment one per row, reads nothing", async () => {
    const before = await client.quota();
    expect(before.remaining).toBe(before.quota - before.used);
    const receipt = (await client.submit("psr", quickstart())) as JobReceipt;
    await client.wait(receipt);
    await client.result(receipt);
    await client.field(receipt, "yhat");
    expect((await client.quota()).used).toBe(before.used + 1);
    await client.run("psr", { ...quickstart(), theta: [gold.inputs.theta, gold.inputs.X[1]] });
    expect((await client.quota()).used).toBe(before.used + 3);
  });

  it("invalid requests fail locally, naming the field, and cost nothing", async () => {
    const before = await client.quota();
    const { y, X, theta } = quickstart();
    const cases: Array<[string, () => Promise<unknown>]> = [
      ["X", () => client.submit("psr", { y: y.slice(0, 5), X: X.slice(0, 5), theta })],
      ["y[1]", () => client.submit("psr", { y: [y[0], NaN, ...y.slice(2)], X, theta })],
      ["theta[0]", () => client.submit("psr", { y, X, theta: [Infinity, 1, 2, 3, 4] })],
      ["options.censor_type", () => client.submit("psr", { y, X, theta, options: { censor_type: "both" as never } })],
      [
        "options.required_attributes",
        () => client.run("grid", { y, X, theta, options: { attribute_combi: [[1, 0, 1, 0, 0]], required_attributes: [1, 0, 0, 0, 0] } }),
      ],
      ["options.threshold", () => client.submit("maxfit", { y, X, theta, options: { threshold: "high" as never } })],
      ["theta[1]", () => client.submit("psr", { y, X, theta: [theta, [1, 2]] })],
    ];
    for (const [field, call] of cases) {
      const e = await call().then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(e, field).toBeInstanceOf(ValidationError);
      expect((e as ValidationError).field, field).toBe(field);
      expect((e as ValidationError).local).toBe(true);
    }
    expect(await client.quota()).toEqual(before);
  });
});

describe("v3: waiting", () => {
  // Each job here is held by a gated worker until the test releases it: it is surely still running
  // during the reads below, however fast the engine or loaded the machine.
  let gated: { service: LocalService; release: () => void } | undefined;
  let held: RbpClient | undefined;
  async function heldClient(): Promise<RbpClient> {
    gated = await gatedService();
    held = clientFor(gated.service);
    return held;
  }
  afterEach(async () => {
    await held?.close();
    await gated?.service.close();
    held = gated = undefined;
  });

  it("result() and field() of a running job: JobPendingError; wait() with a short timeout: TimeoutError, then wait again", async () => {
    const c = await heldClient();
    const receipt = (await c.submit("grid", quickstart())) as JobReceipt;
    const pending = await c.result(receipt).catch((e: unknown) => e);
    expect(pending).toBeInstanceOf(JobPendingError);
    expect((pending as JobPendingError).jobId).toBe(receipt.job_id);
    expect(await c.field(receipt, "yhat").catch((e: unknown) => e)).toBeInstanceOf(JobPendingError);
    const late = await c.wait(receipt, { timeoutMs: 30 }).catch((e: unknown) => e);
    expect(late).toBeInstanceOf(TimeoutError);
    expect((late as TimeoutError).phase).toBe("wait");
    gated!.release();
    const r = await c.wait(receipt, { timeoutMs: 30_000 });
    close(r.yhat, goldCase("grid default").expect.yhat);
  });

  it("an aborted wait stops at once; the job goes on", async () => {
    const c = await heldClient();
    const receipt = (await c.submit("grid", quickstart())) as JobReceipt;
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    // AbortError, not the result: the worker holds the job until release(), so only the abort can end this wait
    expect(await c.wait(receipt, { signal: controller.signal }).catch((e: unknown) => e)).toBeInstanceOf(AbortError);
    gated!.release();
    expect((await c.wait(receipt)).yhat).toHaveLength(1);
  });
});

describe("v3: typed errors from the service", () => {
  it("403: a key the service does not know, and an access id that is not a user", async () => {
    const wrongKey = clientFor(service, { apiKey: "not-the-key-0000" });
    const wrongUser = clientFor(service, { accessId: "nobody-at-all" });
    try {
      const before = await client.quota();
      const e1 = await wrongKey.quota().catch((e: unknown) => e);
      expect(e1).toBeInstanceOf(AuthenticationError);
      expect((e1 as AuthenticationError).status).toBe(403);
      expect((e1 as AuthenticationError).field).toBe("x-api-key");
      const e2 = await wrongUser.submit("psr", quickstart()).catch((e: unknown) => e);
      expect(e2).toBeInstanceOf(AuthenticationError);
      expect((e2 as AuthenticationError).field).toBe("access_id");
      expect(await client.quota()).toEqual(before);
    } finally {
      await wrongKey.close();
      await wrongUser.close();
    }
  });

  it("404: unknown job, unknown field, unknown experiment", async () => {
    expect(await client.result({ job_id: 987654, job_code: "0000000000000000" }).catch((e: unknown) => e)).toBeInstanceOf(NotFoundError);
    const receipt = (await client.submit("psr", quickstart())) as JobReceipt;
    await client.wait(receipt);
    const e = await client.field(receipt, "insights/nothing_here").catch((e: unknown) => e);
    expect(e).toBeInstanceOf(NotFoundError);
    expect((e as NotFoundError).message).toMatch(/relevance/); // lists what is there
    const fake: ExperimentReceipt = {
      experiment_id: 987654,
      experiment_code: "0000000000000000",
      n_rows: 1,
      jobs: [{ row: 0, job_id: 1, job_code: "x" }],
      grouped_by: "service",
    };
    expect(await client.experiment(fake).catch((e: unknown) => e)).toBeInstanceOf(NotFoundError);
  });

  it("409: a failed job, with the service's reason", async () => {
    const e = await client.run("psr", singular()).catch((e: unknown) => e);
    expect(e).toBeInstanceOf(JobFailedError);
    const failed = e as JobFailedError;
    expect(failed.status).toBe(409);
    expect(failed.reason).toMatch(/pseudoinverse/);
    expect(failed.errorCode).toBe(3);
    expect(failed.jobId).toBeTypeOf("number");
  });

  describe("limits (a service with a small quota, body and field limit)", () => {
    let tight: LocalService;
    let c: RbpClient;
    beforeAll(async () => {
      tight = await startLocalService({ port: 0, workers: 1, quota: 2, maxFieldBytes: 64, maxBodyBytes: 4_000 });
      c = clientFor(tight);
    });
    afterAll(async () => {
      await c?.close();
      await tight?.close();
    });

    it("413 on a field: FieldTooLargeError naming smaller paths", async () => {
      const receipt = (await c.submit("psr", { ...quickstart(), options: { threshold: [0, 0.2, 0.5, 0.8] } })) as JobReceipt;
      await c.wait(receipt);
      const e = await c.field(receipt, "prediction_weights").catch((e: unknown) => e);
      expect(e).toBeInstanceOf(FieldTooLargeError);
      const big = e as FieldTooLargeError;
      expect(big.status).toBe(413);
      expect(big.limit).toBe(64);
      expect(big.smallerPaths.length).toBeGreaterThan(0);
      expect(big.smallerPaths[0]).toMatch(/^prediction_weights\//);
      expect((await c.field(receipt, "yhat/0")).values).toBeTypeOf("number");
    });

    it("413 on a POST body: PayloadTooLargeError from the service (no quota spent)", async () => {
      const { y, X } = synthetic(200, 4);
      const before = await c.quota();
      const e = await c.submit("psr", { y, X, theta: X[0] }).catch((e: unknown) => e);
      expect(e).toBeInstanceOf(PayloadTooLargeError);
      expect((e as PayloadTooLargeError).local).toBe(false);
      expect((e as PayloadTooLargeError).status).toBe(413);
      expect(await c.quota()).toEqual(before);
    });

    it("429: QuotaExceededError with what remains; nothing created", async () => {
      const before = await c.quota();
      expect(before.remaining).toBe(1);
      const e = await c.submit("psr", { ...quickstart(), theta: [gold.inputs.theta, gold.inputs.X[0]] }).catch((e: unknown) => e);
      expect(e).toBeInstanceOf(QuotaExceededError);
      const q = e as QuotaExceededError;
      expect(q.status).toBe(429);
      expect(q.remaining).toBe(1);
      expect(q.required).toBe(2);
      expect(await c.quota()).toEqual(before);
    });
  });
});
