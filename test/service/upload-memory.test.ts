/**
 * Uploads streamed (issue 26, item 2; src/service/matrix-stream.ts, uploads.ts): a v2 X upload's
 * values go to the store block by block as the body arrives, so the memory of an upload is a few
 * blocks, not its size. Shown two ways, neither by timing:
 * - the reader's own gauge of what it holds (UPLOAD_BUFFERS) stays within a few blocks per upload
 *   while four uploads of 8 MB run at once; and an upload of several blocks comes back as sent,
 *   on both stores (the file store's files, PostgreSQL's chunk rows);
 * - a server process (`rbp serve`) given four concurrent 60 MB uploads peaks (VmHWM) within 300 MB
 *   of its RSS before them (the whole-body reader took about 4 x 4 x 60 MB).
 * Plus the streaming reader itself, on bodies cut at every byte; the cap on uploads received at
 * once; and the cap on the large POST bodies read and parsed at once (their memory is their size).
 */
import { readFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import type { ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnServe } from "../../scripts/rbp-serve.js";
import type { LocalService } from "../../src/service/index.js";
import { BLOCK_VALUES, MatrixReader, UPLOAD_BUFFERS } from "../../src/service/matrix-stream.js";
import { MAX_UPLOADS_AT_ONCE } from "../../src/service/v2.js";
import { MAX_BODY_BYTES_IN_FLIGHT, ServiceError } from "../../src/service/http.js";
import { quickstart, start, TEST_STORE } from "./helpers.js";
import { send, V2 } from "./v2-helpers.js";

/** A JSON X of `rows` rows of `cols` numbers, a value missing now and then; and its values. */
function matrix(rows: number, cols: number, seed: number): { text: Buffer; values: Float64Array } {
  const values = new Float64Array(rows * cols);
  const parts: string[] = [];
  for (let i = 0; i < rows; i++) {
    const row: string[] = [];
    for (let j = 0; j < cols; j++) {
      const missing = (i * 7 + j + seed) % 97 === 0;
      const v = missing ? NaN : ((i * 131 + j * 17 + seed) % 10_007) / 13 - 300;
      values[i * cols + j] = v;
      row.push(missing ? (i % 2 === 0 ? "null" : "NaN") : String(v));
    }
    parts.push(`[${row.join(",")}]`);
  }
  return { text: Buffer.from(`[${parts.join(",")}]`), values };
}

/** About `bytes` of JSON X: one row of 20 numbers (`seed` makes them differ per body), repeated. */
function repeated(bytes: number, seed: number): string {
  const row = `[${Array.from({ length: 20 }, (_, j) => ((j * 7919 + seed) / 13).toFixed(9)).join(",")}]`;
  return `[${new Array<string>(Math.ceil(bytes / (row.length + 1))).fill(row).join(",")}]`;
}

async function uploadUrl(url: string, apiKey: string, name: string): Promise<string> {
  const r = await send("GET", `${url}${V2}/payload/upload/url/X`, { "x-api-key": apiKey }, { file_name: name });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.url;
}

describe("the streaming reader", () => {
  it("reads the same values whatever the chunking, and hands them on in blocks", () => {
    const { text, values } = matrix(9, 4, 1);
    for (const step of [1, 2, 3, 7, 64, text.length]) {
      const got: number[] = [];
      const reader = new MatrixReader((block) => got.push(...block), 5);
      for (let at = 0; at < text.length; at += step) reader.push(text.subarray(at, at + step));
      expect(reader.end()).toEqual({ rows: 9, cols: 4 });
      expect(Float64Array.from(got)).toEqual(values);
    }
  });

  it("refuses what is not X, naming the cell or row, as the whole-body reader did", () => {
    const refusal = (text: string) => {
      const reader = new MatrixReader(() => undefined);
      try {
        reader.push(Buffer.from(text));
        reader.end();
      } catch (error) {
        expect(error).toBeInstanceOf(ServiceError);
        return `${(error as ServiceError).status} ${(error as ServiceError).init.field}`;
      }
      return "accepted";
    };
    expect(refusal("[[1, 2], [3, 4]] ")).toBe("accepted");
    expect(refusal("[[1e400]]")).toBe("400 X[0][0]");
    expect(refusal("[[1, Infinity]]")).toBe("400 X[0][1]");
    expect(refusal('[[1], ["a"]]')).toBe("400 X[1][0]");
    expect(refusal("[[1, 2], [3]]")).toBe("400 X[1]");
    expect(refusal("[[1, 2], [3, 4, 5]]")).toBe("400 X[1]");
    expect(refusal("[[]]")).toBe("400 X[0]");
    expect(refusal("[]")).toBe("400 X");
    expect(refusal("[1, 2]")).toBe("400 X[0]");
    expect(refusal("{}")).toBe("400 X");
    expect(refusal("[[01]]")).toBe("400 X[0][0]");
    expect(refusal("[[1]] x")).toBe("400 body");
    expect(refusal("[[1]")).toBe("400 body");
    expect(refusal("")).toBe("400 body");
  });
});

describe("uploads and large bodies in the service", () => {
  let service: LocalService;
  beforeAll(async () => {
    ({ service } = await start({ workers: 1 }));
  });
  afterAll(() => service?.close());

  it("four concurrent 8 MB uploads hold a few blocks each, never their size; the values come back as sent", async () => {
    const key = service.credentials.apiKey;
    const bodies = [0, 1, 2, 3].map((seed) => repeated(8e6, seed));
    const urls = await Promise.all(bodies.map((_, i) => uploadUrl(service.url, key, `big${i}.json`)));
    UPLOAD_BUFFERS.peak = UPLOAD_BUFFERS.current;
    const puts = await Promise.all(bodies.map((b, i) => send("PUT", urls[i], {}, b)));
    for (const put of puts) expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(puts[0].body).toMatchObject({ cols: 20, outcome: "created" });
    expect(puts[0].body.rows).toBeGreaterThan(25_000);
    // Each reader holds its block being filled and at most a chunk's worth of full blocks waiting
    // for the store: a few hundred KiB, against 6.4 MB of values and 8 MB of text per upload.
    const perUpload = 3 * BLOCK_VALUES * 8;
    expect(UPLOAD_BUFFERS.peak).toBeLessThanOrEqual(4 * perUpload);
    expect(UPLOAD_BUFFERS.current).toBe(0);
    // The same bytes again: unchanged (the digest of the streamed bytes).
    const again = await send("PUT", await uploadUrl(service.url, key, "big1.json"), {}, bodies[1]);
    expect(again.body.outcome).toBe("unchanged");
  }, 60_000);

  it("an upload of several blocks comes back as sent: a POST naming it answers as the same X inline", async () => {
    const { text } = matrix(5_000, 6, 3);
    const X = JSON.parse(text.toString().replaceAll("NaN", "null")) as Array<Array<number | null>>;
    const y = X.map((_, i) => (i * 37) % 101);
    const theta = [1, 2, 3, 4, 5, 6];
    const headers = { "x-api-key": service.credentials.apiKey };
    const put = await send("PUT", await uploadUrl(service.url, service.credentials.apiKey, "blocks.json"), {}, text.toString());
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const body = { access_id: service.credentials.accessId, y, theta: [theta], threshold: [0, 0.5] };
    const results = async (x: unknown) => {
      const r = await send("POST", `${service.url}${V2}/psr`, headers, { ...body, X: x });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      for (;;) {
        const got = await send("GET", `${service.url}${V2}/results`, headers, { job_id: r.body.job_id, job_code: r.body.job_code });
        if (got.body.yhat !== undefined || got.body.error_code !== 0) return got.body;
      }
    };
    const [named, inline] = [await results("blocks.json"), await results(X)];
    expect(named.error_code, JSON.stringify(named).slice(0, 300)).toBe(0);
    expect(named.yhat).toEqual(inline.yhat);
    expect(named.fit).toEqual(inline.fit);
  }, 60_000);

  it("caps the uploads received at once: one more is a 503 with Retry-After, the memory of the cap stays small", async () => {
    expect(MAX_UPLOADS_AT_ONCE * 3 * BLOCK_VALUES * 8).toBeLessThanOrEqual(64 * 1024 * 1024);
    const url = new URL(await uploadUrl(service.url, service.credentials.apiKey, "held.json"));
    const held: Socket[] = [];
    try {
      // Each upload is under way once node answered its 100 Continue: the route has counted it by then (same tick).
      for (let i = 0; i < MAX_UPLOADS_AT_ONCE; i++) {
        const socket = connect(Number(url.port), url.hostname);
        held.push(socket);
        socket.on("error", () => undefined);
        await new Promise<void>((resolve) => {
          socket.once("data", () => resolve());
          socket.write(`PUT ${url.pathname}${url.search} HTTP/1.1\r\nhost: x\r\ncontent-length: 1000\r\nexpect: 100-continue\r\n\r\n`);
        });
        socket.write("[[1, 2], [3");
      }
      const more = await send("PUT", url.toString(), {}, "[[1]]");
      expect(more.status, JSON.stringify(more.body)).toBe(503);
      expect(more.body.error).toBe("service_busy");
      expect(more.headers["retry-after"]).toBe("1");
    } finally {
      for (const socket of held) socket.destroy();
    }
  });
  it("while large bodies holding MAX_BODY_BYTES_IN_FLIGHT are read, one more is a 503 (nothing charged); small ones are served", async () => {
    const url = new URL(service.url);
    const size = 9 * 1024 * 1024;
    const held: Socket[] = [];
    try {
      // Each POST is under way once node answered its 100 Continue: the route has reserved its body by then (same tick).
      for (let i = 0; i < Math.floor(MAX_BODY_BYTES_IN_FLIGHT / size); i++) {
        const socket = connect(Number(url.port), url.hostname);
        held.push(socket);
        socket.on("error", () => undefined);
        await new Promise<void>((resolve) => {
          socket.once("data", () => resolve());
          socket.write(
            `POST /v3/psr HTTP/1.1\r\nhost: x\r\nx-api-key: ${service.credentials.apiKey}\r\ncontent-type: application/json\r\ncontent-length: ${size}\r\nexpect: 100-continue\r\n\r\n`,
          );
        });
        socket.write('{"y": [1, 2');
      }
      const headers = { "x-api-key": service.credentials.apiKey };
      const big = `{"pad": "${"x".repeat(size - 20)}"}`;
      const more = await send("POST", `${service.url}/v3/psr`, headers, big);
      expect(more.status, JSON.stringify(more.body)).toBe(503);
      expect(more.body.error).toBe("service_busy");
      expect(more.headers["retry-after"]).toBe("1");
      const used = (await send("GET", `${service.url}/v3/quota`, headers)).body.used;
      const small = await send("POST", `${service.url}/v3/psr`, headers, { access_id: service.credentials.accessId, ...quickstart() });
      expect(small.status, JSON.stringify(small.body)).toBe(200);
      expect((await send("GET", `${service.url}/v3/quota`, headers)).body.used).toBe(used + 1);
    } finally {
      for (const socket of held) socket.destroy();
    }
  });
});

const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
});

/** VmRSS and VmHWM (the peak) of a process, in bytes. */
function memory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)![1]) * 1024;
  return { rss: kb("VmRSS"), peak: kb("VmHWM") };
}

// The server process runs the embedded store: once is enough (not again on the PostgreSQL run).
describe.skipIf(process.platform !== "linux" || TEST_STORE === "postgres")("a server process under four concurrent 60 MB uploads", () => {
  it("peaks within 300 MB of where it started", async () => {
    const server = await spawnServe(["--port", "0", "--quiet", "--workers", "1"]);
    children.push(server.child);
    const bodies = [0, 1, 2, 3].map((seed) => repeated(60e6, seed));
    const urls = await Promise.all(bodies.map((_, i) => uploadUrl(server.url, server.apiKey!, `m${i}.json`)));
    const before = memory(server.child.pid!);
    const puts = await Promise.all(bodies.map((b, i) => send("PUT", urls[i], {}, b)));
    for (const put of puts) expect(put.status, JSON.stringify(put.body)).toBe(200);
    const after = memory(server.child.pid!);
    expect(after.peak - before.rss, `RSS ${before.rss} before, peak ${after.peak}`).toBeLessThan(300e6);
  }, 120_000);
});
