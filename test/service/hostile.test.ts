/**
 * Hostile requests that used to do harm (issue 11, items 4 and 9): an upload URL built from the
 * caller's Host header, option names looked up on Object.prototype, internal error text and server
 * paths sent to clients, a deeply nested body overflowing the stack, and huge unknown option
 * names copied into every warning.
 */
import { Worker } from "node:worker_threads";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalService } from "../../src/service/index.js";
import { publicFailure } from "../../src/service/reasons.js";
import { Client, quickstart, start } from "./helpers.js";
import { officialGridBody, send, V2 } from "./v2-helpers.js";

let service: LocalService;
let client: Client;
const logs: string[] = [];

beforeAll(async () => {
  ({ service, client } = await start({ workers: 1, log: (line) => logs.push(line) }));
});
afterAll(() => service?.close());

describe("v2 upload URL", () => {
  it("is built from the listening address, never from the Host header", async () => {
    const r = await send("GET", `${service.url}${V2}/payload/upload/url/X`, { "x-api-key": client.apiKey!, host: "evil.example" }, { file_name: "abc.json" });
    expect(r.status).toBe(200);
    expect(r.body.url).not.toContain("evil.example");
    expect(r.body.url.startsWith(`${service.url}${V2}/payload/upload/X/abc.json?token=`)).toBe(true);
  });

  it("uses the configured public URL when there is one", async () => {
    const { service: s, client: c } = await start({ workers: 1, publicUrl: "https://rbp.example.org/base" });
    try {
      const r = await send("GET", `${s.url}${V2}/payload/upload/url/X`, { "x-api-key": c.apiKey!, host: "evil.example" }, { file_name: "abc.json" });
      expect(r.body.url.startsWith(`https://rbp.example.org/base${V2}/payload/upload/X/abc.json?token=`)).toBe(true);
    } finally {
      await s.close();
    }
  });
});

describe("option tables are looked up by own properties", () => {
  it("an option named constructor is an ignored option, not a native function's source", async () => {
    const r = await client.post("/v3/grid", quickstart({ options: { constructor: 1, __proto__x: 1, toString: 2 } }));
    expect(r.status).toBe(200);
    const text = JSON.stringify(r.body.warnings);
    expect(text).toContain('ignored option \\"constructor\\" (not a grid option)');
    expect(text).not.toMatch(/native code|function/);
  });

  it("a value named like an Object.prototype member is refused naming the option", async () => {
    for (const value of ["constructor", "toString", "__proto__", "hasOwnProperty"]) {
      const r = await client.post("/v3/grid", quickstart({ options: { censor_type: value } }));
      expect(r.status, value).toBe(422);
      expect(r.body.field).toBe("options.censor_type");
      expect(r.body.message).not.toMatch(/native code|function/);
    }
  });
});

describe("failure reasons sent to clients", () => {
  it("hide internal error text and server paths; the log keeps the detail", async () => {
    const fixture = new URL("./fixtures/internal-error-worker.mjs", import.meta.url);
    const own: string[] = [];
    const { service: s, client: c } = await start({ workers: 1, spawn: () => new Worker(fixture), log: (l) => own.push(l) });
    try {
      for (const theta0 of [1, -1]) {
        const theta = [...(quickstart().theta as number[])];
        theta[0] = theta0;
        const receipt = await c.post("/v3/psr", quickstart({ theta }));
        expect(receipt.status).toBe(200);
        const r = await c.poll(`/v3/results/${receipt.body.job_id}/${receipt.body.job_code}`);
        expect(r.status).toBe(409);
        const text = JSON.stringify(r.body);
        expect(text).not.toMatch(/RangeError|Set maximum size|EMFILE|\/srv\/rbp/);
        expect(r.body.reason).toMatch(/internal error; the service's log has the detail/);
        const v2 = await send("GET", `${s.url}${V2}/results`, { "x-api-key": c.apiKey! }, { job_id: receipt.body.job_id, job_code: receipt.body.job_code });
        expect(JSON.stringify(v2.body)).not.toMatch(/RangeError|Set maximum size|EMFILE|\/srv\/rbp/);
      }
      expect(own.join("\n")).toContain("RangeError: Set maximum size exceeded");
      expect(own.join("\n")).toContain("EMFILE: too many open files, open '/srv/rbp/jobs/000123.json'");
    } finally {
      await s.close();
    }
  });

  it("keep the engine's own reasons and the service's own sentences", () => {
    const kept = [
      {
        message: "No threshold retains at least 2 observations, so MaxFit has no calibration to choose; lower the thresholds.",
        error_code: 3,
        status_code: 10,
      },
      { message: "the job exceeded its time limit of 600 s", error_code: 2, status_code: 10 },
      { message: "interrupted by a restart, and its inputs were lost", error_code: 2, status_code: 10 },
    ];
    for (const failure of kept) expect(publicFailure(failure)).toEqual({ failure });
    const crashed = publicFailure({ message: "the worker running it crashed: Error: ENOMEM at /usr/lib/node", error_code: 2, status_code: 10 });
    expect(crashed.failure.message).toBe("the worker running the job stopped unexpectedly (it may have run out of memory); the service's log has the detail");
    expect(crashed.detail).toContain("ENOMEM");
  });
});

describe("deeply nested bodies", () => {
  const deep = (depth: number) => `{"access_id":"x","options":{"a":${"[".repeat(depth)}${"]".repeat(depth)}}}`;

  it("v3: a 100,000-deep body answers 422 naming the field and the depth limit", async () => {
    const r = await client.post("/v3/grid", deep(100_000));
    expect(r.status).toBe(422);
    expect(r.body.field).toBe("options.a[0]");
    expect(r.body.message).toContain("at most 32 levels");
    expect(r.body.message).not.toContain("call stack");
    expect(r.body.limit).toBe(32);
  });

  it("v2: the same body answers 400 naming the field", async () => {
    const r = await send("POST", `${service.url}${V2}/grid`, { "x-api-key": client.apiKey! }, deep(100_000));
    expect(r.status).toBe(400);
    expect(r.body.field).toBe("options.a[0]");
    expect(r.body.message).toContain("at most 32 levels");
  });

  it("ordinary bodies (X, attribute_groups) are well within the limit", async () => {
    const r = await client.post("/v3/grid", quickstart({ options: { attribute_groups: [[1, 1, 0, 0, 0]] } }));
    expect(r.status).toBe(200);
  });
});

describe("warnings quote at most a short prefix of what the caller sent", () => {
  // Issue 26, item 4: a name beyond BODY_LIMITS.maxNameChars is now refused at POST (free); the
  // refusal quotes it as short as a warning did.
  it("a 1 MB unknown option name is refused with a short answer, free", async () => {
    const name = "z".repeat(1_000_000);
    const thetas = [quickstart().theta, quickstart().theta, quickstart().theta];
    const used = (await client.get("/v3/quota")).body.used;
    const r = await client.post("/v3/psr", quickstart({ theta: thetas, options: { [name]: 1 } }));
    expect(r.status).toBe(422);
    expect(r.body.field).toBe(`options.${"z".repeat(64)}...(1000000 characters)`);
    expect(JSON.stringify(r.body).length).toBeLessThan(800);
    expect((await client.get("/v3/quota")).body.used).toBe(used);
  });

  it("a 1 MB unknown top-level field (v3) and a v2 unknown key are refused with short answers too", async () => {
    const name = "q".repeat(1_000_000);
    const r = await client.post("/v3/psr", { ...quickstart(), [name]: 1 });
    expect(r.status).toBe(422);
    expect(JSON.stringify(r.body).length).toBeLessThan(800);
    const v2 = await send(
      "POST",
      `${service.url}${V2}/grid`,
      { "x-api-key": client.apiKey! },
      { ...officialGridBody(), access_id: client.accessId, [name]: 1 },
    );
    expect(v2.status).toBe(400);
    expect(JSON.stringify(v2.body).length).toBeLessThan(800);
  });

  it("hundreds of unknown options give at most 20 warnings and a count of the rest", async () => {
    const options = Object.fromEntries(Array.from({ length: 250 }, (_, i) => [`unknown_${i}`, i]));
    const r = await client.post("/v3/psr", quickstart({ options }));
    expect(r.status).toBe(200);
    expect(r.body.warnings).toHaveLength(21);
    expect(r.body.warnings[20]).toBe("... and 230 more warnings like these (not listed)");
  });
});
