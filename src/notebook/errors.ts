/**
 * Failures of a notebook call as one readable error.
 *
 * `grid`, `maxfit`, `psr`, `quota` and `connect` throw `PredictionError`: its `message` says, in
 * one line, what went wrong in words a notebook user can act on ("Grid: the service refused the
 * request. X[3][1]: expected a number ... (field X[3][1])"), with `kind` the class of problem,
 * `code` the kind in snake_case (every rbp-notebook error has one, errors/index.ts),
 * `field` the part of the request or data at fault, `hint` what to do, and `cause` the typed error
 * of the layer below (ValidationError, QuotaExceededError, FrameError, ...) for code that needs it.
 *
 * What a cell shows. tslab prints a thrown error with `console.error(error)`, that is
 * `util.inspect`, which for an ordinary error is its stack: tslab's own frames and the client's.
 * A PredictionError inspects as its readable text only (`PredictionError: <message>` and the hint),
 * its `stack` is that same text, and in a kernel the helper displays it as an HTML box before
 * throwing (`bundle()`; Deno displays it by its display symbol). In tslab the error is then shown
 * once: tslab would print the same text again on stderr when the cell throws it (a red block that
 * wraps mid-word), so once the box is shown `dropStderrEcho` drops that one echo. The API key never appears: the
 * client scrubs what it throws, and every string here passes through the connection's redactor too.
 */
import { JUPYTER_DISPLAY, RBP_BUNDLE, cellValue, escapeHtml, type MimeBundle } from "../display/index.js";
import {
  AbortError,
  ApiError,
  AuthenticationError,
  ConfigurationError,
  ConnectionError,
  FieldTooLargeError,
  JobFailedError,
  JobPendingError,
  NotFoundError,
  PayloadTooLargeError,
  QuotaExceededError,
  RateLimitError,
  RbpError,
  TimeoutError,
  ValidationError,
} from "../client/index.js";
import { brand, RbpBaseError } from "../errors/index.js";
import { FrameError } from "../frame/index.js";

/** The class of problem behind a PredictionError. */
export type ProblemKind =
  | "data"
  | "invalid-request"
  | "too-large"
  | "authentication"
  | "quota"
  | "rate-limit"
  | "job-failed"
  | "not-found"
  | "pending"
  | "timeout"
  | "connection"
  | "configuration"
  | "aborted"
  | "service"
  | "usage"
  | "internal";

const HEADINGS: Record<ProblemKind, string> = {
  data: "the data cannot be used",
  "invalid-request": "the request is invalid",
  "too-large": "the request is too large",
  authentication: "the service did not accept the credentials",
  quota: "the plan's quota is spent",
  "rate-limit": "the service asks to slow down",
  "job-failed": "the job failed",
  "not-found": "the service does not know this job or field",
  pending: "the job is still running",
  timeout: "the service took too long",
  connection: "the prediction service cannot be reached",
  configuration: "the connection is not configured",
  aborted: "the call was cancelled",
  service: "the service answered with an error",
  usage: "this does not apply here",
  internal: "rbp-notebook failed",
};

export { analysisLabel } from "../engine/result.js";

export interface PredictionErrorInit {
  kind: ProblemKind;
  /** The analysis or call the failure belongs to: "Grid", "quota", "connect". */
  subject: string;
  /** What happened, as the layer below said it (already scrubbed). */
  detail: string;
  field?: string;
  hint?: string;
  status?: number;
  jobId?: number;
  cause?: unknown;
}

const INSPECT = Symbol.for("nodejs.util.inspect.custom");

/** A failed notebook call: a readable message, the class of problem, and the typed cause. */
export class PredictionError extends RbpBaseError {
  static {
    brand(this, "PredictionError");
  }
  override name = "PredictionError";
  /** The class of problem (data, invalid-request, quota, job-failed, connection, ...). */
  readonly kind: ProblemKind;
  /** The short heading of the problem: "the plan's quota is spent". */
  readonly heading: string;
  /** "Grid", "PSR", "MaxFit", "quota" or "connect". */
  readonly subject: string;
  /** What the service, the client or the data check said. */
  readonly detail: string;
  /** The request field or data column at fault (`theta`, `X[3][1]`, `options.censor_type`, `Age`). */
  readonly field: string | undefined;
  /** What to do about it, when there is something to say. */
  readonly hint: string | undefined;
  /** HTTP status of the service's answer, when there was one. */
  readonly status: number | undefined;
  /** The job concerned, when one was created. */
  readonly jobId: number | undefined;

  constructor(init: PredictionErrorInit) {
    const heading = HEADINGS[init.kind];
    const mentionsField = init.field === undefined || init.detail.includes(init.field);
    const message = `${init.subject}: ${heading}. ${init.detail}${mentionsField ? "" : ` (field ${init.field})`}`;
    super(message, init.kind.replace(/-/g, "_"), init.cause !== undefined ? { cause: init.cause } : undefined);
    this.kind = init.kind;
    this.heading = heading;
    this.subject = init.subject;
    this.detail = init.detail;
    this.field = init.field;
    this.hint = init.hint;
    this.status = init.status;
    this.jobId = init.jobId;
    // What a kernel prints for an uncaught error: this text, not the frames of tslab and the client.
    this.stack = this.text();
  }

  /** The readable text: the message, then the hint. */
  text(): string {
    return `${this.name}: ${this.message}${this.hint !== undefined ? `\n${this.hint}` : ""}`;
  }

  /** The error as a notebook output: a red box with the heading, the detail, the field and the hint. */
  bundle(): MimeBundle {
    const rows = [
      `<div style="font-weight:600;margin-bottom:.25em">${escapeHtml(`${this.subject}: ${this.heading}`)}</div>`,
      `<div>${escapeHtml(this.detail)}</div>`,
    ];
    if (this.field !== undefined) rows.push(`<div style="margin-top:.25em">field: <code>${escapeHtml(this.field)}</code></div>`);
    if (this.hint !== undefined) rows.push(`<div style="margin-top:.25em;color:#555">${escapeHtml(this.hint)}</div>`);
    const html =
      `<div class="rbp-error" data-rbp-error="${escapeHtml(this.kind)}" style="border-left:4px solid #c62828;background:#fdecea;color:#222;` +
      `padding:.6em 1em;margin:.4em 0;font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;white-space:pre-wrap">${rows.join("")}</div>`;
    return { "text/html": html, "text/plain": this.text() };
  }

  [RBP_BUNDLE](): MimeBundle {
    return this.bundle();
  }

  [JUPYTER_DISPLAY](): MimeBundle | Promise<MimeBundle> {
    return cellValue(this.bundle());
  }

  toJSON(): Record<string, unknown> {
    const out: Record<string, unknown> = { name: this.name, kind: this.kind, message: this.message };
    for (const [k, v] of Object.entries({ field: this.field, hint: this.hint, status: this.status, jobId: this.jobId })) if (v !== undefined) out[k] = v;
    return out;
  }

  [INSPECT](): string {
    return this.text();
  }
}

/**
 * After a PredictionError's box was shown in a tslab cell, drops the one stderr write that echoes
 * it when tslab prints the thrown error (`console.error(error)`, whose text is `error.text()`).
 * Anything else written to stderr passes; the filter removes itself at that write, and tslab
 * replaces `process.stderr.write` for each cell anyway, so it never outlives the cell.
 */
export function dropStderrEcho(error: PredictionError, stream: { write: (...args: never[]) => boolean } = process.stderr): void {
  const echo = `${error.text()}\n`;
  const write = stream.write;
  const filter = function (this: unknown, chunk: unknown, ...rest: unknown[]): boolean {
    const text = typeof chunk === "string" ? chunk : chunk instanceof Uint8Array ? Buffer.from(chunk).toString("utf8") : undefined;
    if (text === echo) {
      if (stream.write === filter) stream.write = write;
      return true;
    }
    return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
  };
  stream.write = filter as never;
}

export interface ErrorContext {
  subject: string;
  /** "hosted" or "local" when a connection was made. */
  service?: "hosted" | "local";
  /** Removes secrets from every string (the connection's key and access id). */
  scrub: (text: string) => string;
}

type Make = (kind: ProblemKind, detail: string, extra?: Partial<PredictionErrorInit>) => PredictionError;

/** One row of the translation: the class of the layer below, and how it reads as a PredictionError. */
interface Translation<E> {
  cls: abstract new (...args: never[]) => E;
  translate: (error: E, make: Make, hosted: boolean) => PredictionError;
}

const row = <E>(cls: abstract new (...args: never[]) => E, translate: Translation<E>["translate"]): Translation<unknown> =>
  ({ cls, translate }) as Translation<unknown>;

const status = (error: RbpError) => ({ status: error.status });
const withField = (field: string | undefined) => (field !== undefined ? { field } : {});
const withJob = (jobId: number | undefined) => (jobId !== undefined ? { jobId } : {});

/**
 * The translation of the layer below's errors, one row per class, the first that matches wins
 * (so a subclass goes before its base). A client error not listed falls to the RbpError row.
 */
const TRANSLATIONS: ReadonlyArray<Translation<unknown>> = [
  row(FrameError, (error, make) => {
    const where = [error.column !== undefined ? `column "${error.column}"` : undefined, error.row !== undefined ? `row ${error.row}` : undefined].filter(
      Boolean,
    );
    const mentioned = error.column === undefined || error.message.includes(error.column);
    return make("data", mentioned || where.length === 0 ? error.message : `${error.message} (${where.join(", ")})`, {
      ...withField(error.column),
      hint: /not in the data|has no column/.test(error.message)
        ? "Nothing was sent. Check the column names in the spec ({ y, X, theta }) against the data."
        : "Nothing was sent.",
    });
  }),
  row(ValidationError, (error, make) =>
    make("invalid-request", error.message, {
      ...status(error),
      ...withField(error.field),
      hint: error.local
        ? /nothing was sent/i.test(error.message)
          ? undefined
          : "Nothing was sent and no quota was spent."
        : error.expected !== undefined
          ? `Expected: ${error.expected}.`
          : undefined,
    }),
  ),
  row(PayloadTooLargeError, (error, make) =>
    make("too-large", error.message, {
      ...status(error),
      hint: error.local ? "Nothing was sent. Use fewer rows or attributes, or send X in parts." : undefined,
    }),
  ),
  row(FieldTooLargeError, (error, make) =>
    make("too-large", error.message, {
      ...status(error),
      ...withField(error.field),
      hint: error.smallerPaths.length > 0 ? `Ask for a smaller part: ${error.smallerPaths.slice(0, 5).join(", ")}.` : undefined,
    }),
  ),
  row(AuthenticationError, (error, make, hosted) =>
    make("authentication", error.message, {
      ...status(error),
      ...withField(error.field),
      hint: hosted
        ? "Check CSA_API_KEY (the organisation's key) and CSA_ACCESS_ID (your user access id), then call connect() again."
        : "The embedded service refused its own credentials; call disconnect() and run the cell again.",
    }),
  ),
  row(QuotaExceededError, (error, make) => {
    const counts = [
      error.remaining !== undefined ? `${error.remaining} units left` : undefined,
      error.required !== undefined ? `${error.required} needed` : undefined,
    ].filter(Boolean);
    return make("quota", error.message, {
      ...status(error),
      hint: `${counts.length > 0 ? `${counts.join(", ")}. ` : ""}Nothing was charged. quota() shows what is left of the plan.`,
    });
  }),
  row(RateLimitError, (error, make) =>
    make("rate-limit", error.message, {
      ...status(error),
      hint: error.retryAfterMs !== undefined ? `Try again in ${Math.ceil(error.retryAfterMs / 1000)} s.` : "Wait a little and run the cell again.",
    }),
  ),
  row(JobFailedError, (error, make) => {
    const singular = /singular/i.test(error.reason) && !/pseudoinverse/.test(error.reason);
    return make("job-failed", error.reason || error.message, {
      ...status(error),
      ...withJob(error.jobId),
      hint: singular ? 'The covariance of the attributes is singular: drop a redundant attribute or pass { inv_method: "pseudoinverse" }.' : undefined,
    });
  }),
  row(JobPendingError, (error, make) =>
    make("pending", error.message, { ...status(error), ...withJob(error.jobId), hint: "Wait for it with the client: connect().client.wait(receipt)." }),
  ),
  row(NotFoundError, (error, make) => make("not-found", error.message, status(error))),
  row(TimeoutError, (error, make) =>
    make("timeout", error.message, {
      ...status(error),
      ...withJob(error.jobId),
      hint:
        error.phase === "wait"
          ? "The job goes on in the service; wait for it again with the client (connect().client.wait(receipt)) or allow more time ({ timeoutMs })."
          : error.maybeSent
            ? "The request may have reached the service (a job may have been created and charged)."
            : undefined,
    }),
  ),
  row(ConnectionError, (error, make, hosted) =>
    make("connection", error.message, {
      ...status(error),
      hint: hosted
        ? `Check the base URL (RBP_BASE_URL) and the network.${error.maybeSent ? " The request may have reached the service." : ""}`
        : "The embedded local service is not answering; call disconnect() and run the cell again.",
    }),
  ),
  row(ConfigurationError, (error, make) => make("configuration", error.message, { field: error.setting })),
  row(AbortError, (error, make) => make("aborted", error.message, status(error))),
  row(ApiError, (error, make) => make("service", error.message, status(error))),
  row(RbpError, (error, make) => make("service", error.message, status(error))),
];

/** Any failure of a notebook call as a PredictionError (an existing one is returned as it is). */
export function toPredictionError(error: unknown, ctx: ErrorContext): PredictionError {
  if (error instanceof PredictionError) return error;
  const s = ctx.scrub;
  const make: Make = (kind, detail, extra = {}) =>
    new PredictionError({
      kind,
      subject: ctx.subject,
      detail: s(detail),
      cause: error,
      ...extra,
      ...(extra.field !== undefined ? { field: s(extra.field) } : {}),
      ...(extra.hint !== undefined ? { hint: s(extra.hint) } : {}),
    });
  const found = TRANSLATIONS.find((t) => error instanceof t.cls);
  if (found !== undefined) return found.translate(error, make, ctx.service === "hosted");
  const e = error instanceof Error ? error : new Error(String(error));
  return make("internal", `${e.name === "Error" ? "" : `${e.name}: `}${e.message}`, {
    hint: "This looks like a bug in rbp-notebook; error.cause has the details.",
  });
}
