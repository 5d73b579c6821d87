/**
 * The v2 X upload flow (docs/api.md section 3) end to end, as the official client runs it: the
 * CRC-64/XZ name of the compact X JSON, `GET /payload/upload/url/X` with `{file_name}`, `PUT` of
 * the X JSON to the absolute URL it answers, then POSTs with `"X": "<hex>.json"`. Also: a wrong,
 * foreign or expired token, an upload that is missing, expired or another organisation's (a job
 * failed with status_code 1 and error_code 5), bad upload bodies, and that none of it costs quota.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { crc64xz } from "../../src/api/v2-status.js";
import type { LocalService } from "../../src/service/index.js";
import { close, gold, goldCase, start, tempDir, writeCredentials } from "./helpers.js";
import { col, expectRefusal, officialGridBody, officialPsrBody, send, V2, V2Client } from "./v2-helpers.js";

const KEYS = { a: "upload-key-of-org-a-0123456789", b: "upload-key-of-org-b-9876543210" };
const dir = tempDir();
let service: LocalService;
let a: V2Client;
let b: V2Client;

beforeAll(async () => {
  const file = writeCredentials(dir.path, [
    { name: "a", api_key: KEYS.a, plan: { quota: 1000 }, users: [{ access_id: "alice" }] },
    { name: "b", api_key: KEYS.b, plan: { quota: 1000 }, users: [{ access_id: "bob" }] },
  ]);
  ({ service } = await start({ credentialsFile: file, workers: 2, v2LongPollMs: 10_000 }));
  a = new V2Client(service.url, KEYS.a, "alice");
  b = new V2Client(service.url, KEYS.b, "bob");
});
afterAll(async () => {
  await service.close();
  dir.remove();
});

/** What the client does: X alone as compact JSON, its CRC-64/XZ (unpadded hex) as the name. */
function xUpload(X: unknown): { text: string; name: string } {
  const text = JSON.stringify(X);
  return { text, name: `${crc64xz(Buffer.from(text, "utf8"))}.json` };
}

async function uploadUrl(client: V2Client, name: string): Promise<string> {
  const r = await client.get(`${V2}/payload/upload/url/X`, { file_name: name });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.url;
}

const used = async (client: V2Client) => (await client.get(`${V2}/quota/used`)).body.used as number;

describe("the upload flow", () => {
  it("GET the URL, PUT X, POST with the reference: the same results as an inline X; uploads cost nothing", async () => {
    const before = await used(a);
    const { text, name } = xUpload(gold.inputs.X);
    expect(name).toMatch(/^[0-9a-f]{1,16}\.json$/);

    const urlReply = await a.get(`${V2}/payload/upload/url/X`, { file_name: name });
    expect(urlReply.status).toBe(200);
    const url: string = urlReply.body.url;
    expect(url.startsWith(`${service.url}${V2}/payload/upload/X/${name}?token=`)).toBe(true);
    expect(urlReply.body.expires_at).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);

    const put = await send("PUT", url, { "x-api-key": KEYS.a }, text);
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body).toMatchObject({ file_name: name, rows: 7, cols: 5, outcome: "created" });
    // the same bytes again: idempotent
    const again = await send("PUT", url, { "x-api-key": KEYS.a }, text);
    expect(again.body.outcome).toBe("unchanged");
    expect(await used(a)).toBe(before);

    // one upload serves several POSTs (a multi-theta call of the client)
    const c = goldCase("psr relevance t=0.8");
    const byRef = await a.run("psr", officialPsrBody({ X: name, threshold: [0.8] }));
    const second = await a.run("psr", officialPsrBody({ X: name, theta: [gold.inputs.X[0]], threshold: [0.8] }));
    const inline = await a.run("psr", officialPsrBody({ threshold: [0.8] }));
    close(byRef.result.body.yhat[0], c.expect.yhat);
    close(col(byRef.result.body.weights), c.expect.weights);
    expect(byRef.result.body.yhat).toEqual(inline.result.body.yhat);
    expect(second.result.body.yhat).not.toEqual(byRef.result.body.yhat);

    const grid = await a.run("grid", officialGridBody({ X: name }));
    close(grid.result.body.yhat[0], goldCase("grid default").expect.yhat);
    expect(await used(a)).toBe(before + 4);
  });

  it("the PUT is authorised by its token alone; missing values (null or a NaN token) are kept", async () => {
    const X = gold.inputs.X.map((row, i) => (i === 2 ? [row[0], null, ...row.slice(2)] : row));
    const { name } = xUpload(X);
    const url = await uploadUrl(a, name);
    const text = JSON.stringify(X).replace("null", "NaN");
    const put = await send("PUT", url, {}, text);
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const r = await a.run("psr", officialPsrBody({ X: name }));
    expect(r.result.body.status_code).toBe(11);
    expect(r.result.body.relevance[2]).toEqual([null]);
  });

  it("a re-upload of a name with other bytes replaces it", async () => {
    const name = "123abc.json";
    await send("PUT", await uploadUrl(a, name), {}, JSON.stringify(gold.inputs.X));
    const other = gold.inputs.X.map((row) => row.map((v) => v * 2));
    const put = await send("PUT", await uploadUrl(a, name), {}, JSON.stringify(other));
    expect(put.body.outcome).toBe("replaced");
    const r = await a.run("psr", officialPsrBody({ X: name, theta: [gold.inputs.theta.map((v) => v * 2)] }));
    // relevance is invariant to scaling X and theta together
    close(col(r.result.body.relevance), goldCase("scores").expect.relevance, 1e-5);
  });
});

describe("tokens", () => {
  it("a wrong, foreign, missing or expired token is a 403 JSON, and nothing is stored", async () => {
    const { text, name } = xUpload([
      [1, 2],
      [3, 4],
      [5, 7],
    ]);
    const url = new URL(await uploadUrl(a, name));
    const token = url.searchParams.get("token")!;

    const tampered = new URL(url);
    tampered.searchParams.set("token", token.slice(0, -2) + (token.endsWith("AA") ? "BB" : "AA"));
    expectRefusal(await send("PUT", tampered.href, {}, text), 403, "forbidden");

    const noToken = new URL(url);
    noToken.searchParams.delete("token");
    expectRefusal(await send("PUT", noToken.href, {}, text), 403, "forbidden");

    expectRefusal(await send("PUT", `${url.origin}${url.pathname}?token=garbage`, {}, text), 403, "forbidden");

    // a token for one name does not open another
    const otherName = `${service.url}${V2}/payload/upload/X/ffff.json?token=${encodeURIComponent(token)}`;
    expectRefusal(await send("PUT", otherName, {}, text), 403, "forbidden");

    // another organisation's key on a's URL
    expectRefusal(await send("PUT", url.href, { "x-api-key": KEYS.b }, text), 403, "forbidden");
    // an unknown key
    expectRefusal(await send("PUT", url.href, { "x-api-key": "nobody-key-000000" }, text), 403, "forbidden");

    // none of these stored anything: the reference is missing
    const r = await a.run("psr", { y: [[1], [2], [3]], X: name, theta: [[1, 1]] });
    expect(r.result.body.error_code).toBe(5);
  });

  it("an expired upload URL is refused", async () => {
    const { service: short } = await start({ workers: 1, uploadUrlTtlMs: 50 });
    try {
      const c = new V2Client(short.url, short.credentials.apiKey, short.credentials.accessId);
      const { text, name } = xUpload(gold.inputs.X);
      const url = await uploadUrl(c, name);
      await new Promise((r) => setTimeout(r, 80));
      const put = await send("PUT", url, {}, text);
      expectRefusal(put, 403, "forbidden");
      expect(put.body.message).toContain("expired");
    } finally {
      await short.close();
    }
  });
});

describe("missing references: a receipt, then a job failed with status_code 1 and error_code 5", () => {
  it("never uploaded, and another organisation's upload", async () => {
    const before = await used(a);
    const missing = await a.run("grid", officialGridBody({ X: "deadbeef.json" }));
    expect(missing.receipt).toEqual({ job_id: expect.any(Number), job_code: expect.stringMatching(/^[0-9a-f]{16}$/) });
    expect(missing.result.status).toBe(200);
    expect(missing.result.body).toMatchObject({ job_id: missing.receipt.job_id, status_code: 1, error_code: 5, error: "x_input_unloadable" });
    expect(missing.result.body.message).toContain("Failed to load X_matrix input");
    expect(missing.result.body.message).toContain("deadbeef.json");
    expect(await used(a)).toBe(before + 1);
    // v3 reads the same failure
    const v3 = await send("GET", `${service.url}/v3/results/${missing.receipt.job_id}/${missing.receipt.job_code}`, { "x-api-key": KEYS.a });
    expect(v3.status).toBe(409);
    expect(v3.body.error_code).toBe(5);

    // b's upload is not a's
    const { text, name } = xUpload(gold.inputs.X.map((row) => row.map((v) => v + 1)));
    expect((await send("PUT", await uploadUrl(b, name), {}, text)).status).toBe(200);
    expect((await b.run("psr", officialPsrBody({ X: name }))).result.body.status_code).toBe(11);
    expect((await a.run("psr", officialPsrBody({ X: name }))).result.body.error_code).toBe(5);
  });

  it("an upload past its time to live", async () => {
    const { service: short } = await start({ workers: 1, uploadTtlMs: 100 });
    try {
      const c = new V2Client(short.url, short.credentials.apiKey, short.credentials.accessId);
      const { text, name } = xUpload(gold.inputs.X);
      expect((await send("PUT", await uploadUrl(c, name), {}, text)).status).toBe(200);
      await new Promise((r) => setTimeout(r, 150));
      const r = await c.run("psr", officialPsrBody({ X: name }));
      expect(r.result.body).toMatchObject({ status_code: 1, error_code: 5 });
    } finally {
      await short.close();
    }
  });
});

describe("bad upload requests: 4xx JSON, never 5xx", () => {
  it("bad file names and upload bodies", async () => {
    for (const body of [{}, { file_name: "../../etc/passwd" }, { file_name: "x.txt" }, { file_name: 5 }, "[", "", { file_name: "a/b.json" }]) {
      expectRefusal(await a.get(`${V2}/payload/upload/url/X`, body), 400);
    }
    const { name } = xUpload([[1]]);
    const url = await uploadUrl(a, name);
    for (const text of ["", "not json", "{}", "[]", "[[1,2],[3]]", '[["a"]]', "[1,2,3]", "[[Infinity]]", "[[1e400]]"]) {
      const r = await send("PUT", url, {}, text);
      expectRefusal(r, 400);
    }
    // an inline X that does not match y, through the reference: a 400 at POST naming y or X
    const { text, name: small } = xUpload([
      [1, 2],
      [3, 4],
      [5, 7],
    ]);
    await send("PUT", await uploadUrl(a, small), {}, text);
    const r = await a.post("psr", officialPsrBody({ X: small }));
    expectRefusal(r, 400, "invalid_input");
  });

  it("an upload over maxUploadBytes is a 413 JSON", async () => {
    const { service: tiny } = await start({ workers: 1, maxUploadBytes: 64 });
    try {
      const c = new V2Client(tiny.url, tiny.credentials.apiKey, tiny.credentials.accessId);
      const { text, name } = xUpload(gold.inputs.X);
      expectRefusal(await send("PUT", await uploadUrl(c, name), {}, text), 413, "payload_too_large");
    } finally {
      await tiny.close();
    }
  });
});
