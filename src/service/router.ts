/**
 * Method + path matching over route tables. Each table serves its routes under one or more path
 * prefixes (v3: `/v3/prediction-engine` and `/v3`); the service takes a list of tables
 * (routes.ts), so the v2 routes are one more table.
 *
 * Patterns: literal segments, `:name` for one segment, and a last `*name` for the rest of the path
 * (one or more segments, slashes kept: `/jobs/:job_id/:job_code/*field`). Segments are
 * percent-decoded one by one (`Impact%20on%20Fit` -> `Impact on Fit`); an encoded slash inside a
 * segment of a `*` parameter splits it like a literal one. A trailing slash is ignored.
 *
 * Every reply is JSON: a request target that is no path 400, unknown path 404, known path with
 * another method 405, a handler's ServiceError its own status, a store that cannot be reached 503
 * (`settings.outage`), anything else 500 (logged, without request contents). No exception leaves the listener. Requests node's parser refuses before they
 * reach it get their JSON 400 from `answerClientError` (http.ts).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { httpError, sendError, ServiceError } from "./http.js";

export type Method = "GET" | "POST" | "PUT" | "DELETE";

export interface RouteRequest {
  req: IncomingMessage;
  res: ServerResponse;
  /** `:name` parameters, decoded. */
  params: Record<string, string>;
  /** The `*name` parameter as its decoded segments (empty when the pattern has none). */
  rest: string[];
  /** The query string. */
  query: URLSearchParams;
}

export interface Route {
  method: Method;
  /** Path below the table's prefix, e.g. `/results/:job_id/:job_code`. */
  path: string;
  handler: (request: RouteRequest) => Promise<void> | void;
}

export interface RouteTable {
  /** For logs, e.g. "v3". */
  name: string;
  /** Path prefixes the routes are served under, e.g. ["/v3/prediction-engine", "/v3"]; "" = root. */
  prefixes: string[];
  routes: Route[];
}

interface CompiledRoute {
  route: Route;
  table: RouteTable;
  segments: string[];
  rest: string | undefined;
}

export interface RouterSettings {
  /** One line per request: method, path (job codes elided), status, milliseconds. */
  log?: (line: string) => void;
  /**
   * What a handler's error means when it is no ServiceError nor refusal: the 503 of a store that cannot be
   * reached (core.ts `outageError`), or undefined (then 500). Without an error: a quick check run
   * before each matched route, whose reply is sent instead of running it.
   */
  outage?: (error?: unknown) => ServiceError | undefined;
}

export type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

export function createRouter(tables: RouteTable[], settings: RouterSettings = {}): RequestListener {
  // Longest prefix first, so `/v3/prediction-engine/grid` is not read as `/v3` + `/prediction-engine/grid`.
  const mounts = tables
    .flatMap((table) => table.prefixes.map((prefix) => ({ prefix: splitPath(prefix), table, routes: table.routes.map((route) => compile(route, table)) })))
    .sort((a, b) => b.prefix.length - a.prefix.length);

  const route = (req: IncomingMessage, res: ServerResponse): void => {
    const started = performance.now();
    const url = requestTarget(req.url);
    if (url === undefined) {
      respondError(res, new ServiceError(400, "bad_request", "the request target is not a valid path (expected /v3/..., /v2/...)", { field: "path" }));
      return;
    }
    let segments: string[];
    try {
      segments = splitPath(url.pathname);
    } catch {
      respondError(res, new ServiceError(400, "bad_request", "the path is not valid percent-encoding"));
      return;
    }
    let matched: { compiled: CompiledRoute; params: Record<string, string>; rest: string[] } | undefined;
    const allowed = new Set<string>();
    for (const mount of mounts) {
      if (!startsWith(segments, mount.prefix)) continue;
      const below = segments.slice(mount.prefix.length);
      for (const compiled of mount.routes) {
        const m = match(compiled, below);
        if (!m) continue;
        if (compiled.route.method !== req.method) {
          allowed.add(compiled.route.method);
          continue;
        }
        matched = { compiled, ...m };
        break;
      }
      if (matched) break;
    }
    if (settings.log) {
      const log = settings.log;
      res.on("finish", () => log(`${req.method} ${redact(url.pathname)} ${res.statusCode} ${(performance.now() - started).toFixed(0)}ms`));
    }
    if (!matched) {
      if (allowed.size > 0) {
        respondError(
          res,
          new ServiceError(405, "method_not_allowed", `${req.method} is not served here; use ${[...allowed].join(" or ")}`, {
            headers: { allow: [...allowed].join(", ") },
          }),
        );
      } else {
        respondError(res, new ServiceError(404, "not_found", `no route ${req.method} ${url.pathname}`));
      }
      return;
    }
    const request: RouteRequest = { req, res, params: matched.params, rest: matched.rest, query: url.searchParams };
    const down = settings.outage?.();
    if (down) {
      respondError(res, down);
      return;
    }
    let outcome: Promise<void> | void;
    try {
      outcome = matched.compiled.route.handler(request);
    } catch (error) {
      outcome = Promise.reject(error);
    }
    Promise.resolve(outcome).catch((error: unknown) => {
      const refusal = httpError(error);
      const outage = refusal ? undefined : settings.outage?.(error);
      if (refusal) respondError(res, refusal);
      else if (outage) respondError(res, outage);
      else {
        settings.log?.(`internal error on ${req.method} ${redact(url.pathname)}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
        respondError(res, new ServiceError(500, "internal_error", "the service failed unexpectedly; see its log"));
      }
    });
  };
  // Nothing a request does may escape the listener: an exception thrown there is an uncaught
  // exception, and the process (with every job of the in-memory store) would end.
  return (req, res) => {
    try {
      route(req, res);
    } catch (error) {
      settings.log?.(`internal error before routing ${req.method}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      try {
        respondError(res, new ServiceError(500, "internal_error", "the service failed unexpectedly; see its log"));
      } catch {
        res.destroy();
      }
    }
  };
}

/**
 * The request target as a URL, or undefined when it is none a client may send: the origin form
 * (`/v3/quota?x=1`, always read as a path, so `//` or `///` is a path of empty segments and never
 * an authority) or the absolute form (`http://host:port/path`, whose authority is ignored).
 * `new URL` throws on `http://[::1/` or a port above 65535: that is a 400, not an exception.
 */
export function requestTarget(raw: string | undefined): URL | undefined {
  if (raw === undefined) return undefined;
  try {
    if (raw.startsWith("/")) return new URL(`http://localhost${raw}`);
    if (/^https?:\/\//i.test(raw)) return new URL(raw);
  } catch {
    return undefined;
  }
  return undefined;
}

function respondError(res: ServerResponse, error: ServiceError): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendError(res, error);
}

function compile(route: Route, table: RouteTable): CompiledRoute {
  const segments = route.path.split("/").filter((s) => s !== "");
  const last = segments[segments.length - 1];
  if (last?.startsWith("*")) return { route, table, segments: segments.slice(0, -1), rest: last.slice(1) };
  return { route, table, segments, rest: undefined };
}

function match(compiled: CompiledRoute, path: string[]): { params: Record<string, string>; rest: string[] } | undefined {
  const { segments, rest } = compiled;
  if (rest === undefined ? path.length !== segments.length : path.length <= segments.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i++) {
    const pattern = segments[i];
    if (pattern.startsWith(":")) params[pattern.slice(1)] = path[i];
    else if (pattern !== path[i]) return undefined;
  }
  const tail =
    rest === undefined
      ? []
      : path
          .slice(segments.length)
          .flatMap((s) => s.split("/"))
          .filter((s) => s !== "");
  if (rest !== undefined && tail.length === 0) return undefined;
  return { params, rest: tail };
}

/** `/v3/jobs/1/` -> ["v3", "jobs", "1"]; each segment percent-decoded (throws on bad encoding). */
function splitPath(path: string): string[] {
  const raw = path.split("/");
  if (raw[0] === "") raw.shift();
  if (raw.length > 0 && raw[raw.length - 1] === "") raw.pop();
  return raw.map((s) => decodeURIComponent(s));
}

function startsWith(path: string[], prefix: string[]): boolean {
  if (path.length < prefix.length) return false;
  return prefix.every((s, i) => path[i] === s);
}

/** Job and experiment codes are capabilities: keep them out of logs. */
export function redact(path: string): string {
  return path.replace(/\/(results|jobs|experiments)\/([^/]+)\/[^/]+/, "/$1/$2/…");
}
