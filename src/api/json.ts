/**
 * JSON on the wire: NaN and infinities never appear as tokens (they are not JSON). An undefined
 * number (a calibration that retains too few rows, a missing observation's relevance) is null.
 */
export function toJson(value: unknown, indent?: number): string {
  // JSON.stringify itself writes NaN and the infinities as null; a replacer would cost a call per value.
  return JSON.stringify(value, undefined, indent);
}

/**
 * Dimensions of a field's value: `[]` for a scalar (or null), `[N]`, `[N, T]`, ... following the
 * first element of nested arrays; null for an object (a group of fields has no shape).
 */
export function shapeOf(value: unknown): number[] | null {
  if (Array.isArray(value)) {
    const inner = value.length > 0 && Array.isArray(value[0]) ? shapeOf(value[0]) : [];
    return [value.length, ...(inner ?? [])];
  }
  if (typeof value === "object" && value !== null) return null;
  return [];
}
