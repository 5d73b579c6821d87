/**
 * Single fields of a result (`GET /v3/jobs/{id}/{code}/{field...}`, docs/api.md section 2.3):
 * the segments are resolved inside `results`, case-sensitively, with snake_case aliases
 * (`impact_on_fit` <-> `Impact on Fit`) and integer indexes into arrays (`yhat/0`).
 */
import { ServiceRefusal } from "./refusals.js";

export type PathPart = string | number;

export interface ResolvedField {
  /** The keys actually followed (canonical spelling), numbers for array indexes. */
  path: PathPart[];
  value: unknown;
}

const snake = (s: string) =>
  s
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, "_");

/** Follows `segments` inside `root`; a `not_found` refusal (404) names the deepest valid prefix and its children. */
export function resolveField(root: unknown, segments: string[]): ResolvedField {
  const path: PathPart[] = [];
  let value = root;
  for (const segment of segments) {
    const next = step(value, segment);
    if (next === undefined) throw fieldNotFound(segments, path, segment, childNames(value));
    path.push(next.key);
    value = next.value;
  }
  return { path, value };
}

/** The `not_found` refusal (404, http.ts) for `segment`, not found below `path` (whose children are `available`). */
export function fieldNotFound(segments: string[], path: PathPart[], segment: string, available: string[]): ServiceRefusal {
  const prefix = path.length === 0 ? "results" : displayPath(path);
  const where = path.length === 0 ? "in the results" : `under "${prefix}"`;
  const list = available.length > 0 ? `; available: ${available.join(", ")}` : `; "${prefix}" has no parts`;
  return new ServiceRefusal("not_found", `no field "${segment}" ${where}${list}`, {
    field: segments.join("/"),
    details: [{ field: segments.join("/"), expected: available.length > 0 ? `one of ${available.join(", ")} after ${prefix}` : `a path ending at ${prefix}` }],
    extra: { valid_prefix: path.length === 0 ? "" : displayPath(path), available },
  });
}

function step(value: unknown, segment: string): { key: PathPart; value: unknown } | undefined {
  if (Array.isArray(value)) {
    const index = arrayIndex(segment, value.length);
    return index === undefined ? undefined : { key: index, value: value[index] };
  }
  if (typeof value !== "object" || value === null) return undefined;
  const record = value as Record<string, unknown>;
  const key = chooseKey(Object.keys(record), segment);
  return key === undefined ? undefined : { key, value: record[key] };
}

/** The index a segment names in an array of `length`, if any. */
export function arrayIndex(segment: string, length: number): number | undefined {
  if (!/^\d+$/.test(segment)) return undefined;
  const index = Number(segment);
  return index < length ? index : undefined;
}

/**
 * The key of an object (its own `keys`) a segment names: the segment itself, else the one key it
 * is an alias of, between a snake_case name and a spaced display name (`impact_on_fit` <->
 * `Impact on Fit`), either way; otherwise matching stays case-sensitive (`YHAT` is not `yhat`).
 */
export function chooseKey(keys: string[], segment: string): string | undefined {
  if (keys.includes(segment)) return segment;
  const wanted = snake(segment);
  const hits = keys.filter((k) => (segment === wanted && /\s/.test(k) && snake(k) === segment) || (/\s/.test(segment) && k === wanted));
  return hits.length === 1 ? hits[0] : undefined;
}

/** The names one can append to reach a part of `value`. */
export function childNames(value: unknown): string[] {
  if (Array.isArray(value)) return arrayChildNames(value.length);
  if (typeof value === "object" && value !== null) return Object.keys(value);
  return [];
}

export function arrayChildNames(length: number): string[] {
  return length === 0 ? [] : length === 1 ? ["0"] : [`0 .. ${length - 1}`];
}

/** `insights/Impact on Fit` style, for messages. */
export function displayPath(path: PathPart[]): string {
  return path.map(String).join("/");
}

/** `$.results.insights['Impact on Fit']`, `$.results.prediction_weights.weights[0]`. */
export function jsonPath(path: PathPart[]): string {
  let out = "$.results";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else if (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(part)) out += `.${part}`;
    else out += `['${part.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}']`;
  }
  return out;
}

/** Smaller paths to ask for instead of a field that is too large. */
export function smallerPaths(field: string, value: unknown, limit = 12): string[] {
  if (Array.isArray(value)) return smallerArrayPaths(field, value.length);
  if (typeof value === "object" && value !== null)
    return Object.keys(value)
      .slice(0, limit)
      .map((k) => `${field}/${k}`);
  return [];
}

export function smallerArrayPaths(field: string, n: number): string[] {
  const shown = Math.min(n, 3);
  const paths = Array.from({ length: shown }, (_, i) => `${field}/${i}`);
  if (n > shown) paths.push(`... ${field}/${n - 1}`);
  return paths;
}
