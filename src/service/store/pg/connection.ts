/**
 * Connections of the PostgreSQL store: the pool (integers as numbers), transactions that survive a
 * server going away mid-way, and what a PostgreSQL error means for the store contract
 * (contract.ts: StorageFullError, StorageBusyError).
 */
import pg from "pg";
import { StorageBusyError, StorageFullError, storeErrorCode } from "../errors.js";

/** Integers as numbers (ids stay far below 2^53), everything else as pg parses it. */
export const TYPES = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === 20 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as "text")) as typeof pg.types.getTypeParser,
};

export function makePool(url: string, max = 10): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max, types: TYPES, connectionTimeoutMillis: 10_000 });
  // An idle client whose server went away (restart, failover) must not crash the process: the
  // pool drops it and the next query connects again.
  pool.on("error", () => undefined);
  return pool;
}

/**
 * Runs `body` in a transaction on a client of the pool. While a client is checked out, pg-pool
 * listens for none of its errors, so a server that goes away between two statements would throw
 * an uncaught 'error' and end the process: listen for the length of the transaction, and discard
 * the client (release with the error) when anything failed.
 */
export async function inTransaction<T>(pool: pg.Pool, body: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  const c = await pool.connect();
  let broken: Error | undefined;
  const onError = (error: Error) => {
    broken ??= error;
  };
  c.on("error", onError);
  try {
    await c.query("BEGIN");
    const out = await body(c);
    await c.query("COMMIT");
    return out;
  } catch (error) {
    broken ??= error as Error;
    await c.query("ROLLBACK").catch(() => undefined);
    throw error;
  } finally {
    c.off("error", onError);
    c.release(broken);
  }
}

/** PostgreSQL errors as the store contract's: disk full (53100) -> StorageFullError; no connection, too many connections, shutting down -> StorageBusyError. */
export function databaseError(error: unknown): unknown {
  if (storeErrorCode(error) !== undefined) return error;
  const code = (error as { code?: string } | undefined)?.code;
  const detail = error instanceof Error ? error.message : String(error);
  if (code === "53100") return new StorageFullError(detail);
  if (
    code === "53300" ||
    code === "57P01" ||
    code === "57P03" ||
    code === "ECONNREFUSED" ||
    code === "ECONNRESET" ||
    /Connection terminated|timeout exceeded when trying to connect/i.test(detail)
  ) {
    return new StorageBusyError(detail, code);
  }
  return error;
}

/** host:port/database of a postgres:// URL, without user or password. */
export function databaseLabel(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname || "local socket"}${u.port ? `:${u.port}` : ""}${u.pathname}`;
  } catch {
    return "database";
  }
}
