/**
 * Retry arithmetic: exponential backoff with full jitter, and the Retry-After header.
 *
 * The rule of the transport (http.ts):
 * - Reads (GET) are retried on connection errors, 5xx (500, 502, 503, 504) and 429, at most
 *   `maxRetries` times, within the call's time budget. A Retry-After on the response is waited
 *   for exactly; without one the delay is uniform in [0, min(max, base * 2^attempt)] ("full
 *   jitter", so many clients failing together do not come back together).
 * - A Retry-After longer than `maxRetryAfterMs`, or one that would overrun the call's budget,
 *   is not waited for: the error is thrown with `retryAfterMs` for the caller to decide.
 */

/** The delay before retry number `attempt` (0-based) without a Retry-After. */
export function backoffDelay(attempt: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** attempt);
  return Math.floor(random() * ceiling);
}

/**
 * Retry-After in milliseconds: delta-seconds (`"2"`, `"0.5"` is read too) or an HTTP date
 * (`"Wed, 21 Oct 2015 07:28:00 GMT"`, measured from `now`). Undefined when absent or unreadable;
 * never negative.
 */
export function parseRetryAfter(value: string | string[] | undefined, now: number = Date.now()): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (text === undefined || text === "") return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  if (!/[a-z]/i.test(text)) return undefined;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** Statuses after which a read is tried again. */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || status === 500 || status === 502 || status === 503 || status === 504;
}
