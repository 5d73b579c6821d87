/** Shared by the service suites: start a service on an ephemeral port and talk to it with fetch. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { Agent, fetch } from "undici";
import { afterAll, expect } from "vitest";
import { startLocalService, type LocalService, type LocalServiceOptions } from "../../src/service/index.js";
import { gold } from "../gold.js";
import { startPostgres, type PostgresServer } from "../pg-server.js";

export { close, column, gold, goldCase, synthetic } from "../gold.js";

export interface Reply {
  status: number;
  headers: Headers;
  body: any;
}

/**
 * The suites' connections: a keep-alive connection idle for a second is not used again. The service
 * closes one idle for 5 s (keepAliveTimeoutMs), and global fetch keeps it up to its hint less 1 s,
 * checked on a coarse timer: when a loaded machine stalled the test process near that boundary, a
 * POST went out on a socket the service had just closed and failed with ECONNRESET (the CI's
 * loaded run, stall.test.ts). A 4 s margin leaves no such window.
 */
const agent = new Agent({ keepAliveTimeout: 1_000, keepAliveMaxTimeout: 1_000 });

export class Client {
  constructor(
    readonly base: string,
    readonly apiKey: string | undefined,
    readonly accessId: string,
  ) {}

  /** `apiKey` null sends no x-api-key header. */
  async get(path: string, apiKey: string | null = this.apiKey ?? null): Promise<Reply> {
    const res = await fetch(this.base + path, { headers: apiKey === null ? {} : { "x-api-key": apiKey }, dispatcher: agent });
    return reply(res);
  }

  /** POSTs `body` (objects get this client's access_id unless they have one) as JSON, or a raw string. */
  async post(path: string, body: unknown, apiKey: string | null = this.apiKey ?? null): Promise<Reply> {
    const payload = typeof body === "string" ? body : JSON.stringify({ access_id: this.accessId, ...(body as Record<string, unknown>) });
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (apiKey !== null) headers["x-api-key"] = apiKey;
    return reply(await fetch(this.base + path, { method: "POST", headers, body: payload, dispatcher: agent }));
  }

  /** GETs `path` until it is no longer 202. */
  async poll(path: string, timeoutMs = 20_000): Promise<Reply> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const r = await this.get(path);
      if (r.status !== 202) return r;
      if (Date.now() > until) throw new Error(`${path} still 202 after ${timeoutMs} ms`);
      await sleep(20);
    }
  }

  /** POSTs and polls the job to the end; returns the final reply. */
  async run(analysis: string, body: Record<string, unknown>): Promise<Reply> {
    const receipt = await this.post(`/v3/${analysis}`, body);
    expect(receipt.status, JSON.stringify(receipt.body)).toBe(200);
    return this.poll(`/v3/results/${receipt.body.job_id}/${receipt.body.job_code}`);
  }

  as(apiKey: string | undefined, accessId = this.accessId): Client {
    return new Client(this.base, apiKey, accessId);
  }
}

async function reply(res: Response): Promise<Reply> {
  const text = await res.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`response ${res.status} is not JSON: ${text.slice(0, 200)}`);
  }
  return { status: res.status, headers: res.headers, body };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Reads with `read()` until `done` holds for what it read, and returns that: waiting for an event
 * the service shows, never proving anything by the time it took (the test's own timeout bounds it).
 */
export async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    await sleep(10);
  }
}

/**
 * The store the suites run against: RBP_TEST_STORE=postgres runs every service started through
 * `start()` (without a `dataDir`) on the PostgreSQL store, each on a fresh database of one real
 * server per test file (test/pg-server.ts), stopped after the file. Default: the embedded store.
 */
export const TEST_STORE: "embedded" | "postgres" = process.env.RBP_TEST_STORE === "postgres" ? "postgres" : "embedded";

// Started while the file is collected (no hook time limit applies there), stopped after the file.
const postgres: PostgresServer | undefined = TEST_STORE === "postgres" ? await startPostgres() : undefined;
if (postgres) afterAll(() => postgres.stop(), 60_000);
let databases = 0;

/** A fresh, empty database on this file's PostgreSQL server (RBP_TEST_STORE=postgres); its URL. */
export async function freshDatabase(): Promise<string> {
  if (!postgres) throw new Error("freshDatabase: set RBP_TEST_STORE=postgres");
  const server = postgres;
  const name = `rbp_${process.pid}_${++databases}`;
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return server.url.replace(/\/rbp$/, `/${name}`);
}

export async function start(options: LocalServiceOptions = {}): Promise<{ service: LocalService; client: Client }> {
  const store: Partial<LocalServiceOptions> =
    TEST_STORE === "postgres" && options.dataDir === undefined && options.database === undefined ? { database: await freshDatabase(), migrate: true } : {};
  const service = await startLocalService({ port: 0, workers: 2, ...store, ...options });
  return { service, client: new Client(service.url, service.credentials.apiKey, service.credentials.accessId) };
}

export function tempDir(): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), "rbp-service-"));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** Writes a credentials file (the `--credentials` format) with these organisations into `dir`; returns its path. */
export function writeCredentials(dir: string, orgs: unknown[]): string {
  const file = join(dir, "credentials.json");
  writeFileSync(file, JSON.stringify({ orgs }));
  return file;
}

/** The quickstart body (7 x 5). */
export function quickstart(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { y: gold.inputs.y, X: gold.inputs.X, theta: gold.inputs.theta, ...extra };
}
