/**
 * Uploaded X matrices (docs/api.md section 3): the v2 flow `GET /payload/upload/url/X`
 * -> `PUT <url>` -> POST bodies with `"X": "<name>.json"`.
 *
 * - Upload URLs point at this service and carry a signed, expiring token: HMAC-SHA256 (a random
 *   secret of this process) over the organisation, the file name and the expiry. The PUT is
 *   authorised by the token alone (like a pre-signed S3 URL); an `x-api-key`, when sent, must be
 *   the same organisation's.
 * - The body is read as it arrives (matrix-stream.ts) and its values go to the store block by
 *   block (`begin` -> `write`... -> `commit`), so that an upload never sits whole in memory (issue
 *   26, item 2): `UploadStore` writes them to a file (in the data dir's `uploads/`, or a temporary
 *   directory without one), the PostgreSQL store to rows of `rbp_upload_chunks`.
 * - Uploads are kept per organisation (the API key's) for `ttlMs` after their last PUT; a
 *   re-upload of a name replaces it (same bytes: nothing changes but the expiry). The whole store
 *   is capped at `maxStoreBytes` of matrix data (8 bytes a value): the least recently used go
 *   first. A restart forgets uploads and invalidates upload URLs (the client uploads again on its
 *   next call).
 * - Values are row-major float64, NaN = missing, in the machine's byte order (little-endian on
 *   every platform node supports here; checked at load).
 */
import { createHmac, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { mkdir, open, rename, rm, type FileHandle } from "node:fs/promises";
import { endianness, tmpdir } from "node:os";
import { join } from "node:path";
import { ServiceRefusal } from "./refusals.js";

if (endianness() !== "LE") throw new Error("rbp: uploads are stored as little-endian float64; this machine is big-endian");

/** Names the service accepts for an upload: the client's `<crc64 hex>.json`, or any similar safe name. */
export const UPLOAD_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}\.json$/;

export interface UploadSettings {
  ttlMs: number;
  urlTtlMs: number;
  maxStoreBytes: number;
  /** Key of the upload tokens; default a random one of this process. Front ends sharing uploads share it. */
  secret?: Buffer;
  /** UploadStore: the directory of its files (emptied at start); default a temporary one, removed at `close`. */
  dir?: string;
}

/** An upload as it is kept: its shape and digest, not its values. */
export interface UploadMeta {
  org: string;
  name: string;
  rows: number;
  cols: number;
  /** SHA-256 of the uploaded bytes. */
  digest: string;
  bytes: number;
  /** Milliseconds since the epoch. */
  expires: number;
}

/** An upload read back for a POST: its values too (row-major, NaN = missing, in shared memory). */
export interface StoredUpload extends UploadMeta {
  X: Float64Array;
}

export interface PutOutcome {
  upload: UploadMeta;
  /** "created", "replaced" (other bytes under the same name) or "unchanged" (the same bytes again). */
  outcome: "created" | "replaced" | "unchanged";
}

/** One upload being received: its values block by block, then kept under its name, or dropped. */
export interface UploadWriter {
  /** Stores the next block of values; resolves when it may take another. 413 past the store's cap. */
  write(block: Float64Array): Promise<void>;
  /** Keeps the upload under its name (replacing an earlier one) once every block is written. */
  commit(meta: { rows: number; cols: number; digest: string; bytes: number }, now?: number): Promise<PutOutcome>;
  /** Drops what was written (a refused or abandoned upload). Never throws. */
  abort(): Promise<void>;
}

/**
 * Where uploads live: `UploadStore` (files of this process) or a store shared by several front
 * ends (the PostgreSQL store's).
 */
export interface Uploads {
  sign(org: string, name: string, now?: number): { token: string; expires: number };
  verify(token: string | null, name: string, now?: number): string;
  /** Starts receiving `name` for `org`. */
  begin(org: string, name: string): Promise<UploadWriter>;
  get(org: string, name: string, now?: number): Promise<StoredUpload | undefined>;
}

/** The `payload_too_large` refusal (413, http.ts) of an upload whose values exceed what the store keeps. */
export function storeFull(maxStoreBytes: number, needs: string): ServiceRefusal {
  return new ServiceRefusal(
    "payload_too_large",
    `Payload Too Large: this X needs ${needs} bytes, above the ${maxStoreBytes} bytes the service keeps for uploads`,
    {
      extra: { limit: maxStoreBytes },
    },
  );
}

/** Signs and checks upload tokens (HMAC-SHA256 over the organisation, the name and the expiry). */
export class UploadSigner {
  private readonly secret: Buffer;

  constructor(private readonly settings: UploadSettings) {
    this.secret = settings.secret ?? randomBytes(32);
  }
  /** A token for PUTting `name` for `org`, valid until `now + urlTtlMs`. */
  sign(org: string, name: string, now = Date.now()): { token: string; expires: number } {
    const expires = now + this.settings.urlTtlMs;
    const payload = Buffer.from(JSON.stringify({ o: org, e: expires })).toString("base64url");
    return { token: `${payload}.${this.mac(payload, name)}`, expires };
  }

  /** The organisation a token was signed for; a `forbidden` refusal (403) when it is wrong or expired. */
  verify(token: string | null, name: string, now = Date.now()): string {
    const refuse = (why: string) =>
      new ServiceRefusal("forbidden", `Forbidden: ${why}; ask GET /payload/upload/url/X for a new upload URL`, { field: "token" });
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

  private mac(payload: string, name: string): string {
    return createHmac("sha256", this.secret).update(`rbp-upload-v1\n${payload}\n${name}`).digest("base64url");
  }
}

/**
 * Uploads in files of one directory, their shapes and digests in memory (a restart forgets them:
 * the directory is emptied when the store first writes).
 *
 * @example
 * const uploads = new UploadStore({ ttlMs: 86_400_000, urlTtlMs: 3_600_000, maxStoreBytes: 1 << 30 });
 */
/** What every upload store shares: tokens signed and checked by an UploadSigner of its settings. */
export abstract class SignedUploads implements Uploads {
  private readonly signer: UploadSigner;

  constructor(settings: UploadSettings) {
    this.signer = new UploadSigner(settings);
  }

  sign(org: string, name: string, now?: number): { token: string; expires: number } {
    return this.signer.sign(org, name, now);
  }

  verify(token: string | null, name: string, now?: number): string {
    return this.signer.verify(token, name, now);
  }

  abstract begin(org: string, name: string): Promise<UploadWriter>;
  abstract get(org: string, name: string, now?: number): Promise<StoredUpload | undefined>;
}

export class UploadStore extends SignedUploads {
  /** Key `${org}\0${name}`; Map order = least recently used first. */
  private readonly uploads = new Map<string, UploadMeta & { file: string; size: number }>();
  private total = 0;
  private dir: Promise<string> | undefined;
  private ownDir: string | undefined;

  constructor(private readonly settings: UploadSettings) {
    super(settings);
  }

  async begin(org: string, name: string): Promise<UploadWriter> {
    const dir = await this.directory();
    const temp = join(dir, `${randomUUID()}.tmp`);
    const file: FileHandle = await open(temp, "w", 0o600);
    const max = this.settings.maxStoreBytes;
    let size = 0;
    let closed = false;
    const close = async () => {
      if (closed) return;
      closed = true;
      await file.close();
    };
    return {
      write: async (block) => {
        size += block.byteLength;
        if (size > max) throw storeFull(max, `more than ${max}`);
        const bytes = new Uint8Array(block.buffer, block.byteOffset, block.byteLength);
        for (let at = 0; at < bytes.length;) at += (await file.write(bytes, at, bytes.length - at)).bytesWritten;
      },
      commit: async (meta, now = Date.now()) => {
        await close();
        const final = join(dir, `${randomUUID()}.f64`);
        await rename(temp, final);
        return this.keep(org, name, { ...meta, file: final, size }, now);
      },
      abort: async () => {
        await close().catch(() => undefined);
        await rm(temp, { force: true }).catch(() => undefined);
      },
    };
  }

  /** The organisation's upload of that name with its values, if it is there and not expired. */
  async get(org: string, name: string, now = Date.now()): Promise<StoredUpload | undefined> {
    this.sweep(now);
    const key = uploadKey(org, name);
    const entry = this.uploads.get(key);
    if (!entry) return undefined;
    this.uploads.delete(key);
    this.uploads.set(key, entry);
    const X = new Float64Array(new SharedArrayBuffer(entry.size));
    const file = await open(entry.file, "r");
    try {
      const bytes = new Uint8Array(X.buffer);
      for (let at = 0; at < bytes.length;) {
        const { bytesRead } = await file.read(bytes, at, bytes.length - at, at);
        if (bytesRead === 0) throw new Error(`upload file ${entry.file} is shorter than its ${entry.size} bytes`);
        at += bytesRead;
      }
    } finally {
      await file.close();
    }
    return { ...metaOf(entry), X };
  }

  /** Removes the temporary directory this store made (a given directory is left as it is). */
  async close(): Promise<void> {
    if (this.ownDir !== undefined) await rm(this.ownDir, { recursive: true, force: true });
  }

  private keep(org: string, name: string, entry: Omit<UploadMeta, "org" | "name" | "expires"> & { file: string; size: number }, now: number): PutOutcome {
    this.sweep(now);
    const key = uploadKey(org, name);
    const old = this.uploads.get(key);
    const outcome = old === undefined ? "created" : old.digest === entry.digest ? "unchanged" : "replaced";
    if (old) this.remove(key, old);
    const upload = { org, name, ...entry, expires: now + this.settings.ttlMs };
    this.uploads.set(key, upload);
    this.total += upload.size;
    for (const [k, u] of this.uploads) {
      if (this.total <= this.settings.maxStoreBytes) break;
      this.remove(k, u);
    }
    return { upload: metaOf(upload), outcome };
  }

  private directory(): Promise<string> {
    this.dir ??= (async () => {
      if (this.settings.dir === undefined) {
        this.ownDir = mkdtempSync(join(tmpdir(), "rbp-uploads-"));
        return this.ownDir;
      }
      // What an earlier run left is forgotten with its metadata.
      await rm(this.settings.dir, { recursive: true, force: true });
      await mkdir(this.settings.dir, { recursive: true, mode: 0o700 });
      return this.settings.dir;
    })();
    return this.dir;
  }

  private sweep(now: number): void {
    for (const [key, upload] of this.uploads) if (upload.expires <= now) this.remove(key, upload);
  }

  private remove(key: string, upload: { file: string; size: number }): void {
    this.uploads.delete(key);
    this.total -= upload.size;
    void rm(upload.file, { force: true }).catch(() => undefined);
  }
}

function metaOf(u: UploadMeta): UploadMeta {
  return { org: u.org, name: u.name, rows: u.rows, cols: u.cols, digest: u.digest, bytes: u.bytes, expires: u.expires };
}

function uploadKey(org: string, name: string): string {
  return `${org}\u0000${name}`;
}
