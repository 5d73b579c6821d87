/** Abortable sleeps and per-attempt signals that tell a caller's abort from a timeout. */

/** Resolves after `ms`, or rejects with `signal.reason` as soon as the signal fires. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** A marker reason: the attempt's own deadline fired (not the caller). */
export const DEADLINE = Symbol("deadline");

/**
 * One signal for one attempt: fires when the caller's signal fires (reason: the caller's) or after
 * `timeoutMs` (reason: DEADLINE). `dispose()` clears the timer and the listener.
 */
export function attemptSignal(timeoutMs: number, outer?: AbortSignal): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const onAbort = () => controller.abort(outer!.reason);
  if (outer?.aborted) controller.abort(outer.reason);
  else outer?.addEventListener("abort", onAbort, { once: true });
  const timer = setTimeout(() => controller.abort(DEADLINE), Math.max(0, timeoutMs));
  return {
    signal: controller.signal,
    dispose() {
      clearTimeout(timer);
      outer?.removeEventListener("abort", onAbort);
    },
  };
}
