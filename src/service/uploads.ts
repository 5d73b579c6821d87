/**
 * Uploaded X matrices (docs/api.md section 3): the v2 flow `GET /payload/upload/url/X`
 * -> `PUT <url>` -> POST bodies with `"X": "<name>.json"`.
 *
 * - Upload URLs point at this service and carry a signed, expiring token: HMAC-SHA256 (a random
 *   secret of this process) over the organisation, the file name and the expiry. The PUT is
 *   authorised by the token alone (like a pre-signed S3 URL); an `x-api-key`, when sent, must be
 *   the same organisation's.
 * - Uploads are kept per organisation (the API key's), in memory, for `ttlMs` after their last
 *   PUT; a re-upload of a name replaces it (same bytes: nothing changes but the expiry). The
 *   whole store is capped at `maxStoreBytes` of matrix data: the least recently used go first.
 *   A restart forgets uploads and invalidates upload URLs (the client uploads again on its next call).
 * - The body is checked when it arrives: JSON (NaN read as missing, Infinity refused), a list of
 *   N rows of K numbers or nulls; it is kept as a row-major Float64Array (NaN = missing).
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { XSchema } from "../api/schemas.js";
import { fieldFromPath } from "../api/request.js";
import { ServiceError } from "./http.js";

/** Names the service accepts for an upload: the client's `<crc64 hex>.json`, or any similar safe name. */
export const UPLOAD_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}\.json$/;

export interface UploadSettings {
  ttlMs: number;
  urlTtlMs: number;
  maxStoreBytes: number;
  /** Key of the upload tokens; default a random one of this process. Front ends sharing uploads share it. */
  secret?: Buffer;
}

/**
 * Where uploads live: `UploadStore` (this process's memory) or a store shared by several front
 * ends (the PostgreSQL store's). `put` and `get` may answer at once or through a promise.
 */
export interface Uploads {
  sign(org: string, name: string, now?: number): { token: string; expires: number };
  verify(token: string | null, name: string, now?: number): string;
  /** `content`: the raw body, or its SHA-256 and size when they were computed elsewhere (offload.ts). */
  put(
    org: string,
    name: string,
    matrix: { rows: number; cols: number; X: Float64Array },
    content: Buffer | { digest: string; bytes: number },
    now?: number,
  ): PutOutcome | Promise<PutOutcome>;
  get(org: string, name: string, now?: number): StoredUpload | undefined | Promise<StoredUpload | undefined>;
}

export interface StoredUpload {
  org: string;
  name: string;
  rows: number;
  cols: number;
  /** Row-major, NaN = missing. */
  X: Float64Array;
  /** SHA-256 of the uploaded bytes. */
  digest: string;
  bytes: number;
  /** Milliseconds since the epoch. */
  expires: number;
}

export interface PutOutcome {
  upload: StoredUpload;
  /** "created", "replaced" (other bytes under the same name) or "unchanged" (the same bytes again). */
  outcome: "created" | "replaced" | "unchanged";
}

export class UploadStore implements Uploads {
  private readonly secret: Buffer;
  /** Key `${org}\0${name}`; Map order = least recently used first. */
  private readonly uploads = new Map<string, StoredUpload>();
  private total = 0;

  constructor(private readonly settings: UploadSettings) {
    this.secret = settings.secret ?? randomBytes(32);
  }

  /** A token for PUTting `name` for `org`, valid until `now + urlTtlMs`. */
  sign(org: string, name: string, now = Date.now()): { token: string; expires: number } {
    const expires = now + this.settings.urlTtlMs;
    const payload = Buffer.from(JSON.stringify({ o: org, e: expires })).toString("base64url");
    return { token: `${payload}.${this.mac(payload, name)}`, expires };
  }

  /** The organisation a token was signed for; a 403 ServiceError when it is wrong or expired. */
  verify(token: string | null, name: string, now = Date.now()): string {
    const refuse = (why: string) =>
      new ServiceError(403, "forbidden", `Forbidden: ${why}; ask GET /payload/upload/url/X for a new upload URL`, { field: "token" });
    if (token === null || token === "") throw refuse("the upload URL has no token");
    const [payload, mac, extra] = token.split(".");
    if (payload === undefined || mac === undefined || extra !== undefined) throw refuse("the upload token is malformed");
    const want = Buffer.from(this.mac(payload, name));
    const given = Buffer.from(mac);
    if (want.length !== given.length || !timingSafeEqual(want, given)) throw refuse("the upload token is not valid for this file name");
    let claims: { o?: unknown; e?: unknown };
    try {
      claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as { o?: unknown; e?: unknown };
    } catch {
      throw refuse("the upload token is malformed");
    }
    if (typeof claims.o !== "string" || typeof claims.e !== "number") throw refuse("the upload token is malformed");
    if (claims.e <= now) throw refuse("the upload URL has expired");
    return claims.o;
  }

  /**
   * Stores a checked upload body (see `parseUpload`); `content` is the raw body, or its SHA-256
   * and size when they were computed elsewhere (offload.ts).
   */
  put(
    org: string,
    name: string,
    matrix: { rows: number; cols: number; X: Float64Array },
    content: Buffer | { digest: string; bytes: number },
    now = Date.now(),
  ): PutOutcome {
    this.sweep(now);
    const key = uploadKey(org, name);
    const digest = Buffer.isBuffer(content) ? createHash("sha256").update(content).digest("hex") : content.digest;
    const size = Buffer.isBuffer(content) ? content.length : content.bytes;
    const old = this.uploads.get(key);
    const outcome = old === undefined ? "created" : old.digest === digest ? "unchanged" : "replaced";
    if (old) this.remove(key, old);
    const upload: StoredUpload = { org, name, ...matrix, digest, bytes: size, expires: now + this.settings.ttlMs };
    if (upload.X.byteLength > this.settings.maxStoreBytes) {
      throw new ServiceError(
        413,
        "payload_too_large",
        `Payload Too Large: this X needs ${upload.X.byteLength} bytes, above the ${this.settings.maxStoreBytes} bytes the service keeps for uploads`,
        {
          extra: { limit: this.settings.maxStoreBytes },
        },
      );
    }
    this.uploads.set(key, upload);
    this.total += upload.X.byteLength;
    for (const [k, u] of this.uploads) {
      if (this.total <= this.settings.maxStoreBytes) break;
      this.remove(k, u);
    }
    return { upload, outcome };
  }

  /** The organisation's upload of that name, if it is there and not expired. */
  get(org: string, name: string, now = Date.now()): StoredUpload | undefined {
    this.sweep(now);
    const key = uploadKey(org, name);
    const upload = this.uploads.get(key);
    if (!upload) return undefined;
    this.uploads.delete(key);
    this.uploads.set(key, upload);
    return upload;
  }

  private sweep(now: number): void {
    for (const [key, upload] of this.uploads) if (upload.expires <= now) this.remove(key, upload);
  }

  private remove(key: string, upload: StoredUpload): void {
    this.uploads.delete(key);
    this.total -= upload.X.byteLength;
  }

  private mac(payload: string, name: string): string {
    return createHmac("sha256", this.secret).update(`rbp-upload-v1\n${payload}\n${name}`).digest("base64url");
  }
}

function uploadKey(org: string, name: string): string {
  return `${org}\u0000${name}`;
}

/** Checks an upload body (already parsed JSON): N rows of K numbers or nulls. 400 naming the cell otherwise. */
export function parseUpload(value: unknown): { rows: number; cols: number; X: Float64Array } {
  const parsed = XSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = fieldFromPath(["X", ...issue.path]);
    throw new ServiceError(
      400,
      "invalid_input",
      `${field}: expected ${issue.message} (the upload body is X alone: a list of N rows of K numbers, null for a missing value)`,
      {
        field,
        expected: issue.message,
      },
    );
  }
  const rows = parsed.data.length;
  const cols = parsed.data[0].length;
  const X = new Float64Array(rows * cols);
  parsed.data.forEach((row, i) =>
    row.forEach((v, j) => {
      if (v !== null && !Number.isNaN(v) && !Number.isFinite(v)) {
        throw new ServiceError(400, "invalid_input", `X[${i}][${j}]: expected a finite number or null, got ${v}`, {
          field: `X[${i}][${j}]`,
          expected: "a finite number or null",
        });
      }
      X[i * cols + j] = v === null ? NaN : v;
    }),
  );
  return { rows, cols, X };
}
