/**
 * A large result text kept by the embedded store as raw deflate of its UTF-8 bytes (level 1),
 * made in the thread pool after the text is stored: a result's text is the largest thing the
 * embedded service keeps (5 MiB of heap for an N=100,000 Grid, read again only when the result is
 * asked for over HTTP or a field of it is); deflated it takes 38% of that, outside the JavaScript
 * heap. Deflate is lossless and the text well-formed UTF-8 (JSON.stringify escapes lone
 * surrogates), so the text read back is byte for byte the one stored.
 */
import { promisify } from "node:util";
import { deflateRaw, inflateRaw, constants } from "node:zlib";

const deflating = promisify(deflateRaw);
const inflating = promisify(inflateRaw);

/**
 * Texts shorter than this stay as they are (deflating a few KB saves little). Deflating costs
 * the thread pool about 1 ms per 100 KB.
 */
export const PACK_FROM_CHARS = 1 << 14;

/**
 * Texts from this length (a K=10 Grid from N of about 5,000) are deflated as soon as they are
 * stored. Shorter ones (the warm N=1,000 notebook call's 54 KB text) wait until the store has
 * stored no text for PACK_QUIET_MS: a burst of small jobs (a backtest, an experiment, calls in a
 * loop) does not pay for deflating on the cores its next jobs need (deflating each 100-step
 * backtest's texts as they came took it from 1.2x to 1.8x the engine's loop). At most
 * PACK_WAITING_CHARS wait; older ones beyond stay as they are.
 */
export const PACK_AT_ONCE_CHARS = 1 << 18;
export const PACK_QUIET_MS = 250;
export const PACK_WAITING_CHARS = 1 << 24;

/** A stored result text, its deflated bytes, or a text not written yet. */
export type StoredText = string | PackedText | DeferredText;

/** A result text as a store is given it: written, or to be written when first needed. */
export type ResultText = string | DeferredText;

/**
 * A result text written only when first needed (read, saved, or deflated once the store is
 * quiet), by `write`, once: the embedded service's inline Grid (inline.ts) hands the store its
 * result's decoded form, which its reader in this process already has, instead of writing the
 * text on the notebook's thread between two calls. The text is byte for byte the one `write`
 * gives whenever it is written; `charsAtMost` bounds its length (whether the store deflates it),
 * `bytes` is about the memory what `write` holds takes (the store's accounting).
 */
export class DeferredText {
  #write: (() => string) | undefined;
  #text: string | undefined;

  constructor(
    write: () => string,
    readonly charsAtMost: number,
    readonly bytes: number,
  ) {
    this.#write = write;
  }

  /** The text, written now if it was not (what `write` holds is dropped then). */
  get text(): string {
    if (this.#text === undefined) {
      this.#text = this.#write!();
      this.#write = undefined;
    }
    return this.#text;
  }
}

/** The text itself, written now if it was deferred. */
export function textOf(text: ResultText): string {
  return typeof text === "string" ? text : text.text;
}

/** A text's deflated UTF-8 bytes. */
export class PackedText {
  constructor(readonly bytes: Buffer) {}
}

/** The bytes a stored text takes in memory (a text's length, a packed one's bytes). */
export function storedBytes(text: StoredText): number {
  return typeof text === "string" ? text.length : text instanceof PackedText ? text.bytes.length : text.bytes;
}

/** The length of a stored text, or a bound on it (a deferred one). */
export function textChars(text: string | DeferredText): number {
  return typeof text === "string" ? text.length : text.charsAtMost;
}

/**
 * The text deflated, in the thread pool; undefined when it is too short to be worth it, or when
 * deflating saves nothing.
 *
 * @example
 * const packed = await packText(json); // (await unpackText(packed)) === json
 */
export async function packText(text: string): Promise<PackedText | undefined> {
  if (text.length < PACK_FROM_CHARS) return undefined;
  const bytes = await deflating(Buffer.from(text, "utf8"), { level: 1, strategy: constants.Z_DEFAULT_STRATEGY });
  return bytes.length < text.length ? new PackedText(bytes) : undefined;
}

/** The text itself (a packed one inflated in the thread pool). */
export async function unpackText(text: StoredText): Promise<string> {
  return text instanceof PackedText ? (await inflating(text.bytes)).toString("utf8") : textOf(text);
}
