/**
 * Keeps secrets (the API key, and the access id) out of everything the client throws or logs.
 *
 * The key itself lives only in a private field of the transport; errors are built from strings
 * and plain values that pass through a Redactor first. A misbehaving server (or proxy) may echo
 * request headers in an error page, so server text is scrubbed too, not only our own.
 */

export const REDACTED = "[redacted]";

export class Redactor {
  readonly #secrets: string[];

  constructor(secrets: ReadonlyArray<string | undefined>) {
    const all = new Set<string>();
    for (const s of secrets) {
      // Very short values would blank out ordinary words; keys and access ids are long.
      if (s === undefined || s.length < 4) continue;
      all.add(s);
      const encoded = encodeURIComponent(s);
      if (encoded !== s) all.add(encoded);
      const json = JSON.stringify(s).slice(1, -1);
      if (json !== s) all.add(json);
    }
    // Longest first, so a secret that contains another is removed whole.
    this.#secrets = [...all].sort((a, b) => b.length - a.length);
  }

  /** `text` with every secret replaced by [redacted]. */
  text(text: string): string {
    let out = text;
    for (const s of this.#secrets) if (out.includes(s)) out = out.split(s).join(REDACTED);
    return out;
  }

  /**
   * True when `text` may hold a secret: one of them, or a JSON \u escape (which could spell one).
   * A scan, far cheaper than copying a parsed value, so that only answers that need it are scrubbed.
   */
  mayContain(text: string): boolean {
    return text.includes("\\u") || this.#secrets.some((s) => text.includes(s));
  }

  /** A deep copy of a JSON-like value with every string scrubbed (keys included). */
  value<T>(value: T): T {
    return scrub(value, (s) => this.text(s), 0) as T;
  }

  /** Never show the secrets, whatever inspects this object. */
  toJSON(): string {
    return "Redactor";
  }
  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return "Redactor";
  }
}

function scrub(value: unknown, text: (s: string) => string, depth: number): unknown {
  if (typeof value === "string") return text(value);
  if (value === null || typeof value !== "object") return value;
  if (depth > 64) return "[deep value omitted]";
  if (Array.isArray(value)) {
    // Large numeric arrays need no scrubbing; skip the copy when there is nothing to change.
    if (value.every((v) => typeof v === "number" || v === null)) return value;
    return value.map((v) => scrub(v, text, depth + 1));
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[text(k)] = scrub(v, text, depth + 1);
  return out;
}
