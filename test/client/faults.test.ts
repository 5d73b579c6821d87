/**
 * The client against a misbehaving server of the test's own (fault-server.ts): dropped
 * connections, 5xx, 429 with Retry-After, HTML instead of JSON, hangs, a POST dropped in the
 * middle. Reads recover or fail with the right class within their budget; a POST is never sent
 * twice once it may have reached the server; no error or log line holds any part of the key.
 */
import { createServer } from "node:net";
import { inspect } from "node:util";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { toJson } from "../../src/api/json.js";
import {
  AbortError,
  ApiError,
  AuthenticationError,
  ConnectionError,
  createClient,
  FieldTooLargeError,
  JobFailedError,
  NotFoundError,
  PayloadTooLargeError,
  QuotaExceededError,
  RateLimitError,
  RbpError,
  TimeoutError,
  ValidationError,
  type ClientOptions,
  type RbpClient,
} from "../../src/client/index.js";
import { datasetFromRows, psr } from "../../src/engine/index.js";
import { drop, dropAfterBody, dropMidBody, hang, html, json, startFaultServer, type Behaviour, type FaultServer } from "./fault-server.js";
import { quickstart } from "./helpers.js";

const KEY = "Kq8zP3xV7mN2wR5tY9uB4cD6hJ1";
const ACCESS = "user-Fw3Lr8Tz2Qp6";

/** Every error any test here produced, for the key-leak checks at the end. */
const seenErrors: unknown[] = [];
const logLines: string[] = [];

/** The quickstart 7x5 request. */
const small = quickstart();
/** A real v3 results object (the engine's, as the service encodes it). */
const results = JSON.parse(toJson(psr(datasetFromRows(small.y, small.X), Float64Array.from(small.theta), { threshold: [0.8] })));
const envelope = { job_id: 7, job_code: "00000000000000aa", status: "completed", results };
const receipt = { job_id: 7, job_code: "00000000000000aa" };
const RESULTS = "/v3/results/7/00000000000000aa";

let server: FaultServer;
let client: RbpClient;

function make(options: ClientOptions = {}): RbpClient {
  return createClient({
    baseUrl: server.url,
    apiKey: KEY,
    accessId: ACCESS,
    env: {},
    envFile: false,
    timeoutMs: 3_000,
    retryBaseDelayMs: 20,
    retryMaxDelayMs: 100,
    log: (line) => logLines.push(line),
    ...options,
  });
}

/** Runs `fn`, expects it to throw, records the error and returns it. */
async function failure(fn: () => Promise<unknown>): Promise<RbpError> {
  try {
    await fn();
  } catch (error) {
    seenErrors.push(error);
    expect(error).toBeInstanceOf(RbpError);
    return error as RbpError;
  }
  throw new Error("expected a failure");
}

/** Holds the request unanswered, and aborts `controller` once it has arrived whole. */
const abortWhenSeen =
  (controller: AbortController): Behaviour =>
  (req, res, seen) => {
    hang(req, res, seen);
    req.on("end", () => controller.abort());
  };

beforeEach(async () => {
  server = await startFaultServer();
  client = make();
});
afterEach(async () => {
  await client.close();
  await server.close();
});

describe("reads recover from transient faults", () => {
  it("a dropped connection, then an answer", async () => {
    server.on("GET", "/v3/quota", drop, json(200, { quota: 10, used: 1, remaining: 9 }));
    expect(await client.quota()).toEqual({ quota: 10, used: 1, remaining: 9 });
    expect(server.count("GET", "/v3/quota")).toBe(2);
  });

  it("500, then an answer", async () => {
    server.on("GET", RESULTS, json(500, { message: "boom", error: "internal_error", status_code: 500, error_code: 1 }), json(200, envelope));
    const r = await client.result(receipt);
    expect(r.yhat[0]).toBeCloseTo(-19.069491, 5);
    expect(server.count("GET", RESULTS)).toBe(2);
  });

  it("429 with Retry-After: 1, then an answer: waits the second it is told", async () => {
    server.on("GET", "/v3/quota", json(429, { message: "Too Many Requests" }, { "retry-after": "1" }), json(200, { quota: 1, used: 0, remaining: 1 }));
    const before = logLines.length;
    await client.quota();
    expect(server.count("GET", "/v3/quota")).toBe(2);
    // the delay the transport chose is in its log (sleep itself is pinned under fake timers in policy.test.ts)
    expect(logLines.slice(before).filter((l) => /retry 1\/2 in 1000ms/.test(l))).toHaveLength(1);
  });

  it("an HTML 502, then an answer", async () => {
    server.on("GET", "/v3/quota", html(502), json(200, { quota: 1, used: 0, remaining: 1 }));
    expect((await client.quota()).quota).toBe(1);
  });
});

describe("reads that keep failing fail with the right class within their budget", () => {
  it("dropped every time: ConnectionError after 1 + maxRetries attempts", async () => {
    server.on("GET", "/v3/quota", drop);
    const e = await failure(() => client.quota());
    expect(e).toBeInstanceOf(ConnectionError);
    expect((e as ConnectionError).maybeSent).toBe(true);
    expect(e.attempts).toBe(3);
    expect(server.count("GET", "/v3/quota")).toBe(3);
  });

  it("500 every time: ApiError 500 after 3 attempts", async () => {
    server.on("GET", "/v3/quota", json(500, { message: "boom", error: "internal_error", status_code: 500, error_code: 1 }));
    const e = await failure(() => client.quota());
    expect(e).toBeInstanceOf(ApiError);
    expect(e.status).toBe(500);
    expect(e.code).toBe("internal_error");
    expect(e.attempts).toBe(3);
  });

  it("a Retry-After beyond maxRetryAfterMs is not waited for: RateLimitError at once", async () => {
    server.on("GET", "/v3/quota", json(429, { message: "Too Many Requests" }, { "retry-after": "3600" }));
    const before = logLines.length;
    const e = await failure(() => client.quota());
    expect(logLines.slice(before).some((l) => /retry/.test(l))).toBe(false);
    expect(e).toBeInstanceOf(RateLimitError);
    expect((e as RateLimitError).retryAfterMs).toBe(3_600_000);
    expect(server.count("GET", "/v3/quota")).toBe(1);
  });

  it("HTML instead of JSON on a 502: ApiError with a short, readable excerpt (no parse crash)", async () => {
    server.on("GET", "/v3/quota", html(502, { echoHeaders: true }));
    const e = await failure(() => client.quota());
    expect(e).toBeInstanceOf(ApiError);
    expect(e.status).toBe(502);
    const excerpt = (e as ApiError).excerpt!;
    expect(excerpt).toContain("502 Bad Gateway");
    expect(excerpt).not.toContain("<");
    expect(excerpt).not.toContain("color:red");
    expect(excerpt.length).toBeLessThanOrEqual(200);
    expect(e.message).toContain("not JSON");
  });

  it("HTML on a 200: ApiError, not retried", async () => {
    server.on("GET", "/v3/quota", html(200));
    const e = await failure(() => client.quota());
    expect(e).toBeInstanceOf(ApiError);
    expect(e.code).toBe("not_json");
    expect(server.count("GET", "/v3/quota")).toBe(1);
  });

  it("HTML on a 401 still gives AuthenticationError", async () => {
    server.on("GET", "/v3/quota", html(401, { echoHeaders: true }));
    const e = await failure(() => client.quota());
    expect(e).toBeInstanceOf(AuthenticationError);
    expect(e.status).toBe(401);
  });

  it("a hang: TimeoutError when the budget runs out", async () => {
    server.on("GET", "/v3/quota", hang);
    const e = await failure(() => client.quota({ timeoutMs: 300 }));
    expect(e).toBeInstanceOf(TimeoutError);
    expect((e as TimeoutError).phase).toBe("request");
    expect((e as TimeoutError).timeoutMs).toBe(300);
    expect(e.message).toContain("no answer within 300 ms");
  });

  it("the caller's signal aborts a hanging read at once", async () => {
    const controller = new AbortController();
    // aborted once the server holds the request (an event); a read that ignored the signal would hang to
    // its 30 s budget and fail this test by vitest's timeout, or end in TimeoutError
    server.on("GET", "/v3/quota", abortWhenSeen(controller));
    const e = await failure(() => client.quota({ signal: controller.signal, timeoutMs: 30_000 }));
    expect(e).toBeInstanceOf(AbortError);
    expect(server.count("GET", "/v3/quota")).toBe(1);
  });
});

describe("a POST is never sent twice once it may have reached the server", () => {
  const big = (() => {
    // ~1.5 MB of X so that the body arrives in several chunks.
    const X = Array.from({ length: 20_000 }, (_, i) => [i * 0.5 + 0.123456, Math.sin(i) * 1000.654321, (i % 97) * 1.000001, Math.cos(i) + 0.000123]);
    const y = X.map((r) => r[0] - r[1] * 0.01 + r[3]);
    return { y, X, theta: [1, 2, 3, 4] };
  })();

  it("connection dropped in the middle of the body: ConnectionError (maybe created and charged), one POST", async () => {
    server.on("POST", "/v3/psr", dropMidBody);
    const e = await failure(() => client.submit("psr", big));
    expect(e).toBeInstanceOf(ConnectionError);
    expect((e as ConnectionError).maybeSent).toBe(true);
    expect(e.message).toMatch(/may have been created and charged/);
    expect(e.message).toMatch(/not re-sent/);
    // the transport is sequential: a re-send would have been an attempt before the call returned
    expect(e.attempts).toBe(1);
    expect(server.count("POST", "/v3/psr")).toBe(1);
  });

  it("connection dropped after the whole body, before the answer: one POST", async () => {
    server.on("POST", "/v3/psr", dropAfterBody);
    const e = await failure(() => client.submit("psr", small));
    expect(e).toBeInstanceOf(ConnectionError);
    expect((e as ConnectionError).maybeSent).toBe(true);
    expect(e.attempts).toBe(1);
    expect(server.count("POST", "/v3/psr")).toBe(1);
    expect(server.requests[0].complete).toBe(true);
  });

  it("no answer in time: TimeoutError that says the job may exist; one POST", async () => {
    server.on("POST", "/v3/psr", hang);
    const e = await failure(() => client.submit("psr", small, { timeoutMs: 300 }));
    expect(e).toBeInstanceOf(TimeoutError);
    expect((e as TimeoutError).maybeSent).toBe(true);
    expect(e.message).toMatch(/may have been created and charged/);
    expect(e.attempts).toBe(1);
    expect(server.count("POST", "/v3/psr")).toBe(1);
  });

  it("500 and 503 with Retry-After on a POST are not retried", async () => {
    server.on("POST", "/v3/psr", json(500, { message: "boom", error: "internal_error", status_code: 500, error_code: 1 }));
    server.on("POST", "/v3/grid", json(503, { message: "busy", error: "unavailable", status_code: 503, error_code: 1 }, { "retry-after": "0" }));
    expect(await failure(() => client.submit("psr", small))).toBeInstanceOf(ApiError);
    expect(await failure(() => client.submit("grid", small))).toBeInstanceOf(ApiError);
    expect(server.count("POST", "/v3/psr")).toBe(1);
    expect(server.count("POST", "/v3/grid")).toBe(1);
  });

  it("429 on a POST: RateLimitError (throttled) or QuotaExceededError (plan spent), one POST each", async () => {
    server.on("POST", "/v3/psr", json(429, { message: "Too Many Requests", error: "throttled", status_code: 429, error_code: 1 }, { "retry-after": "0" }));
    server.on(
      "POST",
      "/v3/grid",
      json(429, {
        message: "Limit Exceeded: this request costs 1 unit and the plan has 0 left",
        error: "quota_exceeded",
        status_code: 429,
        error_code: 1,
        remaining: 0,
        required: 1,
        quota: 5,
      }),
    );
    const throttled = await failure(() => client.submit("psr", small));
    expect(throttled).toBeInstanceOf(RateLimitError);
    expect((throttled as RateLimitError).retryAfterMs).toBe(0);
    const spent = await failure(() => client.submit("grid", small));
    expect(spent).toBeInstanceOf(QuotaExceededError);
    expect((spent as QuotaExceededError).remaining).toBe(0);
    expect((spent as QuotaExceededError).required).toBe(1);
    expect(server.count("POST", "/v3/psr")).toBe(1);
    expect(server.count("POST", "/v3/grid")).toBe(1);
  });

  it("connection refused: provably never sent, so retried; then ConnectionError saying no job was created", async () => {
    const port = await freePort();
    const refused = createClient({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: KEY,
      accessId: ACCESS,
      env: {},
      envFile: false,
      retryBaseDelayMs: 10,
      retryMaxDelayMs: 20,
    });
    try {
      const e = await failure(() => refused.submit("psr", small));
      expect(e).toBeInstanceOf(ConnectionError);
      expect((e as ConnectionError).maybeSent).toBe(false);
      expect(e.attempts).toBe(3);
      expect(e.message).toMatch(/not sent, so no job was created/);
    } finally {
      await refused.close();
    }
  });

  it("a POST that was refused at connect succeeds once the server is up", async () => {
    const port = await freePort();
    let srv: import("node:http").Server | undefined;
    const late = createClient({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: KEY,
      accessId: ACCESS,
      env: {},
      envFile: false,
      maxRetries: 10,
      retryBaseDelayMs: 50,
      retryMaxDelayMs: 100,
      // the server comes up when the first refusal is logged (an event, not a timer)
      log: (line) => {
        if (/retry 1\//.test(line)) srv!.listen(port, "127.0.0.1");
      },
    });
    let posts = 0;
    srv = (await import("node:http")).createServer((req, res) => {
      posts++;
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ job_id: 1, job_code: "abc" }));
      });
    });
    try {
      expect(await late.submit("psr", small)).toEqual({ job_id: 1, job_code: "abc" });
      expect(posts).toBe(1);
    } finally {
      await late.close();
      await new Promise((r) => srv!.close(r));
    }
  });
});

describe("error bodies map to classes a caller can catch", () => {
  const err = (status: number, error: string, extra: Record<string, unknown> = {}) =>
    json(status, { message: `${error} happened`, error, status_code: status, error_code: 1, ...extra });

  it("403, 404, 409, 413 field, 413 payload, 422", async () => {
    server.on("GET", "/v3/quota", err(403, "forbidden", { field: "x-api-key" }));
    server.on("GET", RESULTS, err(409, "job_failed", { job_id: 7, reason: "singular covariance", error_code: 3 }));
    server.on("GET", "/v3/results/8/00000000000000bb", err(404, "not_found"));
    server.on(
      "GET",
      "/v3/jobs/7/00000000000000aa/prediction_weights",
      err(413, "field_too_large", { field: "prediction_weights", smaller_fields: ["prediction_weights/weights"], bytes: 9000, limit: 4096 }),
    );
    server.on("POST", "/v3/psr", err(413, "payload_too_large", { limit: 1000 }));
    server.on("POST", "/v3/grid", err(422, "invalid_input", { field: "options.min_k", details: [{ field: "options.min_k", expected: "an integer <= K" }] }));

    const auth = await failure(() => client.quota());
    expect(auth).toBeInstanceOf(AuthenticationError);
    expect((auth as AuthenticationError).field).toBe("x-api-key");

    const failed = await failure(() => client.result(receipt));
    expect(failed).toBeInstanceOf(JobFailedError);
    expect((failed as JobFailedError).reason).toBe("singular covariance");
    expect((failed as JobFailedError).jobId).toBe(7);
    expect((failed as JobFailedError).errorCode).toBe(3);

    expect(await failure(() => client.result({ job_id: 8, job_code: "00000000000000bb" }))).toBeInstanceOf(NotFoundError);

    const field = await failure(() => client.field(receipt, "prediction_weights"));
    expect(field).toBeInstanceOf(FieldTooLargeError);
    expect((field as FieldTooLargeError).smallerPaths).toEqual(["prediction_weights/weights"]);
    expect((field as FieldTooLargeError).limit).toBe(4096);

    const payload = await failure(() => client.submit("psr", small));
    expect(payload).toBeInstanceOf(PayloadTooLargeError);
    expect((payload as PayloadTooLargeError).local).toBe(false);

    const invalid = await failure(() => client.submit("grid", small));
    expect(invalid).toBeInstanceOf(ValidationError);
    expect((invalid as ValidationError).field).toBe("options.min_k");
    expect((invalid as ValidationError).expected).toBe("an integer <= K");
    expect((invalid as ValidationError).local).toBe(false);
  });
});

describe("wait", () => {
  // The schedule itself (when each read happens, the 202's Retry-After as a floor after the first
  // second, three failures in a row) is pinned on the fake clock in policy.test.ts; here the reads go
  // through the real transport, and only what they read is checked.

  /** 202 (with Retry-After: 1) for the first `pending` reads, then the envelope. */
  function job(pending: number): { behaviour: Behaviour; reads: () => number } {
    let reads = 0;
    const running = json(202, { job_id: 7, job_code: "00000000000000aa", status: "running", status_code: 10, error_code: 0 }, { "retry-after": "1" });
    const done = json(200, envelope);
    return {
      reads: () => reads,
      behaviour: (req, res, seen) => (++reads > pending ? done : running)(req, res, seen),
    };
  }

  it("reads until the job is done, although each 202 says Retry-After: 1 (quick reads in the first second)", async () => {
    const j = job(5);
    server.on("GET", RESULTS, j.behaviour);
    const progress: string[] = [];
    const result = await client.wait(receipt, { onProgress: (p) => progress.push(p.status) });
    expect(result.yhat[0]).toBeCloseTo(-19.069491, 5);
    expect(j.reads()).toBe(6);
    expect(progress).toEqual(["running", "running", "running", "running", "running", "completed"]);
  });

  it("a 429 while polling slows down and goes on", async () => {
    const j = job(0);
    server.on(
      "GET",
      RESULTS,
      json(429, { message: "Too Many Requests" }, { "retry-after": "0" }),
      json(429, { message: "Too Many Requests" }, { "retry-after": "0" }),
      json(429, { message: "Too Many Requests" }, { "retry-after": "0" }),
      j.behaviour,
    );
    const r = await client.wait(receipt);
    expect(r.fit[0]).toBeCloseTo(0.183713, 5);
  });

  it("timeoutMs: TimeoutError (phase wait) naming the job, which goes on", async () => {
    server.on("GET", RESULTS, json(202, { status: "running" }));
    const e = await failure(() => client.wait(receipt, { timeoutMs: 300 }));
    expect(e).toBeInstanceOf(TimeoutError);
    expect((e as TimeoutError).phase).toBe("wait");
    expect((e as TimeoutError).jobId).toBe(7);
    expect((e as TimeoutError).timeoutMs).toBe(300);
    expect(e.message).toMatch(/goes on/);
  });

  it("the signal aborts promptly, during a sleep and during a request", async () => {
    // aborted as the first answer leaves the server: the wait is reading it or in its 60 s sleep (the
    // sleep's own abort is pinned on the fake clock in policy.test.ts)
    const c1 = new AbortController();
    server.on("GET", RESULTS, (req, res, seen) => {
      json(202, { status: "running" })(req, res, seen);
      res.on("finish", () => c1.abort());
    });
    expect(await failure(() => client.wait(receipt, { signal: c1.signal, initialDelayMs: 60_000, maxDelayMs: 60_000 }))).toBeInstanceOf(AbortError);

    // aborted while the server holds the read
    const c2 = new AbortController();
    server.on("GET", RESULTS, abortWhenSeen(c2));
    expect(await failure(() => client.wait(receipt, { signal: c2.signal }))).toBeInstanceOf(AbortError);
  });

  it("a failed job ends the wait with JobFailedError", async () => {
    server.on(
      "GET",
      RESULTS,
      json(202, { status: "running" }),
      json(409, { message: "the job failed: singular", error: "job_failed", status_code: 409, error_code: 3, job_id: 7, reason: "singular" }),
    );
    const e = await failure(() => client.wait(receipt));
    expect(e).toBeInstanceOf(JobFailedError);
    expect((e as JobFailedError).reason).toBe("singular");
  });
});

describe("the API key is never in an error or a log line", () => {
  it("an error page that echoes the request headers is scrubbed", async () => {
    server.on("GET", "/v3/quota", html(500, { echoHeaders: true }));
    const e = await failure(() => client.quota());
    expect(server.requests[0].headers["x-api-key"]).toBe(KEY); // the key was sent, and echoed back
    expect((e as ApiError).excerpt).toContain("[redacted]");
  });

  it("a JSON error body that quotes the key is scrubbed", async () => {
    server.on(
      "GET",
      "/v3/quota",
      json(403, { message: `Forbidden: key ${KEY} is unknown`, error: "forbidden", status_code: 403, error_code: 1, echo: { "x-api-key": KEY } }),
    );
    const e = await failure(() => client.quota());
    expect(e.message).toContain("[redacted]");
  });

  it("the client itself does not show the key", () => {
    expect(inspect(client, { depth: 10, showHidden: true })).not.toContain(KEY.slice(0, 8));
    expect(JSON.stringify(client)).not.toContain(KEY.slice(0, 8));
  });
});

afterAll(() => {
  // Key-leak check over every error the suite produced and every log line.
  const windows = (s: string) => Array.from({ length: s.length - 5 }, (_, i) => s.slice(i, i + 6));
  const pieces = [...windows(KEY), ...windows(ACCESS)];
  expect(seenErrors.length).toBeGreaterThan(20);
  for (const error of seenErrors) {
    const e = error as Error;
    const views = [
      e.message,
      String(e.stack),
      JSON.stringify(error),
      inspect(error, { depth: 20, showHidden: true }),
      String((e as Error & { cause?: unknown }).cause ?? ""),
      inspect((e as Error & { cause?: unknown }).cause, { depth: 20, showHidden: true }),
    ];
    for (const view of views) {
      for (const piece of pieces) {
        if (view.includes(piece)) throw new Error(`${e.name} shows a part of a secret (${piece}): ${view.slice(0, 300)}`);
      }
    }
  }
  for (const line of logLines) for (const piece of pieces) expect(line).not.toContain(piece);
  expect(logLines.length).toBeGreaterThan(10);
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}
