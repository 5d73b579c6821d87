/**
 * `connect()`: the service a notebook talks to, made once per kernel (per process).
 *
 * - With an API key (`apiKey`, or `CSA_API_KEY` in the environment or in `.env`), the hosted
 *   service: its address comes from `baseUrl`, `RBP_BASE_URL` or `CSA_BASE_URL`. The API
 *   specification gives no public address, so there is no default and a missing one is a clear
 *   error. (Any `rbp serve` is reached the same way.)
 * - Otherwise the embedded local service: `startLocalService` on 127.0.0.1 with a free port and
 *   generated credentials, started once and reused by every later call. It does not keep a script
 *   alive (its sockets and worker threads are unref'd); `disconnect()` stops it.
 *
 * Either way the calls go through the same `RbpClient` over HTTP, so a notebook that runs locally
 * runs against the hosted service unchanged.
 *
 * `connect()` without options returns the current connection (making one the first time);
 * `connect(options)` returns it when the options are the same, and otherwise replaces it once the
 * new one has opened (the old one is then closed; a connect that fails leaves it in place). `grid`, `maxfit`, `psr` and `quota` call `connect()` themselves.
 *
 * The embedded service is kept across such replacements: when the current connection is local and
 * the new options also ask for the local service (`connect({ hosted: false })`, `%rbp connect local`,
 * another API version or time budget), the new connection is a new client of the running service,
 * so the jobs made so far stay known (`%rbp status fit` still answers). A new service is started
 * only when asked for (`fresh: true`, `%rbp connect local fresh`) or when `local.workers` or
 * `local.quota` differ from the running service's.
 */
import { randomBytes } from "node:crypto";
import { createClient, type ApiVersion, type QuotaStatus, type RbpClient } from "../client/index.js";
import { settingsReader } from "../client/config.js";
import { Redactor } from "../internal/redact.js";
import { JUPYTER_DISPLAY, RBP_BUNDLE, cellValue, escapeHtml, type MimeBundle } from "../display/index.js";
import { startLocalService, type LocalService } from "../service/index.js";
import { PredictionError, toPredictionError } from "./errors.js";

export interface ConnectOptions {
  /**
   * true: the hosted service (needs a key and a base URL); false: the embedded local service even
   * when CSA_API_KEY is set. Default: hosted when a key is given or set (or a base URL is given).
   */
  hosted?: boolean;
  /** The hosted service's root or version root. Default: RBP_BASE_URL, then CSA_BASE_URL. */
  baseUrl?: string;
  /** The organisation's API key. Default: CSA_API_KEY. */
  apiKey?: string;
  /** Your user access id. Default: CSA_ACCESS_ID. */
  accessId?: string;
  /** API version; default v3 (RBP_API_VERSION, or the version root in the base URL). */
  apiVersion?: ApiVersion;
  /** Time budget of one request in ms (default 60000). */
  timeoutMs?: number;
  /** Environment to read the settings from; default process.env. */
  env?: Record<string, string | undefined>;
  /** A .env file to read; default `.env` in the working directory; false: none. */
  envFile?: string | false;
  /** The embedded service: worker threads (default: one per core) and quota (default 1,000,000 units). */
  local?: { workers?: number; quota?: number };
  /**
   * true: a new connection even when the current one would do; for the local service, a new embedded
   * service (the jobs of the old one are then unknown). Default false: a running embedded service is reused.
   */
  fresh?: boolean;
}

/** The embedded service behind a local connection, with what it was started with. */
interface Embedded {
  service: Closable;
  url: string;
  apiKey: string;
  accessId: string;
  workers: number | undefined;
  quota: number | undefined;
}

export type ServiceKind = "hosted" | "local";

/** What a connection closes with it (the embedded service); kept structural so the service's types stay off this module's declarations. */
interface Closable {
  close(): Promise<void>;
}

/** A connection to the hosted service or to the embedded local one. */
export class Connection {
  /** `hosted` (a service at a base URL) or `local` (the embedded service of this process). */
  readonly mode: ServiceKind;
  /** The client the calls go through (the same for both modes). */
  readonly client: RbpClient;
  /** The version root, e.g. `http://127.0.0.1:41234/v3`. */
  readonly baseUrl: string;
  readonly apiVersion: ApiVersion;
  readonly #redactor: Redactor;
  /** The embedded service this connection stops when closed (moved to its successor by #handOver). */
  #service: Embedded | undefined;
  #closed = false;

  /** @internal */
  constructor(mode: ServiceKind, client: RbpClient, secrets: ReadonlyArray<string | undefined>, service?: Embedded) {
    this.mode = mode;
    this.client = client;
    this.baseUrl = client.baseUrl;
    this.apiVersion = client.apiVersion;
    this.#redactor = new Redactor(secrets);
    this.#service = service;
  }

  /**
   * @internal A new connection to this one's embedded service, which it takes over (this one then
   * closes only its client), when `options` can be served by it; undefined otherwise.
   */
  static handOver(from: Connection, options: ConnectOptions): Connection | undefined {
    const embedded = from.#service;
    if (from.#closed || embedded === undefined) return undefined;
    const { workers, quota } = options.local ?? {};
    if ((workers !== undefined && workers !== embedded.workers) || (quota !== undefined && quota !== embedded.quota)) return undefined;
    const client = createClient({
      apiVersion: options.apiVersion,
      timeoutMs: options.timeoutMs,
      env: options.env,
      envFile: options.envFile,
      baseUrl: embedded.url,
      apiKey: embedded.apiKey,
      accessId: embedded.accessId,
    });
    from.#service = undefined;
    return new Connection("local", client, [embedded.apiKey, embedded.accessId], embedded);
  }

  /** Whether close() was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /** `text` without this connection's key or access id. */
  scrub(text: string): string {
    return this.#redactor.text(text);
  }

  /** The plan's quota: units, used, remaining (reads cost nothing). */
  async quota(): Promise<QuotaStatus> {
    try {
      return await this.client.quota();
    } catch (error) {
      throw toPredictionError(error, { subject: "quota", service: this.mode, scrub: (s) => this.scrub(s) });
    }
  }

  /** Closes the client, and stops the embedded service of a local connection. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.client.close().catch(() => undefined);
    if (this.#service !== undefined) await this.#service.service.close();
  }

  /** One line: where predictions run. */
  describe(): string {
    return this.mode === "local"
      ? `embedded local service at ${this.baseUrl} (API ${this.apiVersion})${this.#closed ? ", closed" : ""}`
      : `hosted service at ${this.baseUrl} (API ${this.apiVersion})${this.#closed ? ", closed" : ""}`;
  }

  toJSON(): Record<string, unknown> {
    return { mode: this.mode, baseUrl: this.baseUrl, apiVersion: this.apiVersion, closed: this.#closed };
  }

  [JUPYTER_DISPLAY](): MimeBundle | Promise<MimeBundle> {
    return cellValue(this[RBP_BUNDLE]());
  }

  [RBP_BUNDLE](): MimeBundle {
    const text = `Connected to the ${this.describe()}`;
    return { "text/plain": text, "text/html": `<div style="font:13px system-ui,sans-serif;color:#2e7d32">${escapeHtml(text)}</div>` };
  }

  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return `Connection { ${this.describe()} }`;
  }
}

interface State {
  /** The current connection (or the one being made), with the options it was made from. */
  current?: { signature: string; promise: Promise<Connection> };
  /** The options of the last connect(options), used when connect() has to make a connection again. */
  lastOptions?: ConnectOptions;
}

const state: State = {};

function signatureOf(options: ConnectOptions): string {
  // Compared in memory only; never shown.
  return JSON.stringify([
    options.hosted,
    options.baseUrl,
    options.apiKey,
    options.accessId,
    options.apiVersion,
    options.timeoutMs,
    options.env === undefined ? null : Object.entries(options.env).sort(),
    options.envFile,
    options.local?.workers,
    options.local?.quota,
  ]);
}

async function open(options: ConnectOptions): Promise<Connection> {
  let setting: ReturnType<typeof settingsReader>;
  try {
    setting = settingsReader(options);
  } catch (error) {
    const given = new Redactor([options.apiKey, options.accessId]);
    throw toPredictionError(error, { subject: "connect", scrub: (s) => given.text(s) });
  }
  const apiKey = options.apiKey ?? setting("CSA_API_KEY");
  const hosted = options.hosted ?? (apiKey !== undefined || options.baseUrl !== undefined);
  const common = {
    apiVersion: options.apiVersion,
    timeoutMs: options.timeoutMs,
    env: options.env,
    envFile: options.envFile,
  };
  const scrub = new Redactor([apiKey, options.accessId ?? setting("CSA_ACCESS_ID")]);
  if (hosted) {
    const baseUrl = options.baseUrl ?? setting("RBP_BASE_URL", "CSA_BASE_URL");
    if (baseUrl === undefined) {
      throw new PredictionError({
        kind: "configuration",
        subject: "connect",
        detail:
          apiKey !== undefined
            ? "CSA_API_KEY is set, so predictions go to the hosted service, but its address is not known (the API specification does not publish one)."
            : "the hosted service was asked for, but its address is not known (the API specification does not publish one).",
        field: "RBP_BASE_URL",
        hint: "Set RBP_BASE_URL (or CSA_BASE_URL) to the address your provider gave you, or pass connect({ baseUrl }). To use the embedded local service instead, call connect({ hosted: false }).",
      });
    }
    try {
      const client = createClient({ ...common, baseUrl, apiKey, accessId: options.accessId });
      return new Connection("hosted", client, [apiKey, options.accessId ?? setting("CSA_ACCESS_ID")]);
    } catch (error) {
      throw toPredictionError(error, { subject: "connect", service: "hosted", scrub: (s) => scrub.text(s) });
    }
  }
  // The embedded service: its own generated credentials, never the hosted key.
  const local = { apiKey: `rbp-local-${randomBytes(24).toString("base64url")}`, accessId: `rbp-notebook-${randomBytes(6).toString("hex")}` };
  let service: LocalService;
  try {
    service = await startLocalService({ port: 0, ...local, workers: options.local?.workers, quota: options.local?.quota, unref: true });
  } catch (error) {
    throw toPredictionError(error, { subject: "connect", service: "local", scrub: (s) => scrub.text(s) });
  }
  try {
    const client = createClient({ ...common, baseUrl: service.url, apiKey: local.apiKey, accessId: local.accessId });
    const embedded: Embedded = { service, url: service.url, ...local, workers: options.local?.workers, quota: options.local?.quota };
    return new Connection("local", client, [local.apiKey, local.accessId], embedded);
  } catch (error) {
    await service.close();
    throw toPredictionError(error, { subject: "connect", service: "local", scrub: (s) => scrub.text(s) });
  }
}

/**
 * The connection of this kernel: the hosted service when CSA_API_KEY is set, else the embedded
 * local service (started once). See the module comment for when a new one is made.
 */
export async function connect(options?: ConnectOptions): Promise<Connection> {
  for (;;) {
    const current = state.current;
    if (current === undefined || options?.fresh === true) break;
    const same = options === undefined || current.signature === signatureOf(options);
    const connection = await current.promise.catch(() => undefined);
    if (state.current !== current) continue; // replaced meanwhile: look again
    if (connection === undefined || connection.closed) break; // it failed or was closed: make it again
    if (same) return connection;
    // Other options that still ask for the local service: a new client of the running one.
    if (connection.mode !== "local" || !asksForLocal(options!)) break;
    let next: Connection | undefined;
    try {
      next = Connection.handOver(connection, options!);
    } catch (error) {
      throw toPredictionError(error, { subject: "connect", service: "local", scrub: (s) => connection.scrub(s) });
    }
    if (next === undefined) break; // other workers or quota: a new service
    state.current = { signature: signatureOf(options!), promise: Promise.resolve(next) };
    state.lastOptions = withoutFresh(options!);
    void connection.close(); // its client only: the service went to `next`
    return next;
  }
  const opts = withoutFresh(options ?? state.lastOptions ?? {});
  const previous = state.current;
  // Concurrent callers wait on this one; the previous connection stays until it has opened.
  const entry = { signature: signatureOf(opts), promise: open(opts) };
  state.current = entry;
  let connection: Connection;
  try {
    connection = await entry.promise;
  } catch (error) {
    // A failed connect leaves the working connection (and its options) as they were.
    if (state.current === entry) state.current = previous;
    throw error;
  }
  if (state.current === entry) state.lastOptions = opts;
  if (previous !== undefined)
    void previous.promise.then(
      (c) => c.close(),
      () => undefined,
    );
  return connection;
}

/** Whether `options` ask for the embedded local service (as open() decides; a setting that cannot be read counts as no). */
function asksForLocal(options: ConnectOptions): boolean {
  if (options.hosted !== undefined) return !options.hosted;
  if (options.apiKey !== undefined || options.baseUrl !== undefined) return false;
  try {
    return settingsReader(options)("CSA_API_KEY") === undefined;
  } catch {
    return false;
  }
}

function withoutFresh(options: ConnectOptions): ConnectOptions {
  const { fresh: _fresh, ...rest } = options;
  return rest;
}

/** The current connection, if one was made (no connection is started). */
export async function currentConnection(): Promise<Connection | undefined> {
  const current = state.current;
  if (current === undefined) return undefined;
  const connection = await current.promise.catch(() => undefined);
  return connection !== undefined && !connection.closed ? connection : undefined;
}

/** Closes the current connection (and stops the embedded service); the next call connects again. */
export async function disconnect(): Promise<void> {
  const current = state.current;
  state.current = undefined;
  state.lastOptions = undefined;
  if (current === undefined) return;
  const connection = await current.promise.catch(() => undefined);
  await connection?.close();
}
