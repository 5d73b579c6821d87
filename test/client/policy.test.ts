/**
 * The client's policies, pinned one by one (issue 26: mutations that no test caught). Timing is
 * never measured here: the polling loop, sleeps and attempt deadlines run under vitest's fake
 * timers (setTimeout and performance.now), so "after 1 s, not before" is an exact statement about
 * the fake clock. The retry statuses go through the real transport against a loopback server.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { attemptSignal, DEADLINE, sleep } from "../../src/client/abort.js";
import { AbortError, ApiError, ConnectionError, createClient, RateLimitError, TimeoutError, type RbpClient } from "../../src/client/index.js";
import { pollUntil, type PollCheck, type PollLoop } from "../../src/client/polling.js";
import { isRetryableStatus } from "../../src/client/retry.js";
import type { JobStatus } from "../../src/client/types.js";
import { json, startFaultServer, type FaultServer } from "./fault-server.js";

describe("which statuses a read retries", () => {
  it("429, 500, 502, 503 and 504; no other", () => {
    for (const status of [429, 500, 502, 503, 504]) expect(isRetryableStatus(status), String(status)).toBe(true);
    for (const status of [200, 400, 401, 404, 409, 413, 422, 428, 430, 499, 501, 505, 511]) expect(isRetryableStatus(status), String(status)).toBe(false);
  });

  describe("through the transport, against a loopback server", () => {
    let server: FaultServer;
    let client: RbpClient;
    const log: string[] = [];
    beforeEach(async () => {
      server = await startFaultServer();
      log.length = 0;
      client = createClient({
        baseUrl: server.url,
        apiKey: "policy-test-key",
        accessId: "user-policy",
        env: {},
        envFile: false,
        retryBaseDelayMs: 1,
        retryMaxDelayMs: 2,
        log: (line) => log.push(line),
      });
    });
    afterEach(async () => {
      await client.close();
      await server.close();
    });
    const quota = { quota: 3, used: 1, remaining: 2 };
    const error = (status: number) => json(status, { message: `status ${status}`, error: "unavailable", status_code: status, error_code: 1 });

    it.each([503, 504])("a GET answered %i is tried again, and the second answer is returned", async (status) => {
      server.on("GET", "/v3/quota", error(status), json(200, quota));
      expect(await client.quota()).toEqual(quota);
      expect(server.count("GET", "/v3/quota")).toBe(2);
    });

    it("a GET answered 501 (not implemented: will not change) is not tried again", async () => {
      server.on("GET", "/v3/quota", error(501), json(200, quota));
      await expect(client.quota()).rejects.toBeInstanceOf(ApiError);
      expect(server.count("GET", "/v3/quota")).toBe(1);
    });

    it("a 429's Retry-After is the delay the transport chooses (its log says so), not the backoff", async () => {
      server.on("GET", "/v3/quota", json(429, { message: "Too Many Requests" }, { "retry-after": "0.05" }), json(200, quota));
      expect(await client.quota()).toEqual(quota);
      expect(log.some((line) => /retry 1\/2 in 50ms/.test(line))).toBe(true);
    });
  });
});

describe("sleep and the attempt's deadline (fake timers)", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("sleep(ms) resolves at ms, not before", async () => {
    let done = false;
    const slept = sleep(1_000).then(() => (done = true));
    await vi.advanceTimersByTimeAsync(999);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await slept;
    expect(done).toBe(true);
  });

  it("sleep rejects with the signal's reason as soon as it fires", async () => {
    const controller = new AbortController();
    const slept = sleep(60_000, controller.signal).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(100);
    controller.abort("stop");
    expect(await slept).toBe("stop");
    expect(vi.getTimerCount()).toBe(0);
  });

  it("an attempt's signal fires DEADLINE at its timeout, not before; the caller's abort passes its own reason", async () => {
    const attempt = attemptSignal(300);
    await vi.advanceTimersByTimeAsync(299);
    expect(attempt.signal.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(attempt.signal.reason).toBe(DEADLINE);
    attempt.dispose();

    const caller = new AbortController();
    const second = attemptSignal(300, caller.signal);
    caller.abort("mine");
    expect(second.signal.reason).toBe("mine");
    second.dispose();
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe("the polling loop (fake timers and clock)", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const schedule = { initialDelayMs: 10, factor: 1.5, maxDelayMs: 2000 };
  type Answer = PollCheck<string> | Error;
  /** A loop whose reads answer from `script` (the last answer repeats); records the fake time of each read. */
  function loop(script: Answer[], extra: Partial<PollLoop<string>> = {}) {
    const reads: number[] = [];
    const statuses: JobStatus[] = [];
    const answers = [...script];
    const spec: PollLoop<string> = {
      schedule,
      what: "job 7",
      jobId: 7,
      async check() {
        reads.push(performance.now());
        const answer = answers.length > 1 ? answers.shift()! : answers[0];
        if (answer instanceof Error) throw answer;
        return answer;
      },
      onPoll: (status) => statuses.push(status),
      ...extra,
    };
    return { spec, reads, statuses };
  }
  const running = (retryAfterMs?: number): PollCheck<string> => ({ done: false, status: "running", retryAfterMs });
  const done: PollCheck<string> = { done: true, value: "result", status: "completed" };
  const dropped = () => new ConnectionError("the connection failed", { maybeSent: true });
  /** Runs the loop to its end on the fake clock; its value or its error, and the fake time it ended. */
  async function run(spec: PollLoop<string>): Promise<{ value?: string; error?: unknown; at: number }> {
    const t0 = performance.now();
    const outcome = pollUntil(spec).then(
      (value) => ({ value, at: performance.now() - t0 }),
      (error: unknown) => ({ error, at: performance.now() - t0 }),
    );
    await vi.runAllTimersAsync();
    return outcome;
  }

  it("reads at once, then after 10, 15, 22, 33 ... ms: a job done at 150 ms is noticed at the next read", async () => {
    const { spec, reads } = loop([running(), running(), running(), running(), running(), running(), done]);
    const r = await run(spec);
    expect(r.value).toBe("result");
    const t0 = reads[0];
    // setTimeout waits whole milliseconds: 10, 15, 22, 33, 50, 75
    expect(reads.map((t) => t - t0)).toEqual([0, 10, 25, 47, 80, 130, 205]);
  });

  it("a 202's Retry-After (1 s) is ignored in the first second, then a floor, and never above the cap", async () => {
    const { spec, reads } = loop([...Array.from({ length: 18 }, () => running(1_000)), done]);
    await run(spec);
    const t = reads.map((x) => x - reads[0]);
    const gaps = t.slice(1).map((x, i) => x - t[i]);
    const early = gaps.filter((_, i) => t[i] < 1_000);
    expect(early.every((g) => g < 1_000)).toBe(true);
    expect(early.length).toBeGreaterThanOrEqual(8);
    const late = gaps.filter((_, i) => t[i] >= 1_000);
    expect(late.length).toBeGreaterThan(3);
    expect(late.every((g) => g >= 1_000 && g <= 2_000)).toBe(true);
    expect(late.at(-1)).toBe(2_000);
  });

  it("goes on after two failures in a row; the third in a row ends the wait with that error", async () => {
    const twice = loop([dropped(), dropped(), done]);
    expect((await run(twice.spec)).value).toBe("result");
    expect(twice.reads).toHaveLength(3);
    // each failure waits the cap before the next read
    expect(twice.reads[1] - twice.reads[0]).toBe(2_000);

    const thrice = loop([dropped(), dropped(), dropped(), done]);
    const r = await run(thrice.spec);
    expect(r.error).toBeInstanceOf(ConnectionError);
    expect(thrice.reads).toHaveLength(3);
  });

  it("a good read resets the count: failures apart from one another never end the wait", async () => {
    const { spec, reads } = loop([dropped(), dropped(), running(), dropped(), dropped(), running(), dropped(), dropped(), done]);
    expect((await run(spec)).value).toBe("result");
    expect(reads).toHaveLength(9);
  });

  it("5xx that survived the transport count as failures; a 4xx ends the wait at once", async () => {
    const fiveHundreds = loop([new ApiError("503", { status: 503 }), new ApiError("500", { status: 500 }), done]);
    expect((await run(fiveHundreds.spec)).value).toBe("result");
    const fourHundred = loop([new ApiError("404", { status: 404 }), done]);
    const r = await run(fourHundred.spec);
    expect(r.error).toBeInstanceOf(ApiError);
    expect(fourHundred.reads).toHaveLength(1);
  });

  it("a 429 waits its Retry-After (else the cap) and does not count as a failure", async () => {
    const limited = (ms?: number) => new RateLimitError("slow down", { retryAfterMs: ms });
    const { spec, reads } = loop([limited(300), limited(), limited(5), limited(5), done]);
    expect((await run(spec)).value).toBe("result");
    const gaps = reads.slice(1).map((x, i) => x - reads[i]);
    expect(gaps).toEqual([300, 2_000, 5, 5]);
  });

  it("timeoutMs: TimeoutError (phase wait) at the deadline, after a last read, naming the job", async () => {
    const { spec, reads } = loop([running()], { timeoutMs: 300 });
    const r = await run(spec);
    expect(r.error).toBeInstanceOf(TimeoutError);
    expect((r.error as TimeoutError).phase).toBe("wait");
    expect((r.error as TimeoutError).jobId).toBe(7);
    expect((r.error as TimeoutError).message).toMatch(/job 7 still running after 300 ms/);
    expect((r.error as TimeoutError).timeoutMs).toBe(300);
    expect((r.error as TimeoutError).code).toBe("wait_timeout");
    expect((r.error as TimeoutError).attempts).toBe(reads.length);
    expect(r.at).toBe(300);
    expect(reads.at(-1)! - reads[0]).toBe(300);
  });

  it("the caller's signal ends the wait at once, during a sleep", async () => {
    const controller = new AbortController();
    const { spec, reads } = loop([running()], { signal: controller.signal, schedule: { ...schedule, initialDelayMs: 5_000, maxDelayMs: 5_000 } });
    const t0 = performance.now();
    const outcome = pollUntil(spec).catch((e: unknown) => ({ error: e, at: performance.now() - t0 }));
    await vi.advanceTimersByTimeAsync(100);
    controller.abort();
    const r = (await outcome) as { error: unknown; at: number };
    expect(r.error).toBeInstanceOf(AbortError);
    expect(r.at).toBe(100);
    expect(reads).toHaveLength(1);
  });

  it("each read's budget: none without a deadline; what is left of it, but at least 250 ms for the last read", async () => {
    const budgets: Array<number | undefined> = [];
    const free = loop([running(), done]);
    const check = free.spec.check;
    free.spec.check = (timeoutMs, signal) => (budgets.push(timeoutMs), check(timeoutMs, signal));
    await run(free.spec);
    expect(budgets).toEqual([undefined, undefined]);

    budgets.length = 0;
    const bounded = loop([running()], { timeoutMs: 1_000 });
    const check2 = bounded.spec.check;
    bounded.spec.check = (timeoutMs, signal) => (budgets.push(timeoutMs), check2(timeoutMs, signal));
    await run(bounded.spec);
    expect(budgets[0]).toBe(1_000);
    expect(budgets[1]).toBe(990);
    expect(budgets.at(-1)).toBe(250);
    expect(budgets.every((b, i) => i === 0 || b! <= budgets[i - 1]!)).toBe(true);
  });

  it("a read's own TimeoutError: at the wait's deadline it is the wait's timeout; before it, a failure like a dropped connection", async () => {
    const requestTimeout = () => new TimeoutError("no answer", { timeoutMs: 250, phase: "request" });
    const atDeadline = loop([running()], { timeoutMs: 300 });
    const check = atDeadline.spec.check;
    atDeadline.spec.check = async (timeoutMs, signal) => {
      if (performance.now() >= 300) throw requestTimeout();
      return check(timeoutMs, signal);
    };
    const r = await run(atDeadline.spec);
    expect((r.error as TimeoutError).phase).toBe("wait");
    expect((r.error as TimeoutError).code).toBe("wait_timeout");
    // the read that timed out at the deadline (not recorded in reads) is not counted as a poll
    expect((r.error as TimeoutError).attempts).toBe(atDeadline.reads.length);
    expect(r.at).toBe(300);

    const early = loop([requestTimeout(), requestTimeout(), done], { timeoutMs: 60_000 });
    expect((await run(early.spec)).value).toBe("result");
    const thrice = loop([requestTimeout()]);
    const e = await run(thrice.spec);
    expect((e.error as TimeoutError).phase).toBe("request");
    expect(thrice.reads).toHaveLength(3);
  });

  it("a pause never runs past the deadline: a 429 asking for 10 s gets a last read at the deadline", async () => {
    const { spec, reads } = loop([new RateLimitError("slow down", { retryAfterMs: 10_000 })], { timeoutMs: 300 });
    const r = await run(spec);
    expect((r.error as TimeoutError).phase).toBe("wait");
    expect(reads.map((t) => t - reads[0])).toEqual([0, 300]);
    expect(r.at).toBe(300);
  });

  it("aborted before it starts: AbortError without a read; a read's AbortError is the wait's", async () => {
    const controller = new AbortController();
    controller.abort();
    const before = loop([done], { signal: controller.signal });
    const r = await run(before.spec);
    expect(r.error).toBeInstanceOf(AbortError);
    expect((r.error as AbortError).message).toBe("waiting for job 7 was aborted by the caller");
    expect((r.error as AbortError).attempts).toBe(0);
    expect(before.reads).toHaveLength(0);

    const during = loop([running(), new AbortError("request aborted")]);
    const e = await run(during.spec);
    expect((e.error as AbortError).message).toBe("waiting for job 7 was aborted by the caller");
    expect((e.error as AbortError).attempts).toBe(1);
  });

  it("only connection errors, timeouts and 5xx are failures to ride out: a bug or a status-less ApiError ends the wait", async () => {
    for (const error of [new Error("a bug"), new ApiError("odd", {}), new ApiError("409", { status: 409 })]) {
      const { spec, reads } = loop([error, done]);
      expect((await run(spec)).error).toBe(error);
      expect(reads).toHaveLength(1);
    }
  });

  it("onPoll hears every read: its status, the time since the wait began, and the count", async () => {
    const heard: Array<[JobStatus, number, number]> = [];
    const { spec } = loop([running(), { done: false, status: "queued" }, done], { onPoll: (status, elapsed, polls) => heard.push([status, elapsed, polls]) });
    await run(spec);
    expect(heard).toEqual([
      ["running", 0, 1],
      ["queued", 10, 2],
      ["completed", 25, 3],
    ]);
  });
});
