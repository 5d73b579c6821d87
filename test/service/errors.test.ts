/**
 * The service's errors under the one root (src/errors): the store's, the pool's and the core's
 * refusals each carry a stable code callers switch on, and http.ts alone turns a refusal into the
 * HTTP reply the routes always answered (status, body, Retry-After).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RbpBaseError } from "../../src/errors/index.js";
import { InvalidInputError } from "../../src/engine/errors.js";
import { inputError } from "../../src/service/input-error.js";
import { LimitExceededError } from "../../src/service/limits.js";
import { errorBody, httpError, ServiceError } from "../../src/service/http.js";
import { outageReply } from "../../src/service/outage.js";
import { PoolClosedError, poolFailure, PoolJobError, PoolWithdrawnError } from "../../src/service/pool.js";
import { refusalCode, ServiceRefusal } from "../../src/service/refusals.js";
import { DamagedStoreError, QuotaExceededError, StorageBusyError, StorageFullError, storageError, storeErrorCode } from "../../src/service/store/errors.js";
import { SchemaError } from "../../src/service/store/pg/schema.js";
import { resolveField } from "../../src/service/fields.js";
import { storeFull, UploadSigner } from "../../src/service/uploads.js";

describe("store and pool errors", () => {
  it("each has the root, a stable code, and its name", () => {
    const made = [
      new QuotaExceededError({ quota: 3, used: 3, remaining: 0 }, 1),
      new StorageFullError("ENOSPC"),
      new StorageBusyError("EMFILE", "EMFILE"),
      new DamagedStoreError("state.json cannot be read"),
      new SchemaError("old schema"),
      new PoolJobError({ message: "crashed", error_code: 2, status_code: 10 }),
      new PoolClosedError(),
      new PoolWithdrawnError(),
    ];
    expect(made.every((e) => e instanceof RbpBaseError)).toBe(true);
    expect(made.map((e) => [e.name, e.code])).toEqual([
      ["QuotaExceededError", "quota_exceeded"],
      ["StorageFullError", "storage_full"],
      ["StorageBusyError", "storage_busy"],
      ["DamagedStoreError", "store_damaged"],
      ["SchemaError", "schema_mismatch"],
      ["PoolJobError", "pool_job_failed"],
      ["PoolClosedError", "pool_closed"],
      ["PoolWithdrawnError", "pool_withdrawn"],
    ]);
    expect(made.slice(0, 5).map(storeErrorCode)).toEqual(["quota_exceeded", "storage_full", "storage_busy", "store_damaged", "schema_mismatch"]);
    expect(storeErrorCode(new InvalidInputError("theta", "a number"))).toBeUndefined();
    expect(storeErrorCode(new Error("storage_full"))).toBeUndefined();
  });

  it("an OS error of a write is classified by its errno code; the OS code is kept as `reason`", () => {
    const os = (code: string) => Object.assign(new Error(`${code}: write`), { code });
    expect(storeErrorCode(storageError(os("ENOSPC")))).toBe("storage_full");
    const busy = storageError(os("EMFILE")) as StorageBusyError;
    expect([busy.code, busy.reason, busy.detail]).toEqual(["storage_busy", "EMFILE", "EMFILE: write"]);
    expect(storeErrorCode(storageError(os("EIO")))).toBeUndefined();
  });

  it("what a job rejected by the pool records: its failure, a process-job failure, or nothing once the pool closed", () => {
    const failure = { message: "the job exceeded its time limit of 1 s", error_code: 2, status_code: 10 };
    expect(poolFailure(new PoolJobError(failure))).toEqual(failure);
    expect(poolFailure(new PoolClosedError())).toBeUndefined();
    expect(poolFailure(new TypeError("boom"))).toEqual({ message: "boom", error_code: 2, status_code: 10 });
  });

  it("no class in src/service extends Error directly", () => {
    const files = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
        d.isDirectory() ? files(join(dir, d.name)) : d.name.endsWith(".ts") ? [join(dir, d.name)] : [],
      );
    const offenders = files(join(import.meta.dirname, "../../src/service")).filter((f) => /extends Error\b/.test(readFileSync(f, "utf8")));
    expect(offenders).toEqual([]);
  });
});

describe("input errors, by code (input-error.ts)", () => {
  it("a limit 422 limit_exceeded with the limit; an engine input error 422 invalid_input; a ServiceError as it is", () => {
    const limit = new LimitExceededError("theta", "maxThetaRows", 10, 11, "theta rows");
    expect([limit.code, limit instanceof InvalidInputError]).toEqual(["limit_exceeded", true]);
    expect(errorBody(inputError(limit))).toMatchObject({
      error: "limit_exceeded",
      status_code: 422,
      field: "theta",
      limit_name: "maxThetaRows",
      limit: 10,
      requested: 11,
    });
    expect(errorBody(inputError(new InvalidInputError("y", "numbers")))).toMatchObject({ error: "invalid_input", status_code: 422, field: "y", error_code: 4 });
    const own = new ServiceError(400, "invalid_input", "y: expected 0 or 1");
    expect(inputError(own)).toBe(own);
    expect(inputError(new RangeError("x")).message).toMatch(/could not be read/);
  });
});

describe("refusals of the core, as HTTP replies (http.ts alone)", () => {
  const reply = (refusal: ServiceRefusal) => {
    const error = httpError(refusal)!;
    return { status: error.status, body: errorBody(error), headers: error.init.headers };
  };

  it("quota_exceeded: 429 with what remains", () => {
    const refusal = new ServiceRefusal("quota_exceeded", "Limit Exceeded: this request costs 3 units and the plan has 2 left (quota 5, used 3)", {
      extra: { quota: 5, used: 3, remaining: 2, required: 3, unit: "prediction_task" },
    });
    expect(refusalCode(refusal)).toBe("quota_exceeded");
    expect(reply(refusal)).toEqual({
      status: 429,
      body: {
        message: "Limit Exceeded: this request costs 3 units and the plan has 2 left (quota 5, used 3)",
        error: "quota_exceeded",
        status_code: 429,
        error_code: 1,
        quota: 5,
        used: 3,
        remaining: 2,
        required: 3,
        unit: "prediction_task",
      },
      headers: undefined,
    });
  });

  it("insufficient_storage 507, service_busy 503 with Retry-After 1, gone 410", () => {
    expect(reply(new ServiceRefusal("insufficient_storage", "full"))).toMatchObject({
      status: 507,
      body: { error: "insufficient_storage" },
      headers: undefined,
    });
    expect(reply(new ServiceRefusal("service_busy", "busy", { retryAfterS: 1 }))).toMatchObject({
      status: 503,
      body: { error: "service_busy", error_code: 1 },
      headers: { "retry-after": "1" },
    });
    expect(reply(new ServiceRefusal("gone", "job 4 is no longer kept"))).toMatchObject({
      status: 410,
      body: { error: "gone", message: "job 4 is no longer kept" },
    });
  });

  it("store_unavailable: 503 naming the store and the cause, with Retry-After", () => {
    const r = reply(outageReply({ store: "the file store (--data-dir)", cause: "its directory is gone (ENOENT)", code: "ENOENT" }));
    expect(r.status).toBe(503);
    expect(r.body).toMatchObject({
      error: "store_unavailable",
      store: "the file store (--data-dir)",
      cause: "its directory is gone (ENOENT)",
      cause_code: "ENOENT",
    });
    expect(r.headers?.["retry-after"]).toMatch(/^\d+$/);
  });

  it("the store's own refusals: a missing field 404, an upload too large 413 (an input error: error_code 4), a wrong token 403", () => {
    expect(() => resolveField({ yhat: [1] }, ["nope"])).toThrow(ServiceRefusal);
    let missing: unknown;
    try {
      resolveField({ yhat: [1] }, ["nope"]);
    } catch (error) {
      missing = error;
    }
    expect(reply(missing as ServiceRefusal)).toMatchObject({ status: 404, body: { error: "not_found", field: "nope", available: ["yhat"] } });
    expect(reply(storeFull(1024, "2048"))).toMatchObject({ status: 413, body: { error: "payload_too_large", error_code: 4, limit: 1024 } });
    const signer = new UploadSigner({ ttlMs: 1000, urlTtlMs: 1000, maxStoreBytes: 1024 });
    let refused: unknown;
    try {
      signer.verify("not-a-token", "X");
    } catch (error) {
      refused = error;
    }
    expect(reply(refused as ServiceRefusal)).toMatchObject({ status: 403, body: { error: "forbidden", field: "token" } });
  });

  it("a ServiceError is answered as it is; anything else is no refusal (the router's 500)", () => {
    const own = new ServiceError(404, "not_found", "no such job");
    expect(httpError(own)).toBe(own);
    expect(httpError(new Error("boom"))).toBeUndefined();
    expect(httpError(new StorageFullError("ENOSPC"))).toBeUndefined();
    expect(refusalCode(new ServiceError(410, "gone", "x"))).toBeUndefined();
  });
});
