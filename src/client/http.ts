/**
 * The transport: one undici Agent (keep-alive connections) per client, JSON in and out, time
 * budgets, retries, and errors by kind.
 *
 * Time: every call has a budget (`timeoutMs`, default the client's), retries included. Each
 * attempt gets what is left of it; when it runs out the call throws TimeoutError. The caller's
 * AbortSignal aborts the request in flight and any backoff sleep at once (AbortError).
 *
 * Retries (retry.ts for the arithmetic):
 * - GET: on a connection error, 500/502/503/504 and 429, up to `maxRetries` times.
 * - POST: sent once. It is re-sent only when it provably never left this process: the
 *   connection could not be opened (ECONNREFUSED, DNS failure ENOTFOUND/EAI_AGAIN, unreachable
 *   host or network, connect timeout). Anything later (a reset or closed socket, a timeout
 *   waiting for the answer, any HTTP status, 429 and 5xx included) may come after the server
 *   received it, so a POST is then never re-sent: a dropped connection throws ConnectionError
 *   with `maybeSent: true`, whose message says the job may have been created and charged.
 *
 * Responses: a 2xx must be JSON (else ApiError with an excerpt); any other status becomes the
 * error of its kind (error-map.ts), whatever the body is (an HTML error page gives an ApiError or
 * the status's class with a short excerpt, never a parse crash). A body is read up to
 * `maxResponseBytes` (default 128 MiB): a larger one (by its Content-Length, or once the bytes
 * read cross the limit) is dropped unread and the call throws ApiError `response_too_large`,
 * naming what to fetch instead; it is never retried and never reported as a dropped connection.
 *
 * The API key lives only in a private field and in the request headers handed to undici. Every
 * string that goes into an error or a log line is scrubbed of it first, and so is every answer a
 * call returns (receipts, results, fields: a server may echo the key back in a warning).
 */
import { Agent, type Dispatcher } from "undici";
import { attemptSignal, DEADLINE, sleep } from "./abort.js";
import type { ResolvedConfig } from "./config.js";
import { errorFromResponse } from "./error-map.js";
import { AbortError, ApiError, ConnectionError, RbpError, safeCause, TimeoutError } from "./errors.js";
import type { Redactor } from "../internal/redact.js";
import { redactorOf } from "./settings.js";
import { backoffDelay, isRetryableStatus, parseRetryAfter } from "./retry.js";

export const CLIENT_VERSION = "0.1.0";

export interface HttpRequest {
  method: "GET" | "POST";
  /** Path below the version root, e.g. `/results/12/abc`; or from the origin when `absolute`. */
  path: string;
  /** JSON text. */
  body?: string;
  signal?: AbortSignal;
  /** Budget of this call; default the client's timeoutMs. */
  timeoutMs?: number;
  maxRetries?: number;
}

export interface HttpResponse {
  status: number;
  json: unknown;
  retryAfterMs: number | undefined;
  /** Attempts it took. */
  attempts: number;
}

/** Connection errors that happen before a single byte of the request is written. */
const NOT_SENT = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "EADDRNOTAVAIL", "UND_ERR_CONNECT_TIMEOUT"]);

function errorCode(error: unknown): string | undefined {
  const e = error as { code?: unknown; errors?: unknown[]; cause?: unknown };
  if (typeof e?.code === "string") return e.code;
  if (Array.isArray(e?.errors) && e.errors.length > 0) return errorCode(e.errors[0]);
  if (e?.cause !== undefined && e.cause !== error) return errorCode(e.cause);
  return undefined;
}

/** `/v3/results/12/0123abcd` -> `/v3/results/12/…`: job and experiment codes are capabilities. */
export function redactPath(path: string): string {
  return path.replace(/\/(results|jobs|experiments)\/([^/]+)\/[^/?]+/, "/$1/$2/…");
}

export class Transport {
  readonly #apiKey: string;
  readonly #agent: Agent;
  readonly #config: ResolvedConfig;
  readonly redactor: Redactor;
  #closed = false;

  constructor(config: ResolvedConfig) {
    this.#apiKey = config.apiKey;
    this.#config = config;
    this.redactor = redactorOf(config.settings);
    this.#agent = new Agent({
      keepAliveTimeout: 10_000,
      keepAliveMaxTimeout: 60_000,
      connections: 16,
      connect: { timeout: 10_000 },
    });
  }

  get root(): string {
    return this.#config.root;
  }

  /** One call: attempts, retries and the mapping of failures to errors. */
  async request(req: HttpRequest): Promise<HttpResponse> {
    if (this.#closed) throw new ConnectionError("the client is closed", { maybeSent: false, code: "client_closed" });
    const budget = req.timeoutMs ?? this.#config.timeoutMs;
    const maxRetries = req.maxRetries ?? this.#config.maxRetries;
    const deadline = performance.now() + budget;
    const path = this.#config.root + req.path;
    const label = `${req.method} ${redactPath(path)}`;
    const read = req.method === "GET";

    for (let attempt = 1; ; attempt++) {
      if (req.signal?.aborted) throw new AbortError(undefined, { request: label, attempts: attempt - 1 });
      const left = deadline - performance.now();
      if (left <= 0) throw this.#timeout(label, budget, attempt - 1, attempt > 1 || !read);
      const started = performance.now();
      let failure: RbpError;
      let retryAfterMs: number | undefined;
      try {
        const res = await this.#once(req, path, left);
        this.#log(`${label} ${res.status} ${(performance.now() - started).toFixed(0)}ms${attempt > 1 ? ` (attempt ${attempt})` : ""}`);
        retryAfterMs = parseRetryAfter(res.headers["retry-after"]);
        const parsed = this.#parse(res.text, res.headers["content-type"]);
        if (res.status >= 200 && res.status < 300) {
          if (parsed.json === undefined) {
            // A 2xx that is not JSON (a captive portal, a proxy page): never retried.
            throw new ApiError(
              `${res.status}: the service answered with ${parsed.contentType ? `"${parsed.contentType}"` : "a body"} that is not JSON${
                parsed.excerpt ? `: "${parsed.excerpt}"` : ""
              } (${label})`,
              { status: res.status, request: label, attempts: attempt, excerpt: parsed.excerpt, code: "not_json" },
            );
          }
          const json = this.redactor.mayContain(res.text) ? this.redactor.value(parsed.json) : parsed.json;
          return { status: res.status, json, retryAfterMs, attempts: attempt };
        }
        failure = errorFromResponse({
          status: res.status,
          body: parsed.json === undefined ? undefined : this.redactor.value(parsed.json),
          excerpt: parsed.excerpt,
          contentType: parsed.contentType,
          retryAfterMs,
          request: label,
          attempts: attempt,
        });
        const retry = read && isRetryableStatus(res.status);
        if (!retry || attempt > maxRetries) throw failure;
      } catch (error) {
        if (error instanceof RbpError && !(error instanceof ConnectionError)) throw error;
        const connection = error instanceof ConnectionError ? error : this.#fromThrown(error, req, label, attempt, budget);
        if (!(connection instanceof ConnectionError)) throw connection;
        failure = connection;
        const retry = read || !connection.maybeSent;
        if (!retry || attempt > maxRetries) throw failure;
      }

      // Back off, then try again (only reads, or a POST that never left).
      let delay: number;
      if (retryAfterMs !== undefined) {
        if (retryAfterMs > this.#config.maxRetryAfterMs) throw failure;
        delay = retryAfterMs;
      } else {
        delay = backoffDelay(attempt - 1, this.#config.retryBaseDelayMs, this.#config.retryMaxDelayMs);
      }
      if (performance.now() + delay >= deadline) throw failure;
      this.#log(`${label}: ${failure.name} (${failure.status ?? (failure as ConnectionError).code ?? "-"}); retry ${attempt}/${maxRetries} in ${delay}ms`);
      try {
        await sleep(delay, req.signal);
      } catch {
        throw new AbortError(undefined, { request: label, attempts: attempt });
      }
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#agent.close();
  }

  /** One attempt: status, headers and the whole body as text. */
  async #once(req: HttpRequest, path: string, timeoutMs: number) {
    const { signal, dispose } = attemptSignal(timeoutMs, req.signal);
    try {
      const headers: Record<string, string> = {
        "x-api-key": this.#apiKey,
        accept: "application/json",
        "user-agent": `rbp-notebook/${CLIENT_VERSION} node/${process.versions.node}`,
      };
      if (req.body !== undefined) headers["content-type"] = "application/json";
      const res = await this.#agent.request({
        origin: this.#config.origin,
        path,
        method: req.method,
        headers,
        body: req.body,
        signal,
        // The attempt's signal is the timer; these only stop undici's own 300 s defaults.
        headersTimeout: timeoutMs + 1_000,
        bodyTimeout: timeoutMs + 1_000,
      });
      const text = await this.#readBody(res, req, path);
      return { status: res.statusCode, headers: res.headers, text };
    } catch (error) {
      if (error instanceof RbpError) throw error;
      if (signal.aborted && signal.reason === DEADLINE) throw DEADLINE_HIT;
      throw error;
    } finally {
      dispose();
    }
  }

  /** The body as text, refused unread beyond `maxResponseBytes` (its Content-Length first, then as it arrives). */
  async #readBody(res: Dispatcher.ResponseData, req: HttpRequest, path: string): Promise<string> {
    const limit = this.#config.maxResponseBytes;
    const declared = Number(res.headers["content-length"]);
    const tooLarge = (bytes: string) => {
      const label = `${req.method} ${redactPath(path)}`;
      return new ApiError(
        `the answer to ${label} is ${bytes} bytes, above this client's limit of ${limit} bytes (maxResponseBytes); ` +
          `it was not read. Fetch a part of it instead: a single field of a result with client.field(receipt, "yhat") ` +
          `or a deeper path such as "prediction_weights/weights" (GET /v3/jobs/{id}/{code}/{field}), ` +
          `or raise maxResponseBytes in connect()/new RbpClient() if the whole answer is needed`,
        { status: res.statusCode, request: label, attempts: 1, code: "response_too_large" },
      );
    };
    if (Number.isFinite(declared) && declared > limit) {
      res.body.destroy();
      throw tooLarge(String(declared));
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) {
        res.body.destroy();
        throw tooLarge(`more than ${limit}`);
      }
      chunks.push(chunk);
    }
    return Buffer.concat(chunks, size).toString("utf8");
  }

  /** A thrown (non-HTTP) failure as an error of its kind. */
  #fromThrown(error: unknown, req: HttpRequest, label: string, attempt: number, budget: number): RbpError {
    const post = req.method === "POST";
    if (req.signal?.aborted) return new AbortError(undefined, { request: label, attempts: attempt });
    const code = errorCode(error);
    if (error === DEADLINE_HIT || code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT") {
      return this.#timeout(label, budget, attempt, true);
    }
    const cause = safeCause(error, (s) => this.redactor.text(s));
    // Not the network: the answer arrived but could not be held (a string or buffer beyond
    // node's limits, out of memory). Say so, rather than "the connection dropped".
    if (error instanceof RangeError || code === "ERR_STRING_TOO_LONG" || code === "ERR_BUFFER_TOO_LARGE") {
      return new ApiError(
        `the answer could not be read by this process (${cause?.message ?? code}); fetch a part of it instead, e.g. a single field with client.field(receipt, "yhat") (${label})`,
        { request: label, attempts: attempt, cause, code: "response_too_large" },
      );
    }
    if (code !== undefined && NOT_SENT.has(code)) {
      return new ConnectionError(
        `could not connect to ${this.#config.origin} (${code}); the request was not sent${post ? ", so no job was created" : ""} (${label})`,
        { maybeSent: false, request: label, attempts: attempt, cause, code: code.toLowerCase() },
      );
    }
    const what = cause?.message ? `${cause.message}${code && !cause.message.includes(code) ? ` [${code}]` : ""}` : (code ?? "unknown error");
    return new ConnectionError(
      post
        ? `the connection dropped after the request was sent (${what}): the job may have been created and charged. The POST was not re-sent; check quota() or the service before submitting again (${label})`
        : `the connection failed (${what}) (${label})`,
      { maybeSent: true, request: label, attempts: attempt, cause, code: code?.toLowerCase() ?? "connection" },
    );
  }

  #timeout(label: string, budget: number, attempts: number, maybeSent: boolean): TimeoutError {
    const post = label.startsWith("POST");
    return new TimeoutError(
      `no answer within ${budget} ms (${label})${
        post && maybeSent ? "; the POST may have reached the service, so the job may have been created and charged: it was not re-sent" : ""
      }`,
      { timeoutMs: budget, phase: "request", maybeSent, request: label, attempts, code: "timeout" },
    );
  }

  /** JSON when the body parses; otherwise a scrubbed excerpt. */
  #parse(text: string, contentType: string | string[] | undefined): { json: unknown; excerpt?: string; contentType?: string } {
    const type = Array.isArray(contentType) ? contentType[0] : contentType;
    const trimmed = text.trimStart();
    if (trimmed.startsWith("{") || trimmed.startsWith("[") || /json/i.test(type ?? "")) {
      try {
        return { json: JSON.parse(text) };
      } catch {
        // fall through to the excerpt
      }
    }
    return { json: undefined, excerpt: excerpt(this.redactor.text(text)), contentType: type };
  }

  #log(line: string): void {
    const log = this.#config.log;
    if (log) log(this.redactor.text(line));
  }

  toJSON(): Record<string, unknown> {
    return { origin: this.#config.origin, root: this.#config.root };
  }
  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return `Transport(${this.#config.origin}${this.#config.root})`;
  }
}

const DEADLINE_HIT = Symbol("deadline hit");

/** A readable start of a non-JSON body: tags dropped, whitespace collapsed, at most 200 chars. */
export function excerpt(text: string): string {
  const plain = text
    .replace(/<(script|style)[^>]*>[\s\S]*?<\/\1>/gi, " ")
    .replace(/<[^>]*>/g, " ")
    .replace(/&nbsp;/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  return plain.length > 200 ? `${plain.slice(0, 199)}…` : plain;
}
