/** The service core without HTTP: what the v2 routes build on (submit, waitForJob, results). */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { parseRequest, type ParsedRequest } from "../../src/api/request.js";
import { PredictionService } from "../../src/service/core.js";
import { EmbeddedStore } from "../../src/service/store/embedded.js";
import { MemoryPersistence } from "../../src/service/store/persistence.js";

import { localCredentials } from "../../src/service/credentials.js";
import { gold, quickstart } from "./helpers.js";

/** The store the composition root gives the service: the embedded one, in memory. */
const memoryStore = () => EmbeddedStore.open(new MemoryPersistence());

let service: PredictionService;
const local = localCredentials({ apiKey: "core-test-key", accessId: "core-test-user", quota: 10 });
const org = local.credentials.orgs[0];

beforeAll(async () => {
  service = await PredictionService.open({ store: await memoryStore(), credentials: local.credentials, config: { workers: 1 } });
});
afterAll(() => service.close());

const parsed = (analysis: "psr" | "grid", body: Record<string, unknown>) =>
  parseRequest(analysis, { access_id: "core-test-user", ...body }, "v2") as ParsedRequest;

describe("PredictionService", () => {
  it("submit pays, creates and runs; waitForJob wakes when the job is done", async () => {
    const submission = await service.submit(org, parsed("psr", { ...quickstart(), theta: [gold.inputs.theta], eval_type: "both" }));
    expect(submission.warnings.join(" ")).toContain("both");
    const [job] = submission.jobs;
    expect((await service.quotaStatus(org)).used).toBe(1);
    await service.waitForJob(job, 20_000);
    expect(job.status).toBe("completed");
    const results = JSON.parse(await service.resultJson(job)) as { yhat: number[] };
    expect(results.yhat).toHaveLength(1);
  });

  it("waitForJob gives up at its timeout, not before, for a job that never finishes (fake timers)", async () => {
    const [job] = (await service.submit(org, parsed("psr", quickstart()))).jobs;
    await service.waitForJob(job, 20_000);
    expect(job.status).toBe("completed");
    // A job that nothing will ever finish: only the timer can end the wait. No job runs now, so
    // the faked timers are the wait's alone.
    const ghost = { ...job, id: job.id + 1_000_000, status: "queued" as const };
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      let settled = false;
      const wait = service.waitForJob(ghost, 60_000).then(() => (settled = true));
      await vi.advanceTimersByTimeAsync(59_999);
      expect(settled).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      await wait;
      expect(settled).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it("numbers that are undefined are null in the JSON, never NaN tokens", async () => {
    const X = gold.inputs.X.map((row, i) => (i === 2 ? [null, ...row.slice(1)] : row));
    const [job] = (await service.submit(org, parsed("psr", { ...quickstart(), X, threshold: [0, 0.95] }))).jobs;
    await service.waitForJob(job, 20_000);
    const json = await service.resultJson(job);
    expect(json).not.toMatch(/NaN|Infinity/);
    const results = JSON.parse(json);
    expect(results.yhat[1]).toBeNull();
    expect(results.insights.relevance[2]).toBeNull();
    expect(job.compact?.yhat[1]).toBeNull();
  });
});
