/**
 * A streaming reader of an uploaded X (v2 `PUT`, docs/api.md section 3): the JSON text of N rows
 * of K numbers or nulls, read chunk by chunk as it arrives, its values handed on in blocks of
 * little-endian float64 (NaN = missing), so that an upload never sits whole in memory (issue 26,
 * item 2). The same input is accepted as the whole-body reader accepted: JSON with Python's `NaN`
 * token read as missing; `Infinity`, `-Infinity` and numbers beyond the double range refused,
 * naming the cell; rows of one length; at least one row of at least one value. Every refusal is a
 * 400 ServiceError naming the field (`X[3][1]`, `X[2]`, `X`, `body`).
 */
import { createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { refuseRest, ServiceError } from "./http.js";

/** Values per block handed on (32,768 values: 256 KiB). */
export const BLOCK_VALUES = 32_768;

/** Longest token (a number, null, NaN) accepted; JSON numbers of doubles need far fewer. */
const MAX_TOKEN_CHARS = 64;

const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

const enum State {
  Start,
  /** After the outer `[`: a row or `]`. */
  FirstRow,
  /** After a row's `[`: a value or `]`. */
  FirstValue,
  /** After `,` in a row. */
  Value,
  /** In a token (number, null, NaN...). */
  Token,
  /** After a value: `,` or `]`. */
  AfterValue,
  /** After a row's `]`: `,` or the outer `]`. */
  AfterRow,
  /** After `,` between rows. */
  Row,
  Done,
}

const SPACE = new Uint8Array(256);
for (const c of [0x20, 0x09, 0x0a, 0x0d]) SPACE[c] = 1;
const TOKEN = new Uint8Array(256);
for (const c of "0123456789+-.eEaAbcdfilnNIstuy") TOKEN[c.charCodeAt(0)] = 1;

/**
 * Reads the matrix a chunk at a time: `push(chunk)` for each chunk, then `end()` for the shape.
 * `onBlock` receives each full block (and the last, partial one at `end`); the block is the
 * reader's to forget: a new one is allocated for the next values.
 *
 * @example
 * const reader = new MatrixReader((block) => blocks.push(block));
 * reader.push(Buffer.from("[[1, 2], [3, NaN]]"));
 * reader.end(); // { rows: 2, cols: 2 }
 */
export class MatrixReader {
  private state = State.Start;
  private block: Float64Array;
  private filled = 0;
  private row = 0;
  private col = 0;
  private cols = -1;
  private token = "";

  constructor(
    private readonly onBlock: (block: Float64Array) => void,
    private readonly blockValues = BLOCK_VALUES,
  ) {
    this.block = new Float64Array(blockValues);
  }

  /** Bytes of the block being filled (what one reader holds besides the chunk it is given). */
  get heldBytes(): number {
    return this.block.byteLength;
  }

  push(chunk: Uint8Array): void {
    let tokenStart = -1;
    if (this.state === State.Token) tokenStart = 0;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i];
      switch (this.state) {
        case State.Token:
          if (TOKEN[c] === 1) {
            if (i - tokenStart + this.token.length > MAX_TOKEN_CHARS) throw this.cellError("a number or null (missing)", "got a token too long to be one");
            continue;
          }
          this.token += latin1(chunk, tokenStart, i);
          tokenStart = -1;
          this.value();
          this.state = State.AfterValue;
          i--; // read c again after the value
          continue;
        case State.Start:
          if (SPACE[c] === 1) continue;
          if (c === 0x5b) this.state = State.FirstRow;
          else throw notMatrix(c === 0x7b ? "got an object" : "got something else");
          continue;
        case State.FirstRow:
        case State.Row:
          if (SPACE[c] === 1) continue;
          if (c === 0x5b) {
            this.state = State.FirstValue;
            this.col = 0;
          } else if (c === 0x5d && this.state === State.FirstRow)
            throw new ServiceError(400, "invalid_input", "X: expected at least one row", uploadInit("X", "at least one row"));
          else throw this.rowError();
          continue;
        case State.FirstValue:
        case State.Value:
          if (SPACE[c] === 1) continue;
          if (c === 0x5d && this.state === State.FirstValue) throw this.rowLengthError(0);
          if (TOKEN[c] !== 1)
            throw this.cellError(
              "a number or null (missing)",
              c === 0x22 ? "got a string" : c === 0x5b || c === 0x7b ? "got an array or object" : "got something else",
            );
          this.state = State.Token;
          this.token = "";
          tokenStart = i;
          continue;
        case State.AfterValue:
          if (SPACE[c] === 1) continue;
          if (c === 0x2c) this.state = State.Value;
          else if (c === 0x5d) this.endRow();
          else throw malformed();
          continue;
        case State.AfterRow:
          if (SPACE[c] === 1) continue;
          if (c === 0x2c) this.state = State.Row;
          else if (c === 0x5d) this.state = State.Done;
          else throw malformed();
          continue;
        case State.Done:
          if (SPACE[c] !== 1) throw malformed();
          continue;
      }
    }
    if (this.state === State.Token) this.token += latin1(chunk, tokenStart, chunk.length);
  }

  /** The shape once the whole body was pushed; hands on the last block. */
  end(): { rows: number; cols: number } {
    if (this.state === State.Start)
      throw new ServiceError(400, "malformed_json", "the upload body is empty; expected X as JSON: a list of N rows of K numbers", { field: "body" });
    if (this.state !== State.Done) throw malformed("the body ends before X does");
    if (this.filled > 0) this.onBlock(this.block.subarray(0, this.filled));
    this.filled = 0;
    return { rows: this.row, cols: this.cols };
  }

  private value(): void {
    const t = this.token;
    let v: number;
    if (t === "null" || t === "NaN") v = NaN;
    else if (t === "Infinity" || t === "-Infinity") throw this.cellError("a finite number or null", `got ${t}`);
    else if (JSON_NUMBER.test(t)) {
      v = Number(t);
      if (!Number.isFinite(v)) throw this.cellError("a finite number or null", "got a number beyond the double range");
    } else throw this.cellError("a number or null (missing)", `got ${JSON.stringify(t.slice(0, 20))}`);
    if (this.cols >= 0 && this.col >= this.cols) throw this.rowLengthError(this.col + 1);
    this.block[this.filled++] = v;
    this.col++;
    if (this.filled === this.blockValues) {
      this.onBlock(this.block);
      this.block = new Float64Array(this.blockValues);
      this.filled = 0;
    }
  }

  private endRow(): void {
    if (this.cols < 0) this.cols = this.col;
    else if (this.col !== this.cols) throw this.rowLengthError(this.col);
    this.row++;
    this.state = State.AfterRow;
  }

  private cellError(expected: string, detail: string): ServiceError {
    const field = `X[${this.row}][${this.col}]`;
    return new ServiceError(400, "invalid_input", `${field}: expected ${expected}; ${detail} ${UPLOAD_NOTE}`, uploadInit(field, expected));
  }

  private rowError(): ServiceError {
    const field = `X[${this.row}]`;
    return new ServiceError(
      400,
      "invalid_input",
      `${field}: expected a row of K numbers or nulls ${UPLOAD_NOTE}`,
      uploadInit(field, "a row of K numbers or nulls"),
    );
  }

  private rowLengthError(got: number): ServiceError {
    const field = `X[${this.row}]`;
    const expected = this.cols < 0 ? "a row of at least one value" : `${this.cols} values like the first row`;
    return new ServiceError(400, "invalid_input", `${field}: expected ${expected}; got ${got} ${UPLOAD_NOTE}`, uploadInit(field, expected));
  }
}

const UPLOAD_NOTE = "(the upload body is X alone: a list of N rows of K numbers, null for a missing value)";

function uploadInit(field: string, expected: string) {
  return { field, expected };
}

function notMatrix(detail: string): ServiceError {
  return new ServiceError(
    400,
    "invalid_input",
    `X: expected an array of N rows of K numbers or nulls; ${detail} ${UPLOAD_NOTE}`,
    uploadInit("X", "an array of N rows of K numbers or nulls"),
  );
}

function malformed(detail = "it does not parse"): ServiceError {
  return new ServiceError(400, "malformed_json", `the upload body is not valid JSON: ${detail}`, { field: "body", expected: "X as JSON" });
}

function latin1(chunk: Uint8Array, from: number, to: number): string {
  return Buffer.from(chunk.buffer, chunk.byteOffset + from, to - from).toString("latin1");
}

/** Bytes the upload readers of this process hold right now, and at most since it started (instrumentation of the cap). */
export const UPLOAD_BUFFERS = { current: 0, peak: 0 };

function hold(bytes: number): void {
  UPLOAD_BUFFERS.current += bytes;
  if (UPLOAD_BUFFERS.current > UPLOAD_BUFFERS.peak) UPLOAD_BUFFERS.peak = UPLOAD_BUFFERS.current;
}

interface StreamedMatrix {
  rows: number;
  cols: number;
  /** SHA-256 of the bytes received, hex. */
  digest: string;
  /** Bytes received. */
  bytes: number;
}

/**
 * Reads an upload body as it arrives: each chunk hashed and parsed, each block of values handed to
 * `store` (awaited, the request paused meanwhile: the client waits, not the memory), so that one
 * upload holds about two blocks and a chunk whatever its size. 413 beyond `limit` bytes (at once
 * when Content-Length says so), 400 for a body that is not X (the rest of it discarded, so the
 * client reads the answer), 400 when the client goes away.
 *
 * @example
 * const shape = await streamMatrix(req, 256 * MiB, (block) => writer.write(block));
 */
export function streamMatrix(req: IncomingMessage, limit: number, store: (block: Float64Array) => Promise<void>): Promise<StreamedMatrix> {
  const declared = req.headers["content-length"];
  if (declared !== undefined && Number(declared) > limit) {
    refuseRest(req, limit);
    return Promise.reject(tooLarge(limit, declared));
  }
  return new Promise((resolve, reject) => {
    const hash = createHash("sha256");
    let bytes = 0;
    let failed = false;
    const pending: Float64Array[] = [];
    let writing: Promise<void> | undefined;
    const reader = new MatrixReader((block) => {
      pending.push(block);
      hold(block.byteLength);
    });
    hold(reader.heldBytes);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      UPLOAD_BUFFERS.current -= reader.heldBytes;
      for (const block of pending.splice(0)) UPLOAD_BUFFERS.current -= block.byteLength;
    };
    const cleanup = () => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      req.off("aborted", onAborted);
    };
    const fail = (error: unknown, discard: boolean) => {
      if (failed) return;
      failed = true;
      cleanup();
      if (discard) refuseRest(req, limit);
      release();
      reject(error);
    };
    // Hands the pending blocks on, one at a time, the request paused until they are stored.
    const drain = (): Promise<void> => {
      writing ??= (async () => {
        req.pause();
        try {
          while (pending.length > 0 && !failed) {
            const block = pending[0];
            await store(block);
            pending.shift();
            UPLOAD_BUFFERS.current -= block.byteLength;
          }
        } finally {
          writing = undefined;
        }
        if (!failed) req.resume();
      })();
      return writing;
    };
    const onData = (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > limit) return fail(tooLarge(limit, `more than ${limit}`), true);
      hash.update(chunk);
      try {
        reader.push(chunk);
      } catch (error) {
        return fail(error, true);
      }
      if (pending.length > 0) drain().catch((error: unknown) => fail(error, true));
    };
    const onEnd = () => {
      cleanup();
      let shape: { rows: number; cols: number };
      try {
        shape = reader.end();
      } catch (error) {
        return fail(error, false);
      }
      const finish = async () => {
        while (writing !== undefined || pending.length > 0) await (writing ?? drain());
      };
      finish().then(
        () => {
          if (failed) return;
          release();
          resolve({ ...shape, digest: hash.digest("hex"), bytes });
        },
        (error: unknown) => fail(error, false),
      );
    };
    const onError = (error: Error) => fail(new ServiceError(400, "bad_request", `the request body could not be read: ${error.message}`), false);
    const onAborted = () => onError(new Error("the client aborted the request"));
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
    req.on("aborted", onAborted);
  });
}

function tooLarge(limit: number, bytes: string): ServiceError {
  return new ServiceError(413, "payload_too_large", `Payload Too Large: the request body is ${bytes} bytes, above the limit of ${limit} bytes`, {
    extra: { limit },
    headers: { connection: "close" },
  });
}
