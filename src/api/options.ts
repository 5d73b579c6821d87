/**
 * The option dialects of the wire, in one place (spec/api-compat.md sections 4.3 to 4.6).
 *
 * - `normalizeOptions` reads a flat dict of wire options (v3 names, v2/legacy names, value aliases
 *   in any case) and returns the engine's own names and canonical values, ready for the engine's
 *   `resolve*Options`, plus human-readable warnings for what it ignored.
 * - `toV2Options` / `toV3Options` are the reverse maps the HTTP client uses to write a body.
 *
 * Policy:
 * - `null` (or undefined) for any key means "use the default": the key is dropped, silently.
 * - Unknown keys, and keys that belong to another analysis, are ignored and reported as warnings,
 *   never rejected (section 4.2). Grid + `missing_moments`/`verify_missing_data` is ignored
 *   silently in v2 (the official client always sends it) and with a warning in v3.
 * - Every wire value is checked HERE against its alias table; an unknown value throws
 *   InvalidInputError with field `options.<wire key>` (the key the caller actually wrote).
 *   Range checks and combination rules (min_k <= K, allowed_k vs min_k, PSR and "both", ...)
 *   are left to the engine resolvers.
 * - Two spellings of one option with different values throw InvalidInputError whose field names
 *   both keys, canonical spelling first: `options.censor_type/options.eval_type`.
 *   Not conflicts: `k` = 1 next to any `min_k` (section 4.3); a retain flag that is `false`
 *   (client default) next to a retain list; PSR `eval_type` "both" (G8, below).
 * - PSR and `eval_type: "both"` (the official v2 client's default, G8): accepted, computed with
 *   censor_type "relevance" (the PSR default) and reported as a warning. This keys on the legacy
 *   spelling `eval_type` in both dialects, since only legacy clients send it; the v3 spelling
 *   `censor_type: "both"` on PSR is passed on and rejected by the engine resolver.
 */
import { InvalidInputError } from "../engine/errors.js";
import {
  ADJ_FIT_MULTIPLIERS,
  CENSOR_OPERATORS,
  CENSOR_UNITS,
  INNER_PARALLEL,
  INV_METHODS,
  MISSING_MOMENTS,
  OBJECTIVES,
  PREDICTION_SCALES,
  RETAIN_KEYS,
  resolveGridOptions,
  resolveMaxFitOptions,
  resolvePsrOptions,
  type Given,
  type GridOptions,
  type MaxFitOptions,
  type PsrOptions,
  type RetainKey,
} from "../engine/options.js";
import type { GivenOptionsOf } from "../engine/run.js";
import type { Analysis } from "../engine/result.js";

export { ANALYSES, type Analysis } from "../engine/result.js";
export type Dialect = "v3" | "v2";

export type { Given } from "../engine/options.js";
export type GivenPsrOptions = Given<PsrOptions>;
export type GivenMaxFitOptions = Given<MaxFitOptions>;
export type GivenGridOptions = Given<GridOptions>;

export type GivenOptionsFor<A extends Analysis> = GivenOptionsOf[A];
export type ResolvedOptionsFor<A extends Analysis> = A extends "psr"
  ? PsrOptions
  : A extends "maxfit"
    ? MaxFitOptions
    : GridOptions;

export interface NormalizedOptions<A extends Analysis = Analysis> {
  /** Canonical (engine) names and values; only keys the caller set, nulls dropped. */
  options: GivenOptionsFor<A>;
  warnings: string[];
}

// ---------------------------------------------------------------------------------------------
// Value aliases (case-insensitive; keys are lower case). section 4.3.

export const VALUE_ALIASES = {
  censor_type: { relevance: "relevance", similarity: "similarity", both: "both", all: "both" },
  censor_unit: { percent: "percent", score: "score" },
  censor_operator: {
    gt: "gt",
    greater_than: "gt",
    ">": "gt",
    lt: "lt",
    less_than: "lt",
    "<": "lt",
    gte: "gte",
    greater_than_or_equal_to: "gte",
    ">=": "gte",
    lte: "lte",
    less_than_or_equal_to: "lte",
    "<=": "lte",
  },
  prediction_scale: { response: "response", default: "response", logistic: "logistic" },
  // Numbers are deliberately not mapped: v2's '1' means identity but the engine code 1 means K.
  adj_fit_multiplier: {
    k: "K",
    k_multiplier: "K",
    identity: "identity",
    "1": "identity",
    none: "identity",
    log: "log",
    logarithmic: "log",
  },
  inv_method: {
    gaussian: "gaussian",
    lu: "gaussian",
    cholesky: "cholesky",
    chol: "cholesky",
    pseudoinverse: "pseudoinverse",
    pinv: "pseudoinverse",
  },
  // Booleans and the number 0 are also read (see readInnerParallel).
  inner_parallel: { auto: "auto", true: "auto", off: "off", false: "off", "0": "off", sequential: "off", seq: "off" },
  missing_moments: { pairwise: "pairwise", complete: "complete" },
  objective: { fit: "fit", adjusted_fit: "adjusted_fit", kfit: "kfit", k_fit: "kfit" },
} as const satisfies Record<string, Record<string, string>>;

const CANONICAL_VALUES: Record<keyof typeof VALUE_ALIASES, readonly string[]> = {
  censor_type: ["relevance", "similarity", "both"],
  censor_unit: CENSOR_UNITS,
  censor_operator: CENSOR_OPERATORS,
  prediction_scale: PREDICTION_SCALES,
  adj_fit_multiplier: ADJ_FIT_MULTIPLIERS,
  inv_method: INV_METHODS,
  inner_parallel: INNER_PARALLEL,
  missing_moments: MISSING_MOMENTS,
  objective: OBJECTIVES,
};

type EnumName = keyof typeof VALUE_ALIASES;

/** Looks a wire value up in an alias table; throws naming the wire key when it is not there. */
function readEnum(name: EnumName, key: string, value: unknown): string {
  const table = VALUE_ALIASES[name] as Record<string, string>;
  if (typeof value === "string") {
    // Own properties only: "constructor" or "__proto__" is a value the caller wrote, not a table entry.
    const word = value.trim().toLowerCase();
    if (Object.hasOwn(table, word)) return table[word];
  }
  throw new InvalidInputError(
    `options.${key}`,
    `one of ${CANONICAL_VALUES[name].map((v) => JSON.stringify(v)).join(", ")} (case-insensitive; also ${Object.keys(table)
      .filter((a) => !CANONICAL_VALUES[name].includes(a))
      .map((a) => JSON.stringify(a))
      .join(", ")})`,
    `got ${describe(value)}`,
  );
}

// ---------------------------------------------------------------------------------------------
// Names.

/** v2 / legacy spelling -> engine (v3) name (service-api.md section 9, api-compat.md section 4.5). */
export const LEGACY_OPTION_NAMES = {
  eval_type: "censor_type",
  is_threshold_percent: "censor_unit",
  most_eval: "censor_operator",
  k: "min_k",
  _seed: "seed",
  _output_scale: "prediction_scale",
  verify_missing_data: "missing_moments",
  _inner_parallel: "inner_parallel",
  _retain_grid_objects: "retain",
  _is_retain_all_grid_objects: "retain",
  retain_grid_objects: "retain",
  retain_all: "retain",
  threshold_range: "threshold",
  stepsize: "threshold",
} as const;

const COMMON_KEYS = [
  "threshold",
  "threshold_range",
  "stepsize",
  "censor_type",
  "eval_type",
  "censor_unit",
  "is_threshold_percent",
  "censor_operator",
  "most_eval",
  "prediction_scale",
  "_output_scale",
  "adj_fit_multiplier",
  "inv_method",
  "include_linear_regression",
] as const;
const MISSING_DATA_KEYS = ["missing_moments", "verify_missing_data"] as const;
const SEARCH_KEYS = ["objective", "inner_parallel", "_inner_parallel"] as const;
const GRID_ONLY_KEYS = [
  "min_k",
  "k",
  "max_k",
  "allowed_k",
  "required_attributes",
  "attribute_groups",
  "attribute_combi",
  "max_iter",
  "seed",
  "_seed",
  "retain_grid_objects",
  "retain",
  "_retain_grid_objects",
  "retain_all",
  "_is_retain_all_grid_objects",
] as const;

/** Wire keys (v3 and legacy spellings) each analysis reads. */
export const OPTION_KEYS: Readonly<Record<Analysis, readonly string[]>> = {
  psr: [...COMMON_KEYS, ...MISSING_DATA_KEYS, "cov_inv"],
  maxfit: [...COMMON_KEYS, ...MISSING_DATA_KEYS, "cov_inv", ...SEARCH_KEYS],
  grid: [...COMMON_KEYS, ...SEARCH_KEYS, ...GRID_ONLY_KEYS],
};

/**
 * Keys a v2 body carries at its top level (api-compat.md section 4.1). A v3 body may carry these at
 * its top level too (section 4.6); any other top-level key of a v3 body is ignored with a warning.
 */
export const V2_OPTION_KEYS: readonly string[] = [
  "threshold",
  "is_threshold_percent",
  "most_eval",
  "eval_type",
  "adj_fit_multiplier",
  "cov_inv",
  "verify_missing_data",
  "missing_moments",
  "inv_method",
  "_output_scale",
  "objective",
  "attribute_combi",
  "max_iter",
  "k",
  "_retain_grid_objects",
  "_is_retain_all_grid_objects",
  "_seed",
  "_inner_parallel",
  "threshold_range",
  "stepsize",
];

/** Engine options the vendor documents but this engine does not implement: ignored with this note. */
const NOT_IMPLEMENTED: Record<string, string> = {
  // Methodology 7.5: the adjusted form is not public, so the impacts are always the unadjusted ones ("off").
  adjust_impact_for_missing: "accepted but not implemented by this engine",
};

const ALL_KEYS = new Set<string>([...OPTION_KEYS.psr, ...OPTION_KEYS.maxfit, ...OPTION_KEYS.grid]);

// ---------------------------------------------------------------------------------------------
// Spellings: how each wire key becomes one canonical option.

interface Reading {
  value: unknown;
  /** A value that gives way to any other spelling of the same option (client defaults). */
  weak?: boolean;
  warning?: string;
}

interface Spelling {
  key: string;
  read(value: unknown, key: string, analysis: Analysis): Reading;
}

interface OptionSpec {
  /** Engine name. */
  name: string;
  /** Canonical spelling first; the conflict message names keys in this order. */
  spellings: Spelling[];
  same?(a: unknown, b: unknown): boolean;
}

const enumSpelling = (key: string, name: EnumName): Spelling => ({ key, read: (v) => ({ value: readEnum(name, key, v) }) });

const boolSpelling = (key: string, whenTrue: string, whenFalse: string): Spelling => ({
  key,
  read: (v) => ({ value: readBool(key, v) ? whenTrue : whenFalse }),
});

const integerSpelling = (key: string, min: number): Spelling => ({
  key,
  read: (v) => {
    if (typeof v !== "number" || !Number.isInteger(v) || v < min) {
      throw new InvalidInputError(`options.${key}`, `an integer >= ${min}`, `got ${describe(v)}`);
    }
    return { value: v };
  },
});

const passSpelling = (key: string): Spelling => ({ key, read: (v) => ({ value: v }) });

const SPECS: Record<string, OptionSpec> = {
  censor_type: {
    name: "censor_type",
    spellings: [
      enumSpelling("censor_type", "censor_type"),
      {
        key: "eval_type",
        read: (v, key, analysis) => {
          const value = readEnum("censor_type", key, v);
          if (analysis === "psr" && value === "both") {
            return {
              value: "relevance",
              weak: true,
              warning:
                'eval_type "both" is not a psr censor (psr evaluates one); computed with censor_type "relevance", the psr default, unless censor_type is given',
            };
          }
          return { value };
        },
      },
    ],
  },
  censor_unit: {
    name: "censor_unit",
    spellings: [enumSpelling("censor_unit", "censor_unit"), boolSpelling("is_threshold_percent", "percent", "score")],
  },
  censor_operator: {
    name: "censor_operator",
    // most_eval maps to the inclusive operators: the engine behaviour is >= (methodology 3, G9).
    spellings: [enumSpelling("censor_operator", "censor_operator"), boolSpelling("most_eval", "gte", "lte")],
  },
  prediction_scale: {
    name: "prediction_scale",
    spellings: [enumSpelling("prediction_scale", "prediction_scale"), enumSpelling("_output_scale", "prediction_scale")],
  },
  adj_fit_multiplier: { name: "adj_fit_multiplier", spellings: [enumSpelling("adj_fit_multiplier", "adj_fit_multiplier")] },
  inv_method: { name: "inv_method", spellings: [enumSpelling("inv_method", "inv_method")] },
  include_linear_regression: {
    name: "include_linear_regression",
    spellings: [{ key: "include_linear_regression", read: (v, key) => ({ value: readBool(key, v) }) }],
  },
  missing_moments: {
    name: "missing_moments",
    spellings: [enumSpelling("missing_moments", "missing_moments"), boolSpelling("verify_missing_data", "complete", "pairwise")],
  },
  cov_inv: { name: "cov_inv", spellings: [{ key: "cov_inv", read: (v, key) => ({ value: readMatrixFlat(key, v) }) }] },
  objective: { name: "objective", spellings: [enumSpelling("objective", "objective")] },
  inner_parallel: {
    name: "inner_parallel",
    spellings: [
      { key: "inner_parallel", read: (v, key) => ({ value: readInnerParallel(key, v) }) },
      { key: "_inner_parallel", read: (v, key) => ({ value: readInnerParallel(key, v) }) },
    ],
  },
  min_k: {
    name: "min_k",
    spellings: [
      integerSpelling("min_k", 1),
      // k = 1 (the v2 client's default) never conflicts with min_k (section 4.3).
      { key: "k", read: (v, key) => ({ value: integerSpelling(key, 1).read(v, key, "grid").value, weak: v === 1 }) },
    ],
  },
  max_k: { name: "max_k", spellings: [integerSpelling("max_k", 1)] },
  allowed_k: {
    name: "allowed_k",
    spellings: [{ key: "allowed_k", read: (v) => ({ value: typeof v === "number" ? [v] : v }) }],
  },
  required_attributes: { name: "required_attributes", spellings: [passSpelling("required_attributes")] },
  attribute_groups: { name: "attribute_groups", spellings: [passSpelling("attribute_groups")] },
  attribute_combi: { name: "attribute_combi", spellings: [passSpelling("attribute_combi")] },
  max_iter: { name: "max_iter", spellings: [integerSpelling("max_iter", 1)] },
  seed: { name: "seed", spellings: [integerSpelling("seed", 0), integerSpelling("_seed", 0)] },
  retain: {
    name: "retain",
    spellings: [
      { key: "retain_grid_objects", read: readRetain },
      { key: "retain", read: readRetain },
      { key: "_retain_grid_objects", read: readRetain },
      { key: "retain_all", read: readRetainAll },
      { key: "_is_retain_all_grid_objects", read: readRetainAll },
    ],
    same: (a, b) => sameJson([...(a as string[])].sort(), [...(b as string[])].sort()),
  },
};

/** Canonical options each analysis has, in the order they are written out. */
const COMMON_CANONICAL = [
  "censor_type",
  "censor_unit",
  "censor_operator",
  "prediction_scale",
  "adj_fit_multiplier",
  "inv_method",
  "include_linear_regression",
] as const;
const CANONICAL_BY_ANALYSIS: Record<Analysis, readonly string[]> = {
  psr: [...COMMON_CANONICAL, "missing_moments", "cov_inv"],
  maxfit: [...COMMON_CANONICAL, "missing_moments", "cov_inv", "objective", "inner_parallel"],
  grid: [
    ...COMMON_CANONICAL,
    "objective",
    "inner_parallel",
    "min_k",
    "max_k",
    "allowed_k",
    "required_attributes",
    "attribute_groups",
    "attribute_combi",
    "max_iter",
    "seed",
    "retain",
  ],
};

// ---------------------------------------------------------------------------------------------
// normalizeOptions

/**
 * Reads a flat dict of wire options into canonical engine options for `analysis`.
 * Throws InvalidInputError for an invalid value (field `options.<wire key>`) or for two spellings
 * that disagree (field `options.<a>/options.<b>`). See the module comment for the policy.
 */
export function normalizeOptions<A extends Analysis>(
  analysis: A,
  raw: Readonly<Record<string, unknown>> | null | undefined,
  dialect: Dialect,
): NormalizedOptions<A> {
  const warnings: string[] = [];
  const present = new Map<string, unknown>();
  for (const [key, value] of Object.entries(raw ?? {})) {
    if (value !== null && value !== undefined) present.set(key, value);
  }
  const known = new Set(OPTION_KEYS[analysis]);
  for (const key of [...present.keys()]) {
    if (known.has(key)) continue;
    present.delete(key);
    if (analysis === "grid" && (MISSING_DATA_KEYS as readonly string[]).includes(key)) {
      if (dialect === "v3") warnings.push(`ignored option "${key}" (the grid chooses complete rows per combination)`);
    } else if (Object.hasOwn(NOT_IMPLEMENTED, key)) {
      warnings.push(`ignored option "${quoteName(key)}" (${NOT_IMPLEMENTED[key]})`);
    } else {
      warnings.push(`ignored option "${quoteName(key)}" (not a ${analysis} option)`);
    }
  }

  const out: Record<string, unknown> = {};
  const threshold = readThresholds(present, warnings);
  if (threshold !== undefined) out.threshold = threshold;

  for (const name of CANONICAL_BY_ANALYSIS[analysis]) {
    const spec = SPECS[name];
    const strong: Array<{ key: string; value: unknown; raw: unknown }> = [];
    const weak: Array<{ key: string; value: unknown }> = [];
    for (const spelling of spec.spellings) {
      if (!present.has(spelling.key)) continue;
      const rawValue = present.get(spelling.key);
      const reading = spelling.read(rawValue, spelling.key, analysis);
      if (reading.warning) warnings.push(reading.warning);
      if (reading.value === undefined) continue;
      (reading.weak ? weak : strong).push({ key: spelling.key, value: reading.value, ...(reading.weak ? {} : { raw: rawValue }) });
    }
    const same = spec.same ?? sameJson;
    for (const other of strong.slice(1)) {
      if (!same(strong[0].value, other.value)) {
        throw new InvalidInputError(
          `options.${strong[0].key}/options.${other.key}`,
          `one value for ${name} (the two names are spellings of one option)`,
          `${strong[0].key} is ${describe(strong[0].raw)} but ${other.key} is ${describe(other.raw)}`,
        );
      }
    }
    if (strong.length > 0) out[name] = strong[0].value;
    else if (weak.length > 0) out[name] = weak[0].value;
  }

  // The weak k = 1 (a default) must not collide with allowed_k, which replaces min_k.
  if (analysis === "grid" && out.allowed_k !== undefined && !present.has("min_k") && present.get("k") === 1) {
    delete out.min_k;
  }
  return { options: out as GivenOptionsFor<A>, warnings };
}

/**
 * G11: a v2 PSR given no threshold at all (threshold null or absent, no threshold_range) sweeps
 * these, the newer OpenAPI text's thresholds (the official client always sends one). v3, and the
 * other analyses in either version, use the engine's defaults.
 */
export const V2_PSR_DEFAULT_THRESHOLDS: readonly number[] = [0, 0.2, 0.4, 0.6, 0.8];

/**
 * The options a job runs with: canonical options (from `normalizeOptions`) resolved as the service
 * resolves a request of that API version, the v2 PSR default thresholds included. What a caller
 * labels a job's calibrations with (the notebook's Prediction).
 *
 * @example
 * resolveForVersion("psr", {}, 5, "v2").threshold; // [0, 0.2, 0.4, 0.6, 0.8]
 * resolveForVersion("psr", {}, 5, "v3").threshold; // [0.5]
 */
export function resolveForVersion<A extends Analysis>(analysis: A, given: GivenOptionsFor<A>, k: number, version: Dialect): ResolvedOptionsFor<A> {
  const threshold = (given as { threshold?: unknown }).threshold;
  const defaulted = version === "v2" && analysis === "psr" && (threshold === undefined || threshold === null);
  return resolveOptions(analysis, defaulted ? ({ ...given, threshold: [...V2_PSR_DEFAULT_THRESHOLDS] } as GivenOptionsFor<A>) : given, k);
}

/** Resolves canonical options with the engine resolver of `analysis` (validates values and combinations). */
export function resolveOptions<A extends Analysis>(analysis: A, given: GivenOptionsFor<A>, k: number): ResolvedOptionsFor<A> {
  switch (analysis) {
    case "psr":
      return resolvePsrOptions(given as GivenPsrOptions, k) as ResolvedOptionsFor<A>;
    case "maxfit":
      return resolveMaxFitOptions(given as GivenMaxFitOptions, k) as ResolvedOptionsFor<A>;
    default:
      return resolveGridOptions(given as GivenGridOptions, k) as ResolvedOptionsFor<A>;
  }
}

// ---------------------------------------------------------------------------------------------
// Thresholds

/**
 * Most thresholds one request may list or expand to: the engine calibrates at most 255 at once
 * (engine/calibrate.ts keeps each row's threshold bucket in a byte), so more would be accepted
 * and then fail the job; they are refused here, naming the option (issue 11, item 5).
 */
export const MAX_THRESHOLDS = 255;

/**
 * `threshold`: a number becomes [number]; a list stays. When `threshold` is absent or null, the
 * legacy `threshold_range` applies: [min, max] with a `stepsize` expands to min, min+step, ...
 * up to max inclusive (1e-9 tolerance, each value rounded to 10 decimals); any other vector, or
 * two values without a stepsize, is an explicit threshold list.
 */
function readThresholds(present: Map<string, unknown>, warnings: string[]): unknown[] | undefined {
  const range = present.get("threshold_range");
  const step = present.get("stepsize");
  if (present.has("threshold")) {
    if (range !== undefined) warnings.push('ignored option "threshold_range" (threshold is given)');
    if (step !== undefined) warnings.push('ignored option "stepsize" (threshold is given)');
    return readNumberList("threshold", present.get("threshold"));
  }
  if (range === undefined) {
    if (step !== undefined) warnings.push('ignored option "stepsize" (no threshold_range [min, max] to step through)');
    return undefined;
  }
  const list = readNumberList("threshold_range", range);
  if (list.length !== 2 || step === undefined) {
    if (step !== undefined) warnings.push('ignored option "stepsize" (threshold_range is an explicit list)');
    return list;
  }
  if (typeof step !== "number" || !Number.isFinite(step) || step <= 0) {
    throw new InvalidInputError("options.stepsize", "a positive number", `got ${describe(step)}`);
  }
  const [min, max] = list as [number, number];
  if (max < min) throw new InvalidInputError("options.threshold_range", "[min, max] with min <= max", `got [${min}, ${max}]`);
  const out: number[] = [];
  for (let i = 0; min + i * step <= max + 1e-9; i++) {
    if (out.length >= MAX_THRESHOLDS) {
      const count = Math.floor((max - min) / step + 1e-9) + 1;
      throw new InvalidInputError(
        "options.stepsize",
        `a step giving at most ${MAX_THRESHOLDS} thresholds from threshold_range [${min}, ${max}]`,
        `got ${step}, which gives ${count.toLocaleString("en-US")}`,
      );
    }
    out.push(Number((min + i * step).toFixed(10)));
  }
  return out;
}

function readNumberList(key: string, value: unknown): number[] {
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new InvalidInputError(`options.${key}`, "a finite number", `got ${describe(value)}`);
    return [value];
  }
  if (!Array.isArray(value) || value.length === 0) {
    throw new InvalidInputError(`options.${key}`, "a number or a non-empty list of numbers", `got ${describe(value)}`);
  }
  if (value.length > MAX_THRESHOLDS) {
    throw new InvalidInputError(`options.${key}`, `at most ${MAX_THRESHOLDS} thresholds (the engine calibrates at most ${MAX_THRESHOLDS})`, `got ${value.length}`);
  }
  value.forEach((t, i) => {
    if (typeof t !== "number" || !Number.isFinite(t)) {
      throw new InvalidInputError(`options.${key}[${i}]`, "a finite number", `got ${describe(t)}`);
    }
  });
  return [...(value as number[])];
}

// ---------------------------------------------------------------------------------------------
// Readers

function readBool(key: string, value: unknown): boolean {
  if (typeof value === "boolean") return value;
  throw new InvalidInputError(`options.${key}`, "true or false", `got ${describe(value)}`);
}

function readInnerParallel(key: string, value: unknown): string {
  if (value === false || value === 0) return "off";
  if (value === true) return "auto";
  return readEnum("inner_parallel", key, value);
}

/** A K x K matrix as nested rows (or already flat, row-major) -> Float64Array; K is checked by the engine. */
function readMatrixFlat(key: string, value: unknown): Float64Array {
  if (value instanceof Float64Array) return value;
  const bad = (): never => {
    throw new InvalidInputError(`options.${key}`, "a K x K matrix of numbers (a list of K rows of K numbers)", `got ${describe(value)}`);
  };
  if (!Array.isArray(value) || value.length === 0) return bad();
  if (value.every((v) => typeof v === "number")) return Float64Array.from(value as number[]);
  const n = value.length;
  const flat = new Float64Array(n * n);
  value.forEach((row, i) => {
    if (!Array.isArray(row) || row.length !== n) bad();
    (row as unknown[]).forEach((v, j) => {
      if (typeof v !== "number") throw new InvalidInputError(`options.${key}[${i}][${j}]`, "a number", `got ${describe(v)}`);
      flat[i * n + j] = v;
    });
  });
  return flat;
}

/**
 * Retain lists: true / "true" / "all" -> every key; false / "false" / "none" -> []; a comma list
 * or an array of keys -> those keys. "xi_solo_cells" (a 2.4.0 key) is accepted and dropped with a
 * warning: this engine does not produce it. A boolean false is weak (the client's default).
 */
function readRetain(value: unknown, key: string): Reading {
  if (typeof value === "boolean") return value ? { value: [...RETAIN_KEYS] } : { value: [], weak: true };
  let items: unknown[];
  if (typeof value === "string") {
    const word = value.trim().toLowerCase();
    if (word === "true" || word === "all") return { value: [...RETAIN_KEYS] };
    if (word === "false" || word === "none" || word === "") return { value: [] };
    items = word.split(",");
  } else if (Array.isArray(value)) {
    items = value;
  } else {
    throw new InvalidInputError(
      `options.${key}`,
      'true, false, "all", "none", a comma-separated list or a list of retain keys',
      `got ${describe(value)}`,
    );
  }
  const keys: RetainKey[] = [];
  let warning: string | undefined;
  items.forEach((item, i) => {
    const name = typeof item === "string" ? item.trim().toLowerCase() : item;
    if (name === "") return;
    if (name === "xi_solo_cells") {
      warning = `ignored retain key "xi_solo_cells" in "${key}" (not produced by this engine)`;
      return;
    }
    if (typeof name !== "string" || !(RETAIN_KEYS as readonly string[]).includes(name)) {
      throw new InvalidInputError(`options.${key}[${i}]`, `one of ${RETAIN_KEYS.join(", ")}`, `got ${describe(item)}`);
    }
    if (!keys.includes(name as RetainKey)) keys.push(name as RetainKey);
  });
  return warning === undefined ? { value: keys } : { value: keys, warning };
}

function readRetainAll(value: unknown, key: string): Reading {
  return readBool(key, value) ? { value: [...RETAIN_KEYS] } : { value: [], weak: true };
}

// ---------------------------------------------------------------------------------------------
// Reverse maps (client side)

const V2_SCALE: Record<string, string> = { response: "default", logistic: "logistic" };
const V2_MULTIPLIER: Record<string, string> = { K: "K", identity: "1", log: "log" };

/**
 * Writes canonical options (given or resolved) as a v2 flat body fragment: v2 names where v2 has
 * one (eval_type, is_threshold_percent, most_eval, _output_scale, verify_missing_data, k, _seed,
 * _inner_parallel, _retain_grid_objects), v3 names for the rest (the v2 endpoints accept them,
 * section 4.6). `gt`/`lt` have no v2 spelling (most_eval is inclusive) and are written as
 * censor_operator. Options foreign to `analysis`, and null/undefined values, are left out.
 * `normalizeOptions(analysis, toV2Options(analysis, o), "v2").options` gives `o` back.
 */
export function toV2Options<A extends Analysis>(analysis: A, options: GivenOptionsFor<A>): Record<string, unknown> {
  const o = options as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [name, value] of entries(analysis, o)) {
    switch (name) {
      case "censor_type":
        out.eval_type = value;
        break;
      case "censor_unit":
        out.is_threshold_percent = value === "percent";
        break;
      case "censor_operator":
        if (value === "gte" || value === "lte") out.most_eval = value === "gte";
        else out.censor_operator = value;
        break;
      case "prediction_scale":
        out._output_scale = Object.hasOwn(V2_SCALE, value as string) ? V2_SCALE[value as string] : value;
        break;
      case "adj_fit_multiplier":
        out.adj_fit_multiplier = Object.hasOwn(V2_MULTIPLIER, value as string) ? V2_MULTIPLIER[value as string] : value;
        break;
      case "missing_moments":
        out.verify_missing_data = value === "complete";
        break;
      case "inner_parallel":
        out._inner_parallel = value;
        break;
      case "min_k":
        out.k = value;
        break;
      case "seed":
        out._seed = value;
        break;
      case "retain":
        out._retain_grid_objects = retainToWire(value as RetainKey[], true);
        break;
      case "cov_inv":
        out.cov_inv = matrixRows(value as ArrayLike<number>);
        break;
      default:
        out[name] = jsonCopy(value);
    }
  }
  return out;
}

/**
 * Writes canonical options as a v3 `options` object (JSON-safe: cov_inv as nested rows, retain as
 * `retain_grid_objects`). `normalizeOptions(analysis, toV3Options(analysis, o), "v3").options`
 * gives `o` back.
 */
export function toV3Options<A extends Analysis>(analysis: A, options: GivenOptionsFor<A>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of entries(analysis, options as Record<string, unknown>)) {
    if (name === "retain") out.retain_grid_objects = retainToWire(value as RetainKey[], false);
    else if (name === "cov_inv") out.cov_inv = matrixRows(value as ArrayLike<number>);
    else out[name] = jsonCopy(value);
  }
  return out;
}

function entries(analysis: Analysis, o: Record<string, unknown>): Array<[string, unknown]> {
  const names = ["threshold", ...CANONICAL_BY_ANALYSIS[analysis]];
  return names.filter((n) => o[n] !== undefined && o[n] !== null).map((n) => [n, o[n]]);
}

function retainToWire(keys: readonly RetainKey[], v2: boolean): boolean | string[] {
  const all = RETAIN_KEYS.every((k) => keys.includes(k)) && keys.length === RETAIN_KEYS.length;
  if (all) return true;
  if (keys.length === 0 && v2) return false;
  return [...keys];
}

function matrixRows(flat: ArrayLike<number>): number[][] {
  const n = Math.round(Math.sqrt(flat.length));
  if (n * n !== flat.length) throw new InvalidInputError("options.cov_inv", "a K x K matrix", `got ${flat.length} values`);
  return Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => flat[i * n + j]));
}

function jsonCopy(value: unknown): unknown {
  return Array.isArray(value) ? value.map(jsonCopy) : value;
}

// ---------------------------------------------------------------------------------------------

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(normalizeForJson(a)) === JSON.stringify(normalizeForJson(b));
}

function normalizeForJson(v: unknown): unknown {
  return ArrayBuffer.isView(v) ? Array.from(v as unknown as ArrayLike<number>) : v;
}

/** Short text of a wire value for error details. */
export function describe(value: unknown): string {
  if (value === undefined) return "nothing";
  if (typeof value === "number" && !Number.isFinite(value)) return String(value);
  if (ArrayBuffer.isView(value)) return `a ${value.constructor.name}`;
  const text = JSON.stringify(value);
  return text === undefined ? String(value) : text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** Longest name a warning quotes whole (issue 11: a 5 MB option name was copied into every job). */
export const QUOTED_NAME_CHARS = 64;

/**
 * A name the caller sent, as a warning quotes it: at most QUOTED_NAME_CHARS characters, the rest
 * replaced by "...(N characters)"; double quotes and control characters escaped, so the name
 * cannot end the quotation it stands in.
 *
 * @example
 * quoteName("x".repeat(1000)); // "xxxx...x...(1000 characters)" (64 x's)
 */
export function quoteName(name: string): string {
  const short = name.length > QUOTED_NAME_CHARS ? name.slice(0, QUOTED_NAME_CHARS) : name;
  const escaped = JSON.stringify(short).slice(1, -1);
  return name.length > QUOTED_NAME_CHARS ? `${escaped}...(${name.length} characters)` : escaped;
}

/** True when `key` is a wire option name of some analysis. */
export function isOptionKey(key: string): boolean {
  return ALL_KEYS.has(key);
}
