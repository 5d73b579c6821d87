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
import {
  createClient,
  envSwitch,
  isExperimentReceipt,
  JobFailedError,
  readSettings,
  type ApiVersion,
  type ExperimentReceipt,
  type InProcessEndpoint,
  type JobReceipt,
  type QuotaStatus,
  type RbpClient,
  type Settings,
} from "../client/index.js";
import { JUPYTER_DISPLAY, RBP_BUNDLE, cellValue, escapeHtml, jupyterKernel, type MimeBundle } from "../display/index.js";
import { startLocalService, type LocalService } from "../service/index.js";
import type { StepLane } from "./backtest-transport.js";
import { PredictionError, toPredictionError } from "./errors.js";
import { parseRequest } from "../api/request.js";
import { toRequest } from "../frame/index.js";

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
  /**
   * The embedded service: worker threads (default: one per core) and quota (default 1,000,000
   * units); `inProcess` false: its client goes over loopback HTTP for every call (default true: v3
   * calls reach the service's routes in process, with the same answers; see docs/architecture.md).
   */
  local?: { workers?: number; quota?: number; inProcess?: boolean };
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
  /** The service's in-process lane (its client's v3 routes, a backtest's steps); undefined when it has none. */
  lane: StepLane | undefined;
}

export type ServiceKind = "hosted" | "local";

/** What a connection closes with it (the embedded service); kept structural so the service's types stay off this module's declarations. */
interface Closable {
  close(): Promise<void>;
  warm?(): Promise<void>;
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
  /** What the connection was made from (read once); it scrubs the secrets from every failure. */
  readonly #settings: Settings;
  /** The embedded service this connection stops when closed (moved to its successor by #handOver). */
  #service: Embedded | undefined;
  #closed = false;

  /** @internal */
  constructor(mode: ServiceKind, client: RbpClient, settings: Settings, service?: Embedded) {
    this.mode = mode;
    this.client = client;
    this.baseUrl = client.baseUrl;
    this.apiVersion = client.apiVersion;
    this.#settings = settings;
    this.#service = service;
  }

  /**
   * @internal A new connection to this one's embedded service, which it takes over (this one then
   * closes only its client), when `options` (whose settings were read as `settings`) can be served
   * by it; undefined otherwise.
   */
  static handOver(from: Connection, options: ConnectOptions, settings: Settings): Connection | undefined {
    const embedded = from.#service;
    if (from.#closed || embedded === undefined) return undefined;
    const { workers, quota } = options.local ?? {};
    if ((workers !== undefined && workers !== embedded.workers) || (quota !== undefined && quota !== embedded.quota)) return undefined;
    const local = settings.with({ baseUrl: embedded.url, apiKey: embedded.apiKey, accessId: embedded.accessId });
    const client = createClient({ settings: local, timeoutMs: options.timeoutMs, inProcess: inProcessOf(embedded.lane, options) });
    from.#service = undefined;
    return new Connection("local", client, local, embedded);
  }

  /** @internal Starts the embedded service's workers and compiles the engine in them (nothing for a hosted connection); never fails. */
  async warm(): Promise<void> {
    await this.#service?.service.warm?.().catch(() => undefined);
  }

  /**
   * @internal The in-process lane of this connection's embedded service (service/lane.ts), kept
   * while the connection holds the service: how a backtest reaches it without HTTP. Undefined for a
   * hosted connection, a closed one, or one that handed its service over.
   */
  get lane(): StepLane | undefined {
    return this.#closed ? undefined : this.#service?.lane;
  }

  /** Whether close() was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /** `text` without this connection's key or access id. */
  scrub(text: string): string {
    return this.#settings.scrub(text);
  }

  /** The plan's quota: units, used, remaining (reads cost nothing). */
  async quota(): Promise<QuotaStatus> {
    try {
      return await this.client.quota();
    } catch (error) {
      throw toPredictionError(error, { subject: "quota", service: this.mode, scrub: (s) => this.scrub(s) });
    }
  }

  /**
   * One line: the state of a job or an experiment, read from the service (reads cost nothing).
   * A failed job is a state (with its reason); a failure to read it is a PredictionError.
   *
   * @example
   * await connection.stateOf(p.receipt); // "job 7: completed, yhat 3.285239, fit 0.412"
   */
  async stateOf(receipt: JobReceipt | ExperimentReceipt): Promise<string> {
    try {
      if (isExperimentReceipt(receipt)) {
        const st = await this.client.experiment(receipt);
        const name = st.experiment_id === null ? "group of jobs" : `experiment ${st.experiment_id}`;
        return `${name}: ${st.status}, ${st.n_completed} of ${st.n_rows} rows completed${st.n_failed > 0 ? `, ${st.n_failed} failed` : ""}`;
      }
      try {
        const snap = await this.client.status(receipt);
        return snap.status === "completed"
          ? `job ${receipt.job_id}: completed, yhat ${snap.result.yhat[0] ?? "null"}, fit ${snap.result.fit[0] ?? "null"}`
          : `job ${receipt.job_id}: ${snap.status}`;
      } catch (error) {
        if (!(error instanceof JobFailedError)) throw error;
        return `job ${receipt.job_id}: failed: ${this.scrub(error.reason || error.message)}`;
      }
    } catch (error) {
      throw toPredictionError(error, { subject: "status", service: this.mode, scrub: (s) => this.scrub(s) });
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
  current?: { signature: string; promise: Promise<Connection>; prestarted?: boolean };
  /** The options of the last connect(options), used when connect() has to make a connection again. */
  lastOptions?: ConnectOptions;
}

const state: State = {};

function signatureOf(options: ConnectOptions, settings: Settings): string {
  // What the connection is made from, as read: two env objects that give the same settings are the same. Compared in memory only; never shown.
  return JSON.stringify([
    options.hosted,
    settings.apiKey,
    settings.accessId,
    settings.baseUrl,
    settings.apiVersion,
    options.baseUrl !== undefined,
    options.timeoutMs,
    options.local?.workers,
    options.local?.quota,
    options.local?.inProcess,
  ]);
}

/** The embedded service's v3 routes in process (unless `local.inProcess` is false). */
function inProcessOf(lane: StepLane | undefined, options: ConnectOptions): InProcessEndpoint | undefined {
  return options.local?.inProcess === false ? undefined : lane?.endpoint;
}

/** The settings of `options`, read once for the whole connect (an unreadable .env file is a configuration failure). */
function settingsOf(options: ConnectOptions): Settings {
  const { apiKey, accessId, baseUrl, apiVersion, env, envFile } = options;
  try {
    return readSettings({ apiKey, accessId, baseUrl, apiVersion, env, envFile });
  } catch (error) {
    // readSettings scrubs the secrets it was given from its own message.
    throw toPredictionError(error, { subject: "connect", scrub: (s) => s });
  }
}

/** Whether `options` ask for the hosted service: asked for, or a key given or set, or a base URL given. */
function asksForHosted(options: ConnectOptions, settings: Settings): boolean {
  return options.hosted ?? (settings.apiKey !== undefined || options.baseUrl !== undefined);
}

async function open(options: ConnectOptions, settings: Settings): Promise<Connection> {
  const scrub = (s: string) => settings.scrub(s);
  if (asksForHosted(options, settings)) {
    if (settings.baseUrl === undefined) {
      throw new PredictionError({
        kind: "configuration",
        subject: "connect",
        detail:
          settings.apiKey !== undefined
            ? "CSA_API_KEY is set, so predictions go to the hosted service, but its address is not known (the API specification does not publish one)."
            : "the hosted service was asked for, but its address is not known (the API specification does not publish one).",
        field: "RBP_BASE_URL",
        hint: "Set RBP_BASE_URL (or CSA_BASE_URL) to the address your provider gave you, or pass connect({ baseUrl }). To use the embedded local service instead, call connect({ hosted: false }).",
      });
    }
    try {
      const client = createClient({ settings, timeoutMs: options.timeoutMs });
      return new Connection("hosted", client, settings);
    } catch (error) {
      throw toPredictionError(error, { subject: "connect", service: "hosted", scrub });
    }
  }
  // The embedded service: its own generated credentials, never the hosted key.
  const credentials = { apiKey: `rbp-local-${randomBytes(24).toString("base64url")}`, accessId: `rbp-notebook-${randomBytes(6).toString("hex")}` };
  let service: LocalService;
  try {
    service = await startLocalService({ port: 0, ...credentials, workers: options.local?.workers, quota: options.local?.quota, unref: true });
  } catch (error) {
    throw toPredictionError(error, { subject: "connect", service: "local", scrub });
  }
  const local = settings.with({ ...credentials, baseUrl: service.url });
  try {
    const client = createClient({ settings: local, timeoutMs: options.timeoutMs, inProcess: inProcessOf(service.lane, options) });
    const embedded: Embedded = { service, url: service.url, ...credentials, workers: options.local?.workers, quota: options.local?.quota, lane: service.lane };
    return new Connection("local", client, local, embedded);
  } catch (error) {
    await service.close();
    throw toPredictionError(error, { subject: "connect", service: "local", scrub: (s) => local.scrub(s) });
  }
}

/**
 * The connection of this kernel: the hosted service when CSA_API_KEY is set, else the embedded
 * local service (started once). See the module comment for when a new one is made.
 */
export async function connect(options?: ConnectOptions): Promise<Connection> {
  // A connection that `prestart` made was made from the settings of that moment (a cell may have set
  // CSA_API_KEY since): the first connect() after it reads them again, as the first connect() of a
  // kernel always does, and keeps it only when they are the same.
  const current = state.current;
  if (options === undefined && current?.prestarted === true) {
    const connection = await connect({});
    current.prestarted = false;
    return connection;
  }
  // The settings of `options`, read once by this call (connect() without options reads none while connected).
  const settings = options === undefined ? undefined : settingsOf(options);
  const signature = settings === undefined ? undefined : signatureOf(options!, settings);
  for (;;) {
    const current = state.current;
    if (current === undefined || options?.fresh === true) break;
    const same = options === undefined || current.signature === signature;
    const connection = await current.promise.catch(() => undefined);
    if (state.current !== current) continue; // replaced meanwhile: look again
    if (connection === undefined || connection.closed) break; // it failed or was closed: make it again
    if (same) return connection;
    // Other options that still ask for the local service: a new client of the running one.
    if (connection.mode !== "local") break;
    if (asksForHosted(options!, settings!)) break;
    let next: Connection | undefined;
    try {
      next = Connection.handOver(connection, options!, settings!);
    } catch (error) {
      throw toPredictionError(error, { subject: "connect", service: "local", scrub: (s) => connection.scrub(s) });
    }
    if (next === undefined) break; // other workers or quota: a new service
    state.current = { signature: signature!, promise: Promise.resolve(next) };
    state.lastOptions = withoutFresh(options!);
    void connection.close(); // its client only: the service went to `next`
    return next;
  }
  const opts = withoutFresh(options ?? state.lastOptions ?? {});
  const previous = state.current;
  // Concurrent callers wait on this one; the previous connection stays until it has opened.
  const read = settings ?? settingsOf(opts);
  const entry = { signature: signatureOf(opts, read), promise: open(opts, read) };
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

function withoutFresh(options: ConnectOptions): ConnectOptions {
  const { fresh: _fresh, ...rest } = options;
  return rest;
}

/**
 * Whether importing the helper starts the embedded service in the background (`prestart`):
 * `RBP_PRESTART=1` yes, `RBP_PRESTART=0` no; otherwise yes inside a notebook kernel (tslab, the rbp
 * kernel, Deno) and no in a script.
 */
export function prestartWanted(env?: Record<string, string | undefined>): boolean {
  const value = envSwitch("RBP_PRESTART", env)?.trim().toLowerCase();
  if (value === "0" || value === "false" || value === "no") return false;
  if (value === "1" || value === "true" || value === "yes") return true;
  return jupyterKernel() !== "none";
}

/**
 * @internal What importing the helper does in a notebook (see `prestartWanted`): when nothing is
 * connected yet and the settings ask for the embedded service (no key, no base URL), `connect()`
 * in the background, then the service's workers started and the engine compiled in them
 * (`LocalService.warm`), so that the first `grid` finds them ready. The service, its sockets and
 * its workers never keep a process alive (unref'd, as any embedded service). A failure here is
 * silent: the first call that connects reports it as ever.
 */
export async function prestart(): Promise<void> {
  if (state.current !== undefined) return;
  let settings: Settings;
  try {
    settings = settingsOf({});
  } catch {
    return;
  }
  if (asksForHosted({}, settings)) return;
  try {
    const pending = connect();
    // connect() made its entry before its first await: marked, so that the first call reads the settings again.
    const entry = (state as State).current;
    if (entry !== undefined) entry.prestarted = true;
    const connection = await pending;
    warmRequestPath();
    await connection.warm();
  } catch {
    // reported by the next connect()
  }
}

/** Runs this thread's part of a call on a small table (the frame's reading, the request's parse) so that the first call finds it compiled; nothing is sent. */
function warmRequestPath(): void {
  let seed = 7;
  const next = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  const X = Array.from({ length: 40 }, () => Array.from({ length: 10 }, next));
  const y = X.map((row) => row[0] + next());
  for (let i = 0; i < 3; i++) {
    const frame = toRequest({ y, X }, {});
    parseRequest("grid", { access_id: "warm-up", y: frame.y, X: frame.X, options: { max_iter: 2000 } }, "v3");
  }
}

/** Schedules `prestart` after the importing module has run, when wanted; the timer keeps nothing alive. */
export function schedulePrestart(): void {
  if (!prestartWanted()) return;
  const timer: unknown = setTimeout(() => void prestart(), 0);
  // Node's timers have unref (Deno's setTimeout answers a number).
  (timer as { unref?: () => void }).unref?.();
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
