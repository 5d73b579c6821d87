/**
 * JSON on the wire: NaN and infinities never appear as tokens (they are not JSON). An undefined
 * number (a calibration that retains too few rows, a missing observation's relevance) is null.
 */
export function toJson(value: unknown, indent?: number): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === "number" && !Number.isFinite(v) ? null : v), indent);
}
