/**
 * Results as served: the engine's result object as JSON, numbers rounded to `decimals` places
 * (the hosted service publishes 6; null keeps full precision), NaN and infinities as null.
 * Runs in the worker threads, so the main thread only moves strings.
 */
export type Rounder = (value: number) => number | null;

export function rounder(decimals: number | null): Rounder {
  if (decimals === null) return (v) => (Number.isFinite(v) ? v : null);
  const factor = 10 ** decimals;
  const limit = 2 ** 52;
  return (v) => {
    if (!Number.isFinite(v)) return null;
    if (Number.isInteger(v)) return v;
    const scaled = Math.abs(v) * factor;
    if (scaled >= limit) return v;
    const r = Math.round(scaled) / factor;
    return v < 0 && r !== 0 ? -r : r;
  };
}

/** JSON text of `value` with every number passed through `round`. */
export function encodeJson(value: unknown, decimals: number | null): string {
  const round = rounder(decimals);
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === "number" ? round(v) : v));
}

/** Rounds a list of numbers the same way (compact yhat and fit of an experiment row). */
export function roundList(values: ArrayLike<number> | undefined, decimals: number | null): Array<number | null> {
  const round = rounder(decimals);
  return values === undefined ? [] : Array.from(values, round);
}
