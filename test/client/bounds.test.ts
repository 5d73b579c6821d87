/**
 * The client bounds what it reads and scrubs what it returns (issue 11, item 10): an answer above
 * `maxResponseBytes` is not read (by its Content-Length, or once the bytes cross the limit) and
 * the call throws ApiError "response_too_large" saying what to fetch instead, never a "connection
 * dropped"; a key a server echoes back in a receipt's warnings, a result or a field comes back
 * scrubbed, as in errors.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { toJson } from "../../src/api/json.js";
import { ApiError, ConnectionError, createClient, RbpError, type ClientOptions, type RbpClient } from "../../src/client/index.js";
import { DEFAULTS } from "../../src/client/config.js";
import { datasetFromRows, psr } from "../../src/engine/index.js";
import { json, startFaultServer, type Behaviour, type FaultServer } from "./fault-server.js";
import { quickstart } from "./helpers.js";

const KEY = "Kq8zP3xV7mN2wR5tY9uB4cD6hJ1";
const ACCESS = "user-Fw3Lr8Tz2Qp6";
const small = quickstart();
const results = JSON.parse(toJson(psr(datasetFromRows(small.y, small.X), Float64Array.from(small.theta), { threshold: [0.8] })));
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
    timeoutMs: 10_000,
    retryBaseDelayMs: 20,
    retryMaxDelayMs: 100,
    ...options,
  });
}

async function failure(fn: () => Promise<unknown>): Promise<RbpError> {
  try {
    await fn();
  } catch (error) {
    expect(error).toBeInstanceOf(RbpError);
    return error as RbpError;
  }
  throw new Error("expected a failure");
}

/** A completed-job envelope padded to about `bytes`, sent with or without Content-Length, in 64 KiB chunks. */
function large(bytes: number, declared: boolean): Behaviour {
  return (req, res) => {
    req.resume();
    req.on("end", () => {
      const padded = { ...results, padding: "x".repeat(bytes) };
      const text = JSON.stringify({ ...receipt, status: "completed", results: padded });
      res.writeHead(200, { "content-type": "application/json", ...(declared ? { "content-length": String(Buffer.byteLength(text)) } : {}) });
      let at = 0;
      const pump = () => {
        while (at < text.length) {
          const ok = res.write(text.slice(at, at + 65536));
          at += 65536;
          if (!ok) return void res.once("drain", pump);
        }
        res.end();
      };
      res.on("error", () => undefined);
      pump();
    });
  };
}

beforeEach(async () => {
  server = await startFaultServer();
  client = make({ maxResponseBytes: 1024 * 1024 });
});
afterEach(async () => {
  await client.close();
  await server.close();
});

describe("the response body is bounded", () => {
  for (const declared of [true, false]) {
    it(`an answer above maxResponseBytes (${declared ? "Content-Length" : "chunked"}) throws response_too_large, naming a field to fetch instead`, async () => {
      server.on("GET", RESULTS, large(3 * 1024 * 1024, declared));
      const e = await failure(() => client.result(receipt));
      expect(e).toBeInstanceOf(ApiError);
      expect(e).not.toBeInstanceOf(ConnectionError);
      expect(e.code).toBe("response_too_large");
      expect(e.message).toContain("above this client's limit of 1048576 bytes (maxResponseBytes)");
      expect(e.message).toContain('client.field(receipt, "yhat")');
      expect(e.message).not.toContain("connection");
      expect(server.count("GET", RESULTS)).toBe(1); // not retried
    });
  }

  it("an answer within the limit is read whole", async () => {
    server.on("GET", RESULTS, large(512 * 1024, false));
    const r = await client.result(receipt);
    expect(r.yhat[0]).toBeCloseTo(-19.069491, 5);
  });

  it("the default limit is 128 MiB and is configurable", () => {
    expect(DEFAULTS.maxResponseBytes).toBe(128 * 1024 * 1024);
    expect(() => make({ maxResponseBytes: 0 })).toThrow(/maxResponseBytes/);
  });
});

describe("receipts, results and fields are scrubbed of the key", () => {
  it("a key echoed in a receipt's warnings", async () => {
    server.on("POST", "/v3/psr", json(200, { ...receipt, warnings: [`ignored option "${KEY}" (not a psr option)`, `access ${ACCESS}`] }));
    const r = await client.submit("psr", small);
    const text = JSON.stringify(r);
    expect(text).not.toContain(KEY);
    expect(text).not.toContain(ACCESS);
    expect(text).toContain("[redacted]");
  });

  it("a key echoed in a result and in a field", async () => {
    server.on("GET", RESULTS, json(200, { ...receipt, status: "completed", results: { ...results, note: `made for ${KEY}` } }));
    const r = await client.result(receipt);
    expect(JSON.stringify(r)).not.toContain(KEY);
    server.on("GET", "/v3/jobs/7/00000000000000aa/note", json(200, { field: "note", json_path: "$.results.note", shape: [], values: `made for ${KEY}` }));
    const f = await client.field(receipt, "note");
    expect(JSON.stringify(f)).not.toContain(KEY);
  });

  it("a key spelled with JSON escapes is scrubbed too", async () => {
    const escaped = [...KEY].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join("");
    server.on("POST", "/v3/psr", (req, res) => {
      req.resume();
      req.on("end", () => {
        const text = `{"job_id":7,"job_code":"00000000000000aa","warnings":["key ${escaped}"]}`;
        res.writeHead(200, { "content-type": "application/json", "content-length": String(Buffer.byteLength(text)) });
        res.end(text);
      });
    });
    const r = await client.submit("psr", small);
    expect(JSON.stringify(r)).not.toContain(KEY);
  });
});
