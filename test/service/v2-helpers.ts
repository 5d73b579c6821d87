/**
 * Shared by the v2 suites: a v2 caller over loopback that sends what the official Python client
 * sends (docs/api.md section 3): GETs with a JSON body (node:http, since fetch cannot send one), the
 * flat POST body with the options at the top level, and the upload PUT.
 */
import { request as httpRequest } from "node:http";
import { expect } from "vitest";
import { ErrorBodySchema } from "../../src/api/schemas.js";
import { officialV2Body } from "../official-v2.js";
import { gold } from "./helpers.js";

export const V2 = "/v2/prediction-engine";

export interface V2Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  /** Milliseconds from sending to the end of the reply. */
  ms: number;
}

/**
 * One HTTP request with Content-Length framing (what python-requests does for a GET with a body).
 * `body`: an object is sent as JSON, a string as it is, undefined sends nothing.
 */
export function send(method: string, url: string, headers: Record<string, string>, body?: unknown, settings: { signal?: AbortSignal } = {}): Promise<V2Reply> {
  const payload = body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method,
        headers: {
          "content-type": "application/json",
          ...(payload !== undefined ? { "content-length": String(Buffer.byteLength(payload)) } : {}),
          ...headers,
        },
        signal: settings.signal,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let parsed: unknown;
          try {
            parsed = JSON.parse(text);
          } catch {
            reject(new Error(`${method} ${url}: response ${res.statusCode} is not JSON: ${text.slice(0, 200)}`));
            return;
          }
          resolve({ status: res.statusCode!, headers: res.headers, body: parsed, ms: performance.now() - started });
        });
      },
    );
    req.on("error", reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

export class V2Client {
  constructor(
    readonly url: string,
    readonly apiKey: string | null,
    readonly accessId: string,
  ) {}

  private headers(apiKey: string | null | undefined): Record<string, string> {
    const key = apiKey === undefined ? this.apiKey : apiKey;
    return key === null ? {} : { "x-api-key": key };
  }

  /** POST /{endpoint}; objects get this client's access_id first unless they carry one. */
  post(endpoint: string, body: unknown, apiKey?: string | null): Promise<V2Reply> {
    const payload = typeof body === "string" ? body : { access_id: this.accessId, ...(body as Record<string, unknown>) };
    return send("POST", `${this.url}${V2}/${endpoint}`, this.headers(apiKey), payload);
  }

  /** GET /results with the receipt (or anything else) as the JSON body. */
  results(receipt: unknown, apiKey?: string | null, path = `${V2}/results`): Promise<V2Reply> {
    return send("GET", `${this.url}${path}`, this.headers(apiKey), receipt);
  }

  get(path: string, body?: unknown, apiKey?: string | null): Promise<V2Reply> {
    return send("GET", `${this.url}${path}`, this.headers(apiKey), body);
  }

  /** POST and read (GET /results until it is no longer a running body). */
  async run(endpoint: string, body: Record<string, unknown>): Promise<{ receipt: any; result: V2Reply }> {
    const r = await this.post(endpoint, body);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return { receipt: r.body, result: await this.settle(r.body) };
  }

  /** GETs a receipt until the body is not a running one. */
  async settle(receipt: { job_id: number; job_code: string }, timeoutMs = 20_000): Promise<V2Reply> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const r = await this.results({ job_id: receipt.job_id, job_code: receipt.job_code });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      if (!(r.body.error_code === 0 && (r.body.yhat === undefined || r.body.yhat === null))) return r;
      if (Date.now() > until) throw new Error(`job ${receipt.job_id} still running after ${timeoutMs} ms`);
    }
  }

  as(apiKey: string | null, accessId = this.accessId): V2Client {
    return new V2Client(this.url, apiKey, accessId);
  }
}

/** The body the official client sends for a grid (docs/api.md section 3), here on the quickstart 7x5. */
export const officialGridBody = (extra: Record<string, unknown> = {}) => officialV2Body("grid", gold.inputs, extra);

/** The body the official client sends for a PSR (PredictionOptions: `eval_type: "both"` by default). */
export const officialPsrBody = (extra: Record<string, unknown> = {}) => officialV2Body("psr", gold.inputs, extra);

/** The body the official client sends for a MaxFit (MaxFitOptions). */
export function officialMaxFitBody(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { ...officialPsrBody(), threshold: [0.0, 0.2, 0.5, 0.8], objective: "kfit", ...extra };
}

/** A refusal: its status, the one JSON error shape, status_code = the HTTP status. */
export function expectRefusal(r: V2Reply, status: number, error?: string, field?: string): void {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(ErrorBodySchema.safeParse(r.body).success, JSON.stringify(r.body)).toBe(true);
  expect(r.body.status_code).toBe(status);
  if (error !== undefined) expect(r.body.error).toBe(error);
  if (field !== undefined) expect(r.body.field).toBe(field);
}

/** Every array of the flat object is nested 2-D (G12); `K`, `n`, ... are 1 x 1. */
export function expectNested2D(flat: Record<string, unknown>, skip: string[] = ["job_id", "job_code", "status_code", "error_code", "experiment_id"]): void {
  for (const [key, value] of Object.entries(flat)) {
    if (skip.includes(key)) continue;
    expect(Array.isArray(value), key).toBe(true);
    for (const row of value as unknown[]) expect(Array.isArray(row), `${key} row`).toBe(true);
  }
}

export const col = (m: number[][]) => m.map((r) => r[0]);
