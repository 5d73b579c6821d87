/**
 * The errors of the store contract (contract.ts), under the one error root (src/errors): each has
 * a stable `code` a caller switches on (`storeErrorCode`), never a class chain. The HTTP layer
 * alone turns them into statuses (http.ts `httpError`).
 *
 * | class | code | meaning |
 * | --- | --- | --- |
 * | QuotaExceededError | `quota_exceeded` | the plan cannot pay; nothing was taken |
 * | StorageFullError | `storage_full` | the disk or database is full |
 * | StorageBusyError | `storage_busy` | out of file descriptors, database busy: try again |
 * | DamagedStoreError | `store_damaged` | saved state cannot be read; the message says what to do |
 * | SchemaError (pg/schema.ts) | `schema_mismatch` | the database's schema is not this code's |
 */
import { brand, RbpBaseError } from "../../errors/index.js";
import type { QuotaStatus } from "../quota.js";

/** The stable codes of the store's errors. */
export type StoreErrorCode = "quota_exceeded" | "storage_full" | "storage_busy" | "store_damaged" | "schema_mismatch";

const STORE_CODES: ReadonlySet<string> = new Set<StoreErrorCode>(["quota_exceeded", "storage_full", "storage_busy", "store_damaged", "schema_mismatch"]);

/**
 * The store error code of `error`, or undefined when it is none of the store's errors.
 *
 * @example
 * switch (storeErrorCode(error)) { case "quota_exceeded": ...; case "storage_full": ...; }
 */
export function storeErrorCode(error: unknown): StoreErrorCode | undefined {
  return error instanceof RbpBaseError && STORE_CODES.has(error.code) ? (error.code as StoreErrorCode) : undefined;
}

/** The plan has fewer units left than the request costs. Nothing was taken. */
export class QuotaExceededError extends RbpBaseError {
  static {
    brand(this, "StoreQuotaExceededError");
  }
  override readonly name = "QuotaExceededError";
  constructor(
    readonly status: QuotaStatus,
    readonly required: number,
  ) {
    super(`the request costs ${required} unit(s) and the plan has ${status.remaining} left`, "quota_exceeded");
  }
}

/** The store's disk (or database) is full. `detail` is for the server log only. */
export class StorageFullError extends RbpBaseError {
  static {
    brand(this, "StorageFullError");
  }
  override readonly name = "StorageFullError";
  constructor(readonly detail: string) {
    super("the service's storage is full", "storage_full");
  }
}

/** The store cannot take the request now (out of file descriptors, database busy); try again. */
export class StorageBusyError extends RbpBaseError {
  static {
    brand(this, "StorageBusyError");
  }
  override readonly name = "StorageBusyError";
  /** `reason`: the OS or database error code behind it (EMFILE, ECONNREFUSED, 53300...). */
  constructor(
    readonly detail: string,
    readonly reason?: string,
  ) {
    super("the service's storage is busy", "storage_busy");
  }
}

/** The saved state cannot be read; the message says which file and what to do. */
export class DamagedStoreError extends RbpBaseError {
  static {
    brand(this, "DamagedStoreError");
  }
  override readonly name = "DamagedStoreError";
  constructor(message: string) {
    super(message, "store_damaged");
  }
}

/**
 * What an OS error of a store write means for the caller (ENOSPC -> full, EMFILE -> busy).
 *
 * @example
 * await writeFile(path, data).catch((error) => { throw storageError(error); });
 */
export function storageError(error: unknown): Error {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const detail = error instanceof Error ? error.message : String(error);
  if (code === "ENOSPC" || code === "EDQUOT") return new StorageFullError(detail);
  if (code === "EMFILE" || code === "ENFILE" || code === "EAGAIN" || code === "ENOMEM") return new StorageBusyError(detail, code);
  return error instanceof Error ? error : new Error(detail);
}
