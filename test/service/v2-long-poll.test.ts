/**
 * The v2 long-poll window (issue 12, item 3): the official client reads a job with three GETs,
 * 1 s and 5 s apart, then gives up (docs/api.md section 3), so it sees a job finish that takes up to
 * 3 x window + 6 s. The default window lets it see every job that ends within the default time
 * limit; `rbp serve --v2-long-poll` and `startLocalService({ v2LongPollMs })` set it; held reads
 * are bounded per organisation. Jobs here "run" in a stand-in worker that waits without CPU.
 */
import { afterEach, describe, expect, it } from "vitest";
import { UsageError } from "../../src/cli/predict.js";
import { parseServeArgs, SERVE_USAGE } from "../../src/cli/serve.js";
import { startWorker } from "../../src/threads/worker-script.js";
import { DEFAULT_CONFIG } from "../../src/service/core.js";
import type { LocalService } from "../../src/service/index.js";
import { V2_MAX_HELD_READS } from "../../src/service/v2.js";
import { officialV2Body } from "../official-v2.js";
import { start } from "./helpers.js";
import { V2Client } from "./v2-helpers.js";

/** The official client's GET timeout and its three-GET routine (docs/api.md section 3). */
const CLIENT_GET_TIMEOUT_MS = 300_000;
const horizon = (windowMs: number) => 3 * windowMs + 1_000 + 5_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let service: LocalService | undefined;
afterEach(async () => {
  await service?.close();
  service = undefined;
});

async function slowService(delayMs: number, v2LongPollMs: number): Promise<V2Client> {
  ({ service } = await start({
    workers: 1,
    v2LongPollMs,
    spawn: () => startWorker("fixtures/slow-worker", import.meta.url, { workerData: { delayMs } }),
  }));
  return new V2Client(service.url, service.credentials.apiKey, service.credentials.accessId);
}

/** What csa_prediction_engine 2.3.0 does after a POST: GET, sleep 1 s, GET, sleep 5 s, GET, then give up. */
async function officialRead(v2: V2Client, receipt: { job_id: number; job_code: string }): Promise<any> {
  let body: any;
  for (const pause of [0, 1_000, 5_000]) {
    await sleep(pause);
    body = (await v2.results({ job_id: receipt.job_id, job_code: receipt.job_code })).body;
    if (body.yhat !== undefined && body.yhat !== null) return body;
  }
  return body;
}

describe("the v2 long-poll window", () => {
  it("by default, the official client sees every job finish that ends within the default time limit, and no GET outlasts its 300 s timeout", () => {
    expect(horizon(DEFAULT_CONFIG.v2LongPollMs)).toBeGreaterThanOrEqual(DEFAULT_CONFIG.jobTimeoutMs);
    // Several minutes: a 25 s window gave up on jobs over 81 s.
    expect(horizon(DEFAULT_CONFIG.v2LongPollMs)).toBeGreaterThanOrEqual(10 * 60_000);
    expect(DEFAULT_CONFIG.v2LongPollMs).toBeLessThanOrEqual(CLIENT_GET_TIMEOUT_MS - 10_000);
  });

  it("the official client's three GETs see an 11 s job finish with a 2 s window (3 x 2 + 6 = 12 s)", async () => {
    const v2 = await slowService(11_000, 2_000);
    const post = await v2.post("grid", officialV2Body("grid"));
    expect(post.status, JSON.stringify(post.body)).toBe(200);
    const started = Date.now();
    const body = await officialRead(v2, post.body);
    expect(body).toMatchObject({ status_code: 11, error_code: 0 });
    expect(body.yhat[0][0]).toBeCloseTo(3.2852397, 6);
    expect(Date.now() - started).toBeGreaterThanOrEqual(10_000);
  }, 30_000);

  it(`holds at most ${V2_MAX_HELD_READS} reads per organisation; one more answers at once with the running body`, async () => {
    const v2 = await slowService(3_000, 20_000);
    const post = await v2.post("psr", officialV2Body("psr"));
    const receipt = { job_id: post.body.job_id, job_code: post.body.job_code };
    const held = Array.from({ length: V2_MAX_HELD_READS }, () => v2.results(receipt));
    await sleep(300);
    const extra = await v2.results(receipt);
    expect(extra.status).toBe(200);
    expect(extra.body).toMatchObject({ job_id: receipt.job_id, error_code: 0 });
    expect([1, 10]).toContain(extra.body.status_code);
    expect(extra.ms).toBeLessThan(2_000);
    const answers = await Promise.all(held);
    for (const a of answers) expect(a.body.status_code).toBe(11);
    // The slots are free again: a read of a finished job answers at once, and holding works afterwards.
    expect((await v2.results(receipt)).body.status_code).toBe(11);
  }, 30_000);

  it("rbp serve --v2-long-poll SECONDS sets it (0 to 290), and --help says what it is for", () => {
    expect(parseServeArgs(["--v2-long-poll", "120"]).options).toEqual({ port: 8765, v2LongPollMs: 120_000 });
    expect(parseServeArgs(["--v2-long-poll=0"]).options.v2LongPollMs).toBe(0);
    expect(() => parseServeArgs(["--v2-long-poll", "291"])).toThrow(UsageError);
    expect(() => parseServeArgs(["--v2-long-poll", "1.5"])).toThrow(UsageError);
    expect(() => parseServeArgs(["--v2-long-poll"])).toThrow(UsageError);
    expect(SERVE_USAGE).toContain("--v2-long-poll SECONDS");
    expect(SERVE_USAGE).toContain("official Python client");
    expect(SERVE_USAGE).toContain("3 x SECONDS + 6 s");
    expect(SERVE_USAGE).toContain("default 240");
  });
});
