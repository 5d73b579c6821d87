/**
 * The local prediction service: `startLocalService(options)` serves the v3 and v2 APIs (the
 * tables of routes.ts) over node:http on 127.0.0.1, runs jobs on a worker_threads pool, and returns its
 * URL, the credentials to use, and `close()`.
 *
 * Credentials: a credentials file (credentials.ts) if given; otherwise one organisation whose key
 * and access id are `apiKey`/`accessId`, else CSA_API_KEY/CSA_ACCESS_ID, else generated (and kept
 * in the data dir when there is one), so a local notebook and server agree without configuration.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { PredictionService, type ServiceConfig, type ServiceSettings } from "./core.js";
import { loadCredentialsFile, localCredentials, type CredentialSource, type Credentials } from "./credentials.js";
import { EmbeddedStore } from "./store/embedded.js";
import { DirPersistence, MemoryPersistence } from "./store/persistence.js";
import type { Store } from "./store/contract.js";
import { defaultSpawn } from "./pool.js";
import { answerClientError, httpError } from "./http.js";
import { boundConnections, checkIntervalMs, defaultConnectionLimits, type ConnectionCounts, type ConnectionLimits } from "./connections.js";
import { DEFAULT_LIMITS, type ServiceLimits } from "./limits.js";
import { createRouter } from "./router.js";
import { ROUTE_TABLES, type RouteTableFactory } from "./routes.js";
import { Lane } from "./lane.js";

export interface LocalServiceOptions {
  /** TCP port; 0 (the default) picks a free one. */
  port?: number;
  /** Interface to bind; default 127.0.0.1. */
  host?: string;
  /** JSON file of organisations, keys, users and plans (credentials.ts). */
  credentialsFile?: string;
  /** Directory where jobs, results and quota survive restarts; default: memory only. */
  dataDir?: string;
  /**
   * Another store (store/contract.ts) instead of the embedded one, e.g. a database store; the service
   * closes it when it stops. Not with `dataDir`, `retentionMs`, `maxResultMemoryBytes` or `maxJobRecords`.
   */
  store?: Store;
  /** Worker threads; default os.availableParallelism(). */
  workers?: number;
  /** Time limit of one job in milliseconds; default 600000. */
  jobTimeoutMs?: number;
  /** Decimal places of result numbers (the hosted service publishes 6); null = full precision. */
  decimals?: number | null;
  /** Largest POST body in bytes; default 10 MiB. */
  maxBodyBytes?: number;
  /** Largest single field (GET .../jobs/{id}/{code}/{field}) in bytes; default 4 MiB. */
  maxFieldBytes?: number;
  /** Key and access id of the single local organisation (no credentials file). */
  apiKey?: string;
  accessId?: string;
  /** Quota of the single local organisation; default 1,000,000 units. */
  quota?: number;
  /**
   * Most Grid rows of one experiment run together in one worker task, sharing what does not depend
   * on theta (core.ts ServiceConfig: a task also stays within about a second of work); default 64,
   * 1 runs one row per task.
   */
  experimentRowsPerTask?: number;
  /** One line per request and operational notes; default: silent. Never given secrets. */
  log?: (line: string) => void;
  /** Route tables to serve; default ROUTE_TABLES (v3 and v2). */
  routes?: RouteTableFactory[];
  /**
   * v2 GET /results holds a running job's request at most this long (ms); default 240000, at most
   * 290000. The official Python client sees a job finish that takes up to 3 x this + 6 s.
   */
  v2LongPollMs?: number;
  /** How long an uploaded X is kept after its PUT (ms); default 24 h. */
  uploadTtlMs?: number;
  /** How long an upload URL stays valid (ms); default 1 h. */
  uploadUrlTtlMs?: number;
  /** Largest uploaded X in bytes; default 256 MiB. */
  maxUploadBytes?: number;
  /** Absolute root URL put in upload URLs (behind a proxy); default: the address the service listens on (never the request's Host header). */
  publicUrl?: string;
  /** Finished jobs and their results are removed this long after they finish (ms); default 7 days. */
  retentionMs?: number;
  /** Without a data dir: bytes of results kept in memory, least recently used out first; default 256 MiB. */
  maxResultMemoryBytes?: number;
  /**
   * postgres:// URL: keep jobs, results and quota in PostgreSQL (store/pg/), shared with other
   * front ends and `rbp worker` processes (docs/team-service.md). Excludes `dataDir`.
   */
  database?: string;
  /** With `database`: apply the schema migrations it lacks first (`rbp serve --database URL --migrate`). */
  migrate?: boolean;
  /** With `database`: lease of a job this process runs (ms); default 30000. */
  leaseMs?: number;
  /** With a data dir: job records of finished requests kept in memory (the rest are read back on demand); default 100,000. */
  maxJobRecords?: number;
  /**
   * Bounds on connections (docs/limits.md, "Connections"): open connections in all and per remote
   * address, and how long a request may take to arrive; each defaults to `defaultConnectionLimits()`,
   * derived from the process's open-file limit.
   */
  connections?: Partial<ConnectionLimits>;
  /** Limits on the work of one request, checked at POST; each defaults to DEFAULT_LIMITS (docs/limits.md). */
  limits?: Partial<ServiceLimits>;
  /** Starts one pool worker; for tests that need a stand-in worker. Default: worker.ts. */
  spawn?: ServiceSettings["spawn"];
  /**
   * Let the process exit while the service is idle: the listening socket, its connections and the
   * worker threads do not keep Node's event loop alive (the notebook helper's embedded service, so a
   * script that used it ends by itself). Default false.
   */
  unref?: boolean;
}

export interface LocalService {
  /** e.g. http://127.0.0.1:8765 (the v3 API is under /v3 and /v3/prediction-engine, v2 under /v2/prediction-engine). */
  url: string;
  port: number;
  /**
   * The key and access id to use: the local organisation's, or, with a credentials file, the
   * first organisation's key and its first user (source "file").
   */
  credentials: { apiKey: string; accessId: string; source: CredentialSource | "file" };
  /** The connection bounds in force and live counts of open and refused connections. */
  connections: { limits: ConnectionLimits; counts: ConnectionCounts };
  /**
   * The in-process lane (lane.ts) of the organisation whose key the service handed out: what the
   * process that started the service uses instead of HTTP (its client's v3 routes, a backtest's
   * steps); undefined when no organisation has that key. Whoever holds the service holds its lane.
   */
  lane: Lane | undefined;
  /** Starts the workers and compiles the engine's code in them with a small Grid (PredictionService.warm); never fails. */
  warm(): Promise<void>;
  close(): Promise<void>;
}

export async function startLocalService(options: LocalServiceOptions = {}): Promise<LocalService> {
  checkOptions(options);
  const host = options.host ?? "127.0.0.1";
  let credentials: Credentials;
  let shown: LocalService["credentials"];
  if (options.credentialsFile !== undefined) {
    const { credentials: loaded, first } = loadCredentialsFile(options.credentialsFile);
    credentials = loaded;
    shown = { apiKey: first.apiKey, accessId: first.accessId, source: "file" };
  } else {
    const local = localCredentials({ apiKey: options.apiKey, accessId: options.accessId, quota: options.quota, dataDir: options.dataDir });
    credentials = local.credentials;
    shown = {
      apiKey: local.apiKey,
      accessId: local.accessId,
      source: local.source.apiKey === "generated" || local.source.accessId === "generated" ? "generated" : local.source.apiKey,
    };
  }

  const store: Store =
    options.store !== undefined ? options.store : options.database !== undefined ? await openDatabase(options.database, options) : await openEmbedded(options);
  const config: Partial<ServiceConfig> = {
    decimals: options.decimals,
    maxBodyBytes: options.maxBodyBytes,
    maxFieldBytes: options.maxFieldBytes,
    jobTimeoutMs: options.jobTimeoutMs,
    // workers 0 (a database front end that runs no jobs): the pool is never handed a job.
    workers: options.workers === 0 ? 1 : options.workers,
    experimentRowsPerTask: options.experimentRowsPerTask,
    v2LongPollMs: options.v2LongPollMs,
    uploadTtlMs: options.uploadTtlMs,
    uploadUrlTtlMs: options.uploadUrlTtlMs,
    maxUploadBytes: options.maxUploadBytes,
    publicUrl: options.publicUrl,
    retentionMs: options.retentionMs,
    maxResultMemoryBytes: options.maxResultMemoryBytes,
    limits: { ...DEFAULT_LIMITS, ...definedLimits(options.limits) },
  };
  const spawn = options.unref === true ? unrefSpawn(options.spawn ?? defaultSpawn) : options.spawn;
  const service = await PredictionService.open({ credentials, store, config, log: options.log, spawn });
  const tables = (options.routes ?? ROUTE_TABLES).flatMap((make) => make(service));
  const limits: ConnectionLimits = { ...defaultConnectionLimits(), ...definedLimits(options.connections) };
  // No Host header is needed (nothing is built from it); node would otherwise answer 400 without the JSON body.
  const server = createServer(
    { requireHostHeader: false, connectionsCheckingInterval: checkIntervalMs(limits) },
    createRouter(tables, { log: options.log, outage: (error) => httpError(service.outageError(error)) }),
  );
  server.on("clientError", answerClientError);
  const counts = boundConnections(server, limits, options.log);
  if (options.unref === true) {
    server.unref();
    server.on("connection", (socket) => socket.unref());
  }
  try {
    await listen(server, options.port ?? 0, host);
  } catch (error) {
    await service.close();
    throw error;
  }
  const port = (server.address() as AddressInfo).port;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  let lane: Lane | undefined;
  try {
    lane = new Lane(service, service.auth.organisation({ "x-api-key": shown.apiKey }));
  } catch {
    // No organisation has the key handed out: no lane (HTTP serves as ever).
  }

  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    credentials: shown,
    connections: { limits, counts },
    lane,
    warm: () => service.warm(),
    close() {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeAllConnections();
        await closed;
        await service.close();
      })();
      return closing;
    },
  };
}

async function openEmbedded(options: LocalServiceOptions): Promise<Store> {
  const persistence = options.dataDir !== undefined ? await DirPersistence.open(options.dataDir) : new MemoryPersistence();
  const store = await EmbeddedStore.open(persistence, {
    retentionMs: options.retentionMs,
    maxResultMemoryBytes: options.maxResultMemoryBytes,
    maxJobRecords: options.maxJobRecords,
    log: options.log,
  });
  if (store.requeued > 0) options.log?.(`re-queueing ${store.requeued} job(s) interrupted by the last stop`);
  return store;
}

/** The PostgreSQL store, loaded only when asked for (the embedded service never loads `pg`). */
async function openDatabase(url: string, options: LocalServiceOptions): Promise<Store> {
  const { PgStore } = await import("./store/pg/store.js");
  return PgStore.open(url, {
    migrate: options.migrate,
    runJobs: options.workers !== 0,
    leaseMs: options.leaseMs,
    decimals: options.decimals,
    retentionMs: options.retentionMs,
    log: options.log,
  });
}

/** Workers that do not keep the process alive (a waiting caller's own timers and sockets do). */
function unrefSpawn(spawn: NonNullable<ServiceSettings["spawn"]>): NonNullable<ServiceSettings["spawn"]> {
  return () => {
    const worker = spawn();
    // The first 'message' listener re-refs a worker unref'd before it (nodejs/node#53036), and the
    // pool adds its listener after spawn: add one first, then unref.
    worker.on("message", () => undefined);
    worker.unref();
    return worker;
  };
}

function checkOptions(o: LocalServiceOptions): void {
  const integer = (name: string, v: number | undefined, min: number, max = Number.MAX_SAFE_INTEGER) => {
    if (v !== undefined && !(Number.isInteger(v) && v >= min && v <= max)) {
      throw new RangeError(`startLocalService: ${name} must be an integer from ${min} to ${max}, got ${v}`);
    }
  };
  integer("port", o.port, 0, 65535);
  integer("workers", o.workers, o.database !== undefined ? 0 : 1, 1024);
  integer("leaseMs", o.leaseMs, 100);
  if (o.database !== undefined && o.dataDir !== undefined) throw new RangeError("startLocalService: give database or dataDir, not both");
  if (o.database !== undefined && !/^postgres(ql)?:\/\//.test(o.database)) throw new RangeError("startLocalService: database must be a postgres:// URL");
  integer("jobTimeoutMs", o.jobTimeoutMs, 1);
  integer("maxBodyBytes", o.maxBodyBytes, 1);
  integer("maxFieldBytes", o.maxFieldBytes, 1);
  integer("quota", o.quota, 0);
  integer("v2LongPollMs", o.v2LongPollMs, 0, 290_000);
  integer("uploadTtlMs", o.uploadTtlMs, 1);
  integer("uploadUrlTtlMs", o.uploadUrlTtlMs, 1);
  integer("maxUploadBytes", o.maxUploadBytes, 1);
  integer("retentionMs", o.retentionMs, 1);
  integer("maxResultMemoryBytes", o.maxResultMemoryBytes, 0);
  integer("maxJobRecords", o.maxJobRecords, 0);
  if (o.publicUrl !== undefined && !/^https?:\/\/[^\s/?#]+(?:\/[^\s?#]*)?$/.test(o.publicUrl)) {
    throw new RangeError(`startLocalService: publicUrl must be an absolute http(s) URL, got ${o.publicUrl}`);
  }
  if (o.decimals !== undefined && o.decimals !== null) integer("decimals", o.decimals, 0, 15);
  if (
    o.store !== undefined &&
    (o.dataDir !== undefined || o.maxJobRecords !== undefined || o.maxResultMemoryBytes !== undefined || o.retentionMs !== undefined)
  ) {
    throw new RangeError(
      "startLocalService: store replaces the embedded store; dataDir, retentionMs, maxResultMemoryBytes and maxJobRecords configure the embedded one",
    );
  }
  for (const [name, value] of Object.entries(o.connections ?? {})) {
    if (!Object.hasOwn(defaultConnectionLimits(1024), name))
      throw new RangeError(
        `startLocalService: connections.${name} is not a connection limit; they are ${Object.keys(defaultConnectionLimits(1024)).join(", ")}`,
      );
    integer(`connections.${name}`, value, 1);
  }
  for (const [name, value] of Object.entries(o.limits ?? {})) {
    if (!Object.hasOwn(DEFAULT_LIMITS, name))
      throw new RangeError(`startLocalService: limits.${name} is not a limit; the limits are ${Object.keys(DEFAULT_LIMITS).join(", ")}`);
    integer(`limits.${name}`, value, 1);
  }
}

function definedLimits<T extends object>(limits: Partial<T> | undefined): Partial<T> {
  return Object.fromEntries(Object.entries(limits ?? {}).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => reject(error);
    server.once("error", onError);
    server.listen(port, host, () => {
      server.off("error", onError);
      resolve();
    });
  });
}

export { PredictionService, type ServiceConfig } from "./core.js";
export type { Store, CreateJobs, CreateFailedJob, Created, Claimed } from "./store/contract.js";
export { QuotaExceededError, StorageFullError, StorageBusyError, DamagedStoreError } from "./store/errors.js";
export { ROUTE_TABLES, type RouteTableFactory } from "./routes.js";
export { ServiceError } from "./http.js";
export { Lane, LaneEndpoint, LaneWindowError, type LaneReply, type LaneBatch, type LaneWindow, type LaneRow, type LaneSubmitted } from "./lane.js";
export { DEFAULT_LIMITS, type ServiceLimits } from "./limits.js";
export { defaultConnectionLimits, openFileLimit, type ConnectionLimits, type ConnectionCounts } from "./connections.js";
export type { RouteTable, Route, RouteRequest } from "./router.js";
