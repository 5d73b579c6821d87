import { describe, expect, it } from "vitest";
import { ErrorBodySchema } from "../../src/api/schemas.js";
import {
  LAMBDA_ERROR_MESSAGES,
  LambdaError,
  LambdaStatus,
  crc64xz,
  lambdaErrorMessage,
  v2ClientErrorText,
  v2DateTime,
  v2Failed,
  v2Quota,
  v2QuotaBody,
  v2QuotaRemaining,
  v2QuotaSummary,
  v2QuotaUsed,
  v2Running,
  v2UnknownJob,
  v2XFileName,
  type V2FailureCode,
} from "../../src/api/v2-status.js";

const job = { job_id: 1074, job_code: "66cfc21f7effa501" };

describe("LambdaStatus and LambdaError", () => {
  it("has the client's codes and messages", () => {
    expect(LambdaStatus).toEqual({ INITIALIZED: 0, PENDING: 1, PROCESSING: 10, COMPLETED: 11 });
    expect(Object.values(LambdaError)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(Object.keys(LAMBDA_ERROR_MESSAGES).map(Number)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(lambdaErrorMessage(3)).toBe("Prediction task failed.");
    expect(lambdaErrorMessage(7)).toBeUndefined();
    expect(lambdaErrorMessage(30)).toBeUndefined();
    expect(v2ClientErrorText(10, 3)).toBe("#103 GURU MEDITATION ERROR: Prediction task failed.");
  });
});

describe("v2 GET /results bodies", () => {
  it("running: status 10 (or 1), error_code 0, statusMsg, no yhat and no error key", () => {
    const body = v2Running(job);
    expect(body).toEqual({ job_id: 1074, job_code: "66cfc21f7effa501", status_code: 10, error_code: 0, statusMsg: "PROCESSING" });
    expect(body).not.toHaveProperty("yhat");
    expect(body).not.toHaveProperty("error");
    expect(body).not.toHaveProperty("status");
    expect(v2Running(job, 1).status_code).toBe(1);
    expect(() => v2Running(job, 11 as never)).toThrow(RangeError);
  });

  it("failed: both codes, error_code 1..6, an error machine code, never status or yhat", () => {
    const body = v2Failed(job, 10, 3, "singular covariance; use inv_method pseudoinverse");
    expect(body).toEqual({
      job_id: 1074,
      job_code: "66cfc21f7effa501",
      status_code: 10,
      error_code: 3,
      error: "prediction_failed",
      message: "singular covariance; use inv_method pseudoinverse",
    });
    expect(body).not.toHaveProperty("status");
    expect(body).not.toHaveProperty("yhat");
    // The unified error shape of docs/api.md section 1.
    expect(ErrorBodySchema.safeParse(body).success).toBe(true);
    const custom = v2Failed(job, 1, 5, "X reference abc.json not found", { error: "x_reference_missing", details: [{ field: "X" }] });
    expect(custom.error).toBe("x_reference_missing");
    expect(custom.details).toEqual([{ field: "X" }]);
    expect(ErrorBodySchema.safeParse(custom).success).toBe(true);
    for (const code of [1, 2, 3, 4, 5, 6] as V2FailureCode[]) {
      expect(v2Failed(job, 10, code, "m").error_code).toBe(code);
    }
    for (const bad of [0, 7, 30, 2.5, Number.NaN]) {
      expect(() => v2Failed(job, 10, bad as never, "m"), String(bad)).toThrow(RangeError);
    }
    expect(() => v2Failed(job, 11 as never, 3, "m")).toThrow(RangeError);
  });

  it("unknown job", () => {
    expect(v2UnknownJob()).toEqual({ status_code: 0, error_code: 1, message: "unknown job" });
  });
});

describe("quota bodies", () => {
  const state = {
    quota: 1000,
    used: 250,
    period_start: new Date(Date.UTC(2026, 3, 1, 0, 0, 0)),
    period_end: new Date(Date.UTC(2026, 3, 30, 23, 59, 59)),
  };
  const period = { period_start: "2026-04-01 00:00:00", period_end: "2026-04-30 23:59:59" };

  it("formats datetimes as YYYY-MM-DD HH:MM:SS (UTC)", () => {
    expect(v2DateTime(new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 678)))).toBe("2026-01-02 03:04:05");
    expect(v2DateTime(new Date("2025-12-31T23:59:59.999-01:00"))).toBe("2026-01-01 00:59:59");
    expect(() => v2DateTime(new Date("nonsense"))).toThrow(RangeError);
  });

  it("answers each quota type", () => {
    expect(v2Quota(state)).toEqual({ quota: 1000, ...period });
    expect(v2QuotaUsed(state)).toEqual({ used: 250, ...period });
    expect(v2QuotaRemaining(state)).toEqual({ remaining: 750, ...period });
    expect(v2QuotaSummary(state)).toEqual({ quota: 1000, used: 250, remaining: 750, ...period, unit: "prediction_task" });
    expect(v2QuotaBody("quota", state)).toEqual(v2Quota(state));
    expect(v2QuotaBody("used", state)).toEqual(v2QuotaUsed(state));
    expect(v2QuotaBody("remaining", state)).toEqual(v2QuotaRemaining(state));
    expect(v2QuotaBody("summary", state)).toEqual(v2QuotaSummary(state));
    expect(() => v2QuotaBody("bogus" as never, state)).toThrow(RangeError);
  });

  it("never reports a negative remainder and rejects non-integer counts", () => {
    expect(v2QuotaRemaining({ ...state, used: 1200 }).remaining).toBe(0);
    expect(() => v2Quota({ ...state, quota: -1 })).toThrow(RangeError);
    expect(() => v2QuotaUsed({ ...state, used: 1.5 })).toThrow(RangeError);
  });
});

/** Bit-by-bit CRC-64/XZ over BigInt: the reference the table-driven version is checked against. */
function crcReference(bytes: Uint8Array): string {
  const poly = 0xc96c5795d7870f42n;
  const mask = (1n << 64n) - 1n;
  let crc = mask;
  for (const b of bytes) {
    crc ^= BigInt(b);
    for (let k = 0; k < 8; k++) crc = crc & 1n ? (crc >> 1n) ^ poly : crc >> 1n;
  }
  return (crc ^ mask).toString(16);
}

describe("CRC-64/XZ", () => {
  const ascii = (s: string) => new TextEncoder().encode(s);

  it("matches the catalogue check value", () => {
    expect(crc64xz(ascii("123456789"))).toBe("995dc9bbdf1939fa");
    expect(crc64xz(new Uint8Array(0))).toBe("0");
    expect(v2XFileName(ascii("123456789"))).toBe("995dc9bbdf1939fa.json");
    expect(crc64xz(Buffer.from("123456789"))).toBe("995dc9bbdf1939fa");
  });

  it("agrees with a bitwise reference on pseudo-random buffers", () => {
    let seed = 12345;
    const next = () => (seed = (seed * 1103515245 + 12345) >>> 0) >>> 24;
    for (let length = 1; length < 300; length += 7) {
      const bytes = Uint8Array.from({ length }, next);
      expect(crc64xz(bytes), `length ${length}`).toBe(crcReference(bytes));
    }
  });

  it("is lower-case hex without zero padding", () => {
    // Find inputs whose CRC has leading zero nibbles: the name is then shorter than 16 characters.
    let short = 0;
    for (let i = 0; i < 400 && short < 3; i++) {
      const bytes = ascii(`[[${i},1.5,null]]`);
      const hex = crc64xz(bytes);
      expect(hex).toMatch(/^[0-9a-f]+$/);
      expect(hex).toBe(crcReference(bytes));
      expect(hex === "0" || !hex.startsWith("0")).toBe(true);
      if (hex.length < 16) short++;
    }
    expect(short).toBeGreaterThan(0);
  });
});
