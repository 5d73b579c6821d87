/**
 * The engine's own option vocabulary: canonical names and values only (the v3 names of
 * docs/api.md section 4). Dialects, aliases and case folding are the wire layer's job
 * (src/api); here every value is checked against its canonical set and every default lives once.
 */
import { invalid } from "./errors.js";

export const CENSOR_TYPES = ["relevance", "similarity"] as const;
export type CensorType = (typeof CENSOR_TYPES)[number];
export type CensorTypeOption = CensorType | "both";
export const CENSOR_UNITS = ["percent", "score"] as const;
export type CensorUnit = (typeof CENSOR_UNITS)[number];
export const CENSOR_OPERATORS = ["gt", "gte", "lt", "lte"] as const;
export type CensorOperator = (typeof CENSOR_OPERATORS)[number];
export const ADJ_FIT_MULTIPLIERS = ["identity", "K", "log"] as const;
export type AdjFitMultiplier = (typeof ADJ_FIT_MULTIPLIERS)[number];
export const INV_METHODS = ["gaussian", "cholesky", "pseudoinverse"] as const;
export type InvMethod = (typeof INV_METHODS)[number];
export const MISSING_MOMENTS = ["pairwise", "complete"] as const;
export type MissingMoments = (typeof MISSING_MOMENTS)[number];
export const PREDICTION_SCALES = ["response", "logistic"] as const;
export type PredictionScale = (typeof PREDICTION_SCALES)[number];
export const OBJECTIVES = ["fit", "adjusted_fit", "kfit"] as const;
export type Objective = (typeof OBJECTIVES)[number];
export const INNER_PARALLEL = ["auto", "off"] as const;
export type InnerParallel = (typeof INNER_PARALLEL)[number];
export const RETAIN_KEYS = [
  "yhat_cells",
  "adjusted_fit_cells",
  "n_cells",
  "weights_cells",
  "k_cells",
  "combi_cells",
  "ysolo_cells",
  "ysolo_distribution",
] as const;
export type RetainKey = (typeof RETAIN_KEYS)[number];

/** Options every analysis shares. */
export interface CommonOptions {
  threshold: number[];
  censor_unit: CensorUnit;
  censor_operator: CensorOperator;
  prediction_scale: PredictionScale;
  adj_fit_multiplier: AdjFitMultiplier;
  inv_method: InvMethod;
  /** Fill `yhat_linear`, the all-attribute least-squares prediction. */
  include_linear_regression: boolean;
}

export interface PsrOptions extends CommonOptions {
  censor_type: CensorType;
  missing_moments: MissingMoments;
  /** A caller-supplied inverse covariance (K x K, row-major) used instead of computing one. */
  cov_inv: Float64Array | null;
}

export interface MaxFitOptions extends CommonOptions {
  censor_type: CensorTypeOption;
  missing_moments: MissingMoments;
  cov_inv: Float64Array | null;
  objective: Objective;
  inner_parallel: InnerParallel;
}

export interface GridOptions extends CommonOptions {
  censor_type: CensorTypeOption;
  /** Smallest combination size (alias `k` on the wire). Absent: 1, unless allowed_k is given. */
  min_k: number | undefined;
  /** Largest combination size. Absent: K. */
  max_k: number | undefined;
  /** The only legal sizes; replaces min_k and max_k. */
  allowed_k: number[] | undefined;
  /** Length-K 0/1 mask of attributes present in every combination. */
  required_attributes: number[] | undefined;
  /** G x K 0/1 rows, each a block of attributes switched on and off together. */
  attribute_groups: number[][] | undefined;
  /** Q x K 0/1 rows: evaluate exactly these combinations. */
  attribute_combi: number[][] | undefined;
  max_iter: number;
  seed: number;
  objective: Objective;
  inner_parallel: InnerParallel;
  /** Which per-cell arrays to keep in `grid_cells`. */
  retain: RetainKey[];
}

export const DEFAULT_PSR_THRESHOLDS = [0.5];
export const DEFAULT_SEARCH_THRESHOLDS = [0, 0.2, 0.5, 0.8];

const COMMON_DEFAULTS: Omit<CommonOptions, "threshold"> = {
  censor_unit: "percent",
  censor_operator: "gte",
  prediction_scale: "response",
  adj_fit_multiplier: "K",
  inv_method: "gaussian",
  // On by default: the published vectors print yhat_linear for requests that do not ask for it (one vendor text says false; docs/api.md section 4).
  include_linear_regression: true,
};

/** Options as a caller gives them: any subset, null meaning "use the default". */
export type Given<T> = { [P in keyof T]?: T[P] | null };

export function resolvePsrOptions(given: Given<PsrOptions>, k: number): PsrOptions {
  if (given.censor_type === ("both" as never)) {
    invalid("options.censor_type", "relevance or similarity", 'PSR evaluates one censor; "both" is for MaxFit and Grid');
  }
  return Object.assign(resolveCommon(given, DEFAULT_PSR_THRESHOLDS), {
    censor_type: oneOf("censor_type", given.censor_type, CENSOR_TYPES, "relevance"),
    missing_moments: oneOf("missing_moments", given.missing_moments, MISSING_MOMENTS, "pairwise"),
    cov_inv: covInverse(given.cov_inv, k),
  });
}

export function resolveMaxFitOptions(given: Given<MaxFitOptions>, k: number): MaxFitOptions {
  return Object.assign(resolveCommon(given, DEFAULT_SEARCH_THRESHOLDS), {
    censor_type: oneOf("censor_type", given.censor_type, [...CENSOR_TYPES, "both"] as const, "both"),
    missing_moments: oneOf("missing_moments", given.missing_moments, MISSING_MOMENTS, "pairwise"),
    cov_inv: covInverse(given.cov_inv, k),
    objective: oneOf("objective", given.objective, OBJECTIVES, "kfit"),
    inner_parallel: oneOf("inner_parallel", given.inner_parallel, INNER_PARALLEL, "auto"),
  });
}

export function resolveGridOptions(given: Given<GridOptions>, k: number): GridOptions {
  const combi = given.attribute_combi ?? undefined;
  const required = given.required_attributes ?? undefined;
  const groups = given.attribute_groups ?? undefined;
  if (combi !== undefined && (required !== undefined || groups !== undefined)) {
    invalid(
      required !== undefined ? "options.required_attributes" : "options.attribute_groups",
      "no required_attributes or attribute_groups together with attribute_combi",
      "attribute_combi lists the combinations exactly; drop one of the two",
    );
  }
  const allowed = given.allowed_k ?? undefined;
  const minK = given.min_k ?? undefined;
  const maxK = given.max_k ?? undefined;
  if (allowed !== undefined && (minK !== undefined || maxK !== undefined)) {
    invalid(minK !== undefined ? "options.min_k" : "options.max_k", "min_k and max_k left out when allowed_k is given", "allowed_k replaces min_k and max_k");
  }
  if (minK !== undefined) size("min_k", minK, k);
  if (maxK !== undefined) size("max_k", maxK, k);
  if (minK !== undefined && maxK !== undefined && maxK < minK) {
    invalid("options.max_k", `an integer >= min_k (${minK})`, `got ${maxK}`);
  }
  if (allowed !== undefined) {
    if (!Array.isArray(allowed) || allowed.length === 0) invalid("options.allowed_k", "a non-empty list of sizes");
    allowed.forEach((s, i) => size(`allowed_k[${i}]`, s, k));
  }
  if (required !== undefined) mask("options.required_attributes", required, k);
  if (groups !== undefined) {
    if (!Array.isArray(groups)) invalid("options.attribute_groups", `a list of 0/1 rows of length ${k}`);
    const owner = new Array<number>(k).fill(-1);
    groups.forEach((row, g) => {
      mask(`options.attribute_groups[${g}]`, row, k);
      row.forEach((bit, j) => {
        if (bit !== 1) return;
        if (owner[j] >= 0) {
          invalid(`options.attribute_groups[${g}]`, "groups that do not overlap", `attribute ${j} is already in group ${owner[j]}`);
        }
        owner[j] = g;
      });
    });
  }
  if (combi !== undefined) {
    if (!Array.isArray(combi) || combi.length === 0) invalid("options.attribute_combi", `a non-empty list of 0/1 rows of length ${k}`);
    combi.forEach((row, q) => {
      mask(`options.attribute_combi[${q}]`, row, k);
      if (!row.includes(1)) invalid(`options.attribute_combi[${q}]`, "at least one attribute switched on");
    });
  }
  const maxIter = given.max_iter ?? 1000;
  if (!Number.isInteger(maxIter) || maxIter < 1) invalid("options.max_iter", "an integer >= 1", `got ${String(maxIter)}`);
  const seed = given.seed ?? 42;
  if (!Number.isInteger(seed) || seed < 0 || seed >= 2 ** 32) invalid("options.seed", "an integer in [0, 2^32)", `got ${String(seed)}`);
  const retain = given.retain ?? [];
  retain.forEach((key, i) => {
    if (!RETAIN_KEYS.includes(key)) invalid(`options.retain[${i}]`, `one of ${RETAIN_KEYS.join(", ")}`, `got ${JSON.stringify(key)}`);
  });
  return Object.assign(resolveCommon(given, DEFAULT_SEARCH_THRESHOLDS), {
    censor_type: oneOf("censor_type", given.censor_type, [...CENSOR_TYPES, "both"] as const, "both"),
    min_k: minK,
    max_k: maxK,
    allowed_k: allowed,
    required_attributes: required,
    attribute_groups: groups,
    attribute_combi: combi,
    max_iter: maxIter,
    seed,
    objective: oneOf("objective", given.objective, OBJECTIVES, "kfit"),
    inner_parallel: oneOf("inner_parallel", given.inner_parallel, INNER_PARALLEL, "auto"),
    retain: [...new Set(retain)],
  });
}

/**
 * The options every analysis has, checked in this order. The resolvers above extend the object it
 * makes with `Object.assign` (its keys first, then theirs, as a spread would give them) rather than
 * spreading it (`{ ...resolveCommon(), ... }`): V8 gave an object spread and then extended a new
 * shape every call, 6 us to make against 0.2, and every later read of it was slower
 * (2026-11-27, docs/architecture.md).
 */
function resolveCommon(given: Given<CommonOptions>, defaultThresholds: number[]): CommonOptions {
  const unit = oneOf("censor_unit", given.censor_unit, CENSOR_UNITS, COMMON_DEFAULTS.censor_unit);
  const threshold = given.threshold ?? defaultThresholds;
  if (!Array.isArray(threshold) || threshold.length === 0) invalid("options.threshold", "a number or a non-empty list of numbers");
  threshold.forEach((t, i) => {
    if (typeof t !== "number" || !Number.isFinite(t)) invalid(`options.threshold[${i}]`, "a finite number", `got ${String(t)}`);
    if (unit === "percent" && (t < 0 || t > 1)) {
      invalid(`options.threshold[${i}]`, "a fraction between 0 and 1 when censor_unit is percent", `got ${t}`);
    }
  });
  const linear = given.include_linear_regression ?? COMMON_DEFAULTS.include_linear_regression;
  if (typeof linear !== "boolean") invalid("options.include_linear_regression", "true or false");
  return {
    threshold: [...threshold],
    censor_unit: unit,
    censor_operator: oneOf("censor_operator", given.censor_operator, CENSOR_OPERATORS, COMMON_DEFAULTS.censor_operator),
    prediction_scale: oneOf("prediction_scale", given.prediction_scale, PREDICTION_SCALES, COMMON_DEFAULTS.prediction_scale),
    adj_fit_multiplier: oneOf("adj_fit_multiplier", given.adj_fit_multiplier, ADJ_FIT_MULTIPLIERS, COMMON_DEFAULTS.adj_fit_multiplier),
    inv_method: oneOf("inv_method", given.inv_method, INV_METHODS, COMMON_DEFAULTS.inv_method),
    include_linear_regression: linear,
  };
}

function oneOf<T extends string>(name: string, value: unknown, allowed: readonly T[], fallback: T): T {
  if (value === undefined || value === null) return fallback;
  if (typeof value === "string" && (allowed as readonly string[]).includes(value)) return value as T;
  return invalid(`options.${name}`, `one of ${allowed.map((a) => JSON.stringify(a)).join(", ")}`, `got ${JSON.stringify(value)}`);
}

function size(name: string, value: unknown, k: number): void {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > k) {
    invalid(`options.${name}`, `an integer between 1 and K=${k}`, `got ${JSON.stringify(value)}`);
  }
}

function mask(field: string, row: unknown, k: number): asserts row is number[] {
  if (!Array.isArray(row) || row.length !== k || row.some((b) => b !== 0 && b !== 1)) {
    invalid(field, `${k} values, each 0 or 1`, `got ${JSON.stringify(row)?.slice(0, 80)}`);
  }
}

function covInverse(value: Float64Array | null | undefined, k: number): Float64Array | null {
  if (value === undefined || value === null) return null;
  if (!(value instanceof Float64Array) || value.length !== k * k || value.some((v) => !Number.isFinite(v))) {
    invalid("options.cov_inv", `a ${k} x ${k} matrix of finite numbers`);
  }
  return value;
}
