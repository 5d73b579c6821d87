import { randomUUID } from "node:crypto";
import type pg from "pg";
import { SignedUploads, storeFull, type StoredUpload, type UploadSettings, type UploadWriter } from "../../uploads.js";
import { inTransaction } from "./connection.js";
import { bytesF64 } from "./rows.js";

/**
 * Uploaded X matrices in `rbp_uploads`, their values in rows of `rbp_upload_chunks` (one per block,
 * written as the PUT streams in, under a `part` id that the upload's row names once it is whole):
 * the same answers as UploadStore (created / replaced / unchanged, 413 above the size limit, kept
 * `ttlMs` after the last PUT), for every front end. The chunks of an abandoned upload are removed
 * at once; those a crash left behind, by the next commit after a day.
 */
export class PgUploads extends SignedUploads {
  constructor(
    private readonly pool: pg.Pool,
    private readonly settings: UploadSettings,
  ) {
    super(settings);
  }

  async begin(org: string, name: string): Promise<UploadWriter> {
    const part = randomUUID();
    const max = this.settings.maxStoreBytes;
    let seq = 0;
    let size = 0;
    return {
      write: async (block) => {
        size += block.byteLength;
        if (size > max) throw storeFull(max, `more than ${max}`);
        await this.pool.query("INSERT INTO rbp_upload_chunks (part, seq, data, created) VALUES ($1, $2, $3, $4)", [
          part,
          seq++,
          Buffer.from(block.buffer, block.byteOffset, block.byteLength),
          Date.now(),
        ]);
      },
      commit: async (meta, now = Date.now()) => {
        const expires = now + this.settings.ttlMs;
        const old = await inTransaction(this.pool, async (c) => {
          const previous = await c.query<{ digest: string; part: string | null }>(
            "SELECT digest, part FROM rbp_uploads WHERE org = $1 AND name = $2 AND expires > $3 FOR UPDATE",
            [org, name, now],
          );
          // Expired uploads (and this name's earlier one) go, with their chunks; so do chunks a crash left a day ago.
          await c.query(
            `WITH gone AS (DELETE FROM rbp_uploads WHERE expires <= $3 OR (org = $1 AND name = $2) RETURNING part)
             DELETE FROM rbp_upload_chunks WHERE part IN (SELECT part FROM gone WHERE part IS NOT NULL)`,
            [org, name, now],
          );
          await c.query(
            "DELETE FROM rbp_upload_chunks WHERE created < $1 AND part <> $2 AND part NOT IN (SELECT part FROM rbp_uploads WHERE part IS NOT NULL)",
            [now - 24 * 3600_000, part],
          );
          await c.query("INSERT INTO rbp_uploads (org, name, n_rows, n_cols, x, digest, bytes, expires, part) VALUES ($1, $2, $3, $4, NULL, $5, $6, $7, $8)", [
            org,
            name,
            meta.rows,
            meta.cols,
            meta.digest,
            meta.bytes,
            expires,
            part,
          ]);
          return previous.rows[0];
        });
        const outcome = old === undefined ? "created" : old.digest === meta.digest ? "unchanged" : "replaced";
        return { upload: { org, name, rows: meta.rows, cols: meta.cols, digest: meta.digest, bytes: meta.bytes, expires }, outcome };
      },
      abort: async () => {
        await this.pool.query("DELETE FROM rbp_upload_chunks WHERE part = $1", [part]).catch(() => undefined);
      },
    };
  }

  async get(org: string, name: string, now = Date.now()): Promise<StoredUpload | undefined> {
    const r = await this.pool.query<{ n_rows: number; n_cols: number; x: Buffer | null; part: string | null; digest: string; bytes: number; expires: number }>(
      "SELECT n_rows, n_cols, x, part, digest, bytes, expires FROM rbp_uploads WHERE org = $1 AND name = $2 AND expires > $3",
      [org, name, now],
    );
    const row = r.rows[0];
    if (!row) return undefined;
    const meta = { org, name, rows: row.n_rows, cols: row.n_cols, digest: row.digest, bytes: Number(row.bytes), expires: Number(row.expires) };
    if (row.x !== null) return { ...meta, X: bytesF64(row.x) };
    const X = new Float64Array(new SharedArrayBuffer(row.n_rows * row.n_cols * 8));
    const bytes = new Uint8Array(X.buffer);
    let at = 0;
    // A chunk at a time (about 256 KiB each), never the whole upload as one reply.
    for (let seq = 0; at < bytes.length; seq++) {
      const chunk = await this.pool.query<{ data: Buffer }>("SELECT data FROM rbp_upload_chunks WHERE part = $1 AND seq = $2", [row.part, seq]);
      const data = chunk.rows[0]?.data;
      if (data === undefined) throw new Error(`upload ${name}: chunk ${seq} of part ${row.part} is missing`);
      bytes.set(data, at);
      at += data.length;
    }
    return { ...meta, X };
  }
}
