/**
 * Outages said as they are (docs/limits.md, "When the store is down"): when the store cannot be
 * reached (PostgreSQL stopped or refusing, a data dir that is gone or unreadable), every route
 * answers 503 `store_unavailable` with `Retry-After` and a message that names the store and the
 * real cause (`ECONNREFUSED`, "its directory is gone"), never a 500 and never a stack trace in the
 * log. The detail with server paths and addresses goes to the log, once per cause and minute.
 */
import { ServiceRefusal } from "./refusals.js";

/** A store that cannot be used: which one, and why, in words a client may read. */
export interface StoreOutage {
  /** e.g. "the PostgreSQL store (127.0.0.1:5432/rbp)", "the file store (--data-dir)". */
  store: string;
  /** e.g. "it refuses connections (ECONNREFUSED): is the database server running?". */
  cause: string;
  /** The OS or database error code, when there is one. */
  code?: string;
}

/** Seconds a client should wait before trying again. */
const OUTAGE_RETRY_AFTER_S = 5;

/** The error code of `error` (node's `code`, pg's SQLSTATE), or of its `cause`, if any. */
export function errorCode(error: unknown): string | undefined {
  const e = error as { code?: unknown; cause?: { code?: unknown } } | undefined;
  if (typeof e?.code === "string") return e.code;
  if (typeof e?.cause?.code === "string") return e.cause.code;
  return undefined;
}

/**
 * What an OS error on a store's files means, in words; undefined for codes that are no outage
 * (EMFILE and ENFILE are a passing shortage: 503 `service_busy`, core.ts).
 */
export function fileOutageCause(code: string | undefined): string | undefined {
  switch (code) {
    case "ENOENT":
    case "ENOTDIR":
      return `its directory is gone (${code})`;
    case "EACCES":
    case "EPERM":
      return `its files cannot be opened: permission denied (${code})`;
    case "EROFS":
      return "its disk is read-only (EROFS)";
    case "EIO":
      return "its disk answers with I/O errors (EIO)";
    default:
      return undefined;
  }
}

/** What a PostgreSQL client error means, in words; undefined for errors that are no outage. */
export function databaseOutageCause(error: unknown): { cause: string; code?: string } | undefined {
  const code = errorCode(error);
  const message = error instanceof Error ? error.message : String(error);
  switch (code) {
    case "ECONNREFUSED":
      return { cause: "it refuses connections (ECONNREFUSED): the database server is not running or not listening", code };
    case "ECONNRESET":
    case "EPIPE":
      return { cause: `the database server closed the connection (${code})`, code };
    case "ETIMEDOUT":
      return { cause: "the database server did not answer in time (ETIMEDOUT)", code };
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return { cause: `the database host's name does not resolve (${code})`, code };
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return { cause: `the database host cannot be reached (${code})`, code };
    case "57P01":
    case "57P02":
      return { cause: `the database server is shutting down (SQLSTATE ${code})`, code };
    case "57P03":
      return { cause: "the database server is starting up or shutting down (SQLSTATE 57P03)", code };
    case "53300":
      return { cause: "the database server has no free connection slots (SQLSTATE 53300)", code };
    case "08000":
    case "08001":
    case "08003":
    case "08004":
    case "08006":
      return { cause: `the connection to the database failed (SQLSTATE ${code})`, code };
  }
  if (/Connection terminated/i.test(message)) return { cause: "the database server closed the connection" };
  if (/timeout exceeded when trying to connect/i.test(message)) return { cause: "no connection to the database could be made in time" };
  return undefined;
}

/**
 * The refusal (`store_unavailable`: a 503 with Retry-After, http.ts) when the store is out.
 *
 * @example
 * outageReply({ store: "the PostgreSQL store (127.0.0.1:5432/rbp)", cause: "it refuses connections (ECONNREFUSED)" }).code; // "store_unavailable"
 */
export function outageReply(outage: StoreOutage): ServiceRefusal {
  return new ServiceRefusal(
    "store_unavailable",
    `Service Unavailable: ${outage.store} cannot be used right now: ${outage.cause}. Nothing was stored or charged; try again in a moment (Retry-After)`,
    {
      extra: { store: outage.store, cause: outage.cause, ...(outage.code !== undefined ? { cause_code: outage.code } : {}) },
      retryAfterS: OUTAGE_RETRY_AFTER_S,
    },
  );
}
