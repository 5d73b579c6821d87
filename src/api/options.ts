/**
 * The option dialects of the wire, in one place (docs/api.md sections 1, 2.1 and 4).
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
import { quoteName, warningText, type RequestWarning } from "./warnings.js";

export { quoteName, QUOTED_NAME_CHARS } from "./warnings.js";
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
export type ResolvedOptionsFor<A extends Analysis> = A extends "psr" ? PsrOptions : A extends "maxfit" ? MaxFitOptions : GridOptions;

export interface NormalizedOptions<A extends Analysis = Analysis> {
  /** Canonical (engine) names and values; only keys the caller set, nulls dropped. */
  options: GivenOptionsFor<A>;
  /** What was ignored or adjusted, as data (warnings.ts). */
  notes: RequestWarning[];
  /** The same as text, for people. */
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

export const CANONICAL_VALUES: Record<keyof typeof VALUE_ALIASES, readonly string[]> = {
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
// The option table: one row per option. Everything else about options is derived from it: the
// wire keys each analysis reads (OPTION_KEYS), the keys a v2 body carries (V2_OPTION_KEYS), the
// reading of every spelling (normalizeOptions), the v2 and v3 writers (toV2Options, toV3Options),
// the client's input types (client/option-types.ts, generated) and the options table of
// docs/api.md section 4 (generated; both checked by test/api/option-table.test.ts).

interface Reading {
  value: unknown;
  /** A value that gives way to any other spelling of the same option (client defaults). */
  weak?: boolean;
  warning?: RequestWarning;
}

interface Spelling {
  key: string;
  read(value: unknown, key: string, analysis: Analysis): Reading;
  /** A v2 body carries this key at its top level (docs/api.md section 3). */
  v2Body?: boolean;
}

/** One option: its canonical name, the analyses that read it, its spellings, its writers and its documentation. */
export interface OptionRow {
  /** Canonical (engine and v3) name. */
  name: string;
  analyses: readonly Analysis[];
  /** Canonical spelling first, then v2 and legacy ones; the conflict message names keys in this order. */
  spellings: Spelling[];
  /** The value alias table (VALUE_ALIASES) of a word-valued option. */
  values?: EnumName;
  /** The v2 body fragment of a canonical value (default: the same key, the value as JSON). */
  toV2?(value: unknown): Record<string, unknown>;
  /** The v3 body fragment of a canonical value (default: the same key, the value as JSON). */
  toV3?(value: unknown): Record<string, unknown>;
  same?(a: unknown, b: unknown): boolean;
  /** Analyses that read the key but ignore it (with the reason, a warning in v3, silent in v2). */
  ignoredBy?: Partial<Record<Analysis, string>>;
  /** The client's input type of the option (TypeScript; word options are derived from `values`). */
  clientType?: string;
  /** A narrower client type for one analysis, with the comment that says why. */
  clientTypeFor?: Partial<Record<Analysis, { type: string; comment: string }>>;
  /** The comment on the client's input field. */
  clientDoc?: string;
  /** docs/api.md section 4: the v2 name, the values, a default the engine does not state, notes on the analyses. */
  doc: { v2: string; values: string; default?: string; analyses?: string };
}

const enumSpelling = (key: string, name: EnumName, v2Body = false): Spelling => ({ key, v2Body, read: (v) => ({ value: readEnum(name, key, v) }) });

const boolSpelling = (key: string, whenTrue: string, whenFalse: string): Spelling => ({
  key,
  v2Body: true,
  read: (v) => ({ value: readBool(key, v) ? whenTrue : whenFalse }),
});

const integerSpelling = (key: string, min: number, v2Body = false): Spelling => ({
  key,
  v2Body,
  read: (v) => {
    if (typeof v !== "number" || !Number.isInteger(v) || v < min) {
      throw new InvalidInputError(`options.${key}`, `an integer >= ${min}`, `got ${describe(v)}`);
    }
    return { value: v };
  },
});

const passSpelling = (key: string, v2Body = false): Spelling => ({ key, v2Body, read: (v) => ({ value: v }) });

/** Thresholds are read together by readThresholds (threshold, or threshold_range with stepsize). */
const thresholdSpelling = (key: string): Spelling => ({ key, v2Body: true, read: (v) => ({ value: v }) });

const ALL: readonly Analysis[] = ["psr", "maxfit", "grid"];
const PSR_MAXFIT: readonly Analysis[] = ["psr", "maxfit"];
const SEARCH: readonly Analysis[] = ["maxfit", "grid"];
const GRID: readonly Analysis[] = ["grid"];

const V2_SCALE: Record<string, string> = { response: "default", logistic: "logistic" };
const V2_MULTIPLIER: Record<string, string> = { K: "K", identity: "1", log: "log" };

export const OPTION_TABLE: readonly OptionRow[] = [
  {
    name: "threshold",
    clientDoc: "One threshold or several (per-cent of the censor's range by default, see censor_unit).",
    analyses: ALL,
    spellings: [thresholdSpelling("threshold"), thresholdSpelling("threshold_range"), thresholdSpelling("stepsize")],
    clientType: "number | number[]",
    doc: {
      v2: "`threshold`; legacy `threshold_range` + `stepsize`",
      values:
        "a number or a list. `threshold_range` [min, max] with `stepsize` expands to min, min+step, ..., max, and is used only when `threshold` is absent",
    },
  },
  {
    name: "censor_type",
    clientTypeFor: { psr: { type: '"relevance" | "similarity"', comment: "PSR evaluates one censor: `both` is refused." } },
    analyses: ALL,
    values: "censor_type",
    spellings: [
      enumSpelling("censor_type", "censor_type"),
      {
        key: "eval_type",
        v2Body: true,
        read: (v, key, analysis) => {
          const value = readEnum("censor_type", key, v);
          if (analysis === "psr" && value === "both") {
            return {
              value: "relevance",
              weak: true,
              warning: {
                code: "adjusted_option",
                key,
                reason:
                  'eval_type "both" is not a psr censor (psr evaluates one); computed with censor_type "relevance", the psr default, unless censor_type is given',
              },
            };
          }
          return { value };
        },
      },
    ],
    toV2: (v) => ({ eval_type: v }),
    doc: {
      v2: "`eval_type`",
      values: "`relevance`, `similarity`, `both` (alias `all`), the same words",
      analyses:
        'all; `both` is refused for PSR, except that v2 `eval_type: "both"` (the official client\'s default) is computed as `relevance`, with a warning',
    },
  },
  {
    name: "censor_unit",
    analyses: ALL,
    values: "censor_unit",
    spellings: [enumSpelling("censor_unit", "censor_unit"), boolSpelling("is_threshold_percent", "percent", "score")],
    toV2: (v) => ({ is_threshold_percent: v === "percent" }),
    doc: { v2: "`is_threshold_percent`", values: "`percent` ↔ `true`, `score` ↔ `false`" },
  },
  {
    name: "censor_operator",
    analyses: ALL,
    values: "censor_operator",
    // most_eval maps to the inclusive operators: the engine behaviour is >= (docs/methodology.md section 3).
    spellings: [enumSpelling("censor_operator", "censor_operator"), boolSpelling("most_eval", "gte", "lte")],
    toV2: (v) => (v === "gte" || v === "lte" ? { most_eval: v === "gte" } : { censor_operator: v }),
    doc: {
      v2: "`most_eval`",
      values:
        "`gte` ↔ `true`, `lte` ↔ `false`; `gt` and `lt` have no v2 spelling (the client writes `censor_operator`); also `>=`, `greater_than_or_equal_to`, ...",
    },
  },
  {
    name: "prediction_scale",
    clientDoc: "`logistic` for logistic outcomes.",
    analyses: ALL,
    values: "prediction_scale",
    spellings: [enumSpelling("prediction_scale", "prediction_scale"), enumSpelling("_output_scale", "prediction_scale", true)],
    toV2: (v) => ({ _output_scale: Object.hasOwn(V2_SCALE, v as string) ? V2_SCALE[v as string] : v }),
    doc: { v2: "`_output_scale`; the `/binary` endpoints", values: "`response` ↔ `default`, `logistic` ↔ `logistic`" },
  },
  {
    name: "adj_fit_multiplier",
    analyses: ALL,
    values: "adj_fit_multiplier",
    spellings: [enumSpelling("adj_fit_multiplier", "adj_fit_multiplier", true)],
    toV2: (v) => ({ adj_fit_multiplier: Object.hasOwn(V2_MULTIPLIER, v as string) ? V2_MULTIPLIER[v as string] : v }),
    doc: { v2: "`adj_fit_multiplier`", values: '`K` ↔ `"K"`, `identity` ↔ `"1"`, `log` ↔ `"log"` (also `k_multiplier`, `none`, `logarithmic`)' },
  },
  {
    name: "inv_method",
    analyses: ALL,
    values: "inv_method",
    spellings: [enumSpelling("inv_method", "inv_method", true)],
    doc: { v2: "`inv_method`", values: "`gaussian` (`lu`), `cholesky` (`chol`), `pseudoinverse` (`pinv`)" },
  },
  {
    name: "include_linear_regression",
    analyses: ALL,
    spellings: [{ key: "include_linear_regression", read: (v, key) => ({ value: readBool(key, v) }) }],
    clientType: "boolean",
    doc: { v2: "the same", values: "`true` / `false`" },
  },
  {
    name: "missing_moments",
    analyses: PSR_MAXFIT,
    values: "missing_moments",
    spellings: [enumSpelling("missing_moments", "missing_moments", true), boolSpelling("verify_missing_data", "complete", "pairwise")],
    ignoredBy: { grid: "the grid chooses complete rows per combination" },
    toV2: (v) => ({ verify_missing_data: v === "complete" }),
    doc: { v2: "`verify_missing_data`", values: "`pairwise` ↔ `false`, `complete` ↔ `true`", analyses: "PSR, MaxFit (ignored for Grid)" },
  },
  {
    name: "cov_inv",
    clientDoc: "A K x K inverse covariance to use instead of computing one.",
    analyses: PSR_MAXFIT,
    spellings: [{ key: "cov_inv", v2Body: true, read: (v, key) => ({ value: readMatrixFlat(key, v) }) }],
    toV2: (v) => ({ cov_inv: matrixRows(v as ArrayLike<number>) }),
    toV3: (v) => ({ cov_inv: matrixRows(v as ArrayLike<number>) }),
    clientType: "number[][]",
    doc: { v2: "the same", values: "a K x K matrix", default: "computed" },
  },
  {
    name: "objective",
    analyses: SEARCH,
    values: "objective",
    spellings: [enumSpelling("objective", "objective", true)],
    doc: { v2: "the same", values: "`kfit` (`k_fit`), `fit`, `adjusted_fit`" },
  },
  {
    name: "inner_parallel",
    analyses: SEARCH,
    values: "inner_parallel",
    spellings: [
      { key: "inner_parallel", read: (v, key) => ({ value: readInnerParallel(key, v) }) },
      { key: "_inner_parallel", v2Body: true, read: (v, key) => ({ value: readInnerParallel(key, v) }) },
    ],
    toV2: (v) => ({ _inner_parallel: v }),
    doc: { v2: "`_inner_parallel`", values: "`auto` (`true`), `off` (`false`, `0`, `sequential`, `seq`)" },
  },
  {
    name: "min_k",
    clientDoc: "Smallest combination size (`k` in v2).",
    analyses: GRID,
    spellings: [
      integerSpelling("min_k", 1),
      // k = 1 (the v2 client's default) never conflicts with min_k (section 4.3).
      { key: "k", v2Body: true, read: (v, key) => ({ value: integerSpelling(key, 1).read(v, key, "grid").value, weak: v === 1 }) },
    ],
    toV2: (v) => ({ k: v }),
    clientType: "number",
    doc: { v2: "`k`", values: "an integer ≥ 1; `k: 1` (the v2 client's default) never conflicts", default: "1" },
  },
  {
    name: "max_k",
    analyses: GRID,
    spellings: [integerSpelling("max_k", 1)],
    clientType: "number",
    doc: { v2: "(v3 name only)", values: "an integer ≥ 1", default: "K" },
  },
  {
    name: "allowed_k",
    clientDoc: "The only legal sizes; replaces min_k and max_k.",
    analyses: GRID,
    spellings: [{ key: "allowed_k", read: (v) => ({ value: typeof v === "number" ? [v] : v }) }],
    clientType: "number[]",
    doc: { v2: "(v3 name only)", values: "a size or a list of sizes", default: "all sizes" },
  },
  {
    name: "required_attributes",
    clientDoc: "0/1 mask of length K: attributes in every combination. Not with attribute_combi.",
    analyses: GRID,
    spellings: [passSpelling("required_attributes")],
    clientType: "number[]",
    doc: { v2: "(v3 name only)", values: "a 0/1 mask of length K", default: "none" },
  },
  {
    name: "attribute_groups",
    clientDoc: "0/1 rows of length K, disjoint: blocks switched on and off together. Not with attribute_combi.",
    analyses: GRID,
    spellings: [passSpelling("attribute_groups")],
    clientType: "number[][]",
    doc: { v2: "(v3 name only)", values: "0/1 masks of length K", default: "none" },
  },
  {
    name: "attribute_combi",
    clientDoc: "0/1 rows of length K: exactly these combinations.",
    analyses: GRID,
    spellings: [passSpelling("attribute_combi", true)],
    clientType: "number[][]",
    doc: { v2: "the same", values: "0/1 rows of length K", default: "all combinations" },
  },
  {
    name: "max_iter",
    analyses: GRID,
    spellings: [integerSpelling("max_iter", 1, true)],
    clientType: "number",
    doc: { v2: "the same", values: "an integer ≥ 1" },
  },
  {
    name: "seed",
    analyses: GRID,
    spellings: [integerSpelling("seed", 0), integerSpelling("_seed", 0, true)],
    toV2: (v) => ({ _seed: v }),
    clientType: "number",
    doc: { v2: "`_seed`", values: "an integer in [0, 2^32)" },
  },
  {
    name: "retain",
    analyses: GRID,
    spellings: [
      { key: "retain_grid_objects", read: readRetain },
      { key: "retain", read: readRetain },
      { key: "_retain_grid_objects", v2Body: true, read: readRetain },
      { key: "retain_all", read: readRetainAll },
      { key: "_is_retain_all_grid_objects", v2Body: true, read: readRetainAll },
    ],
    same: (a, b) => sameJson([...(a as string[])].sort(), [...(b as string[])].sort()),
    clientType: "boolean | RetainKey[]",
    toV2: (v) => ({ _retain_grid_objects: retainToWire(v as RetainKey[], true) }),
    toV3: (v) => ({ retain_grid_objects: retainToWire(v as RetainKey[], false) }),
    doc: {
      v2: "`_retain_grid_objects`, `_is_retain_all_grid_objects`",
      values:
        '`true` / `"all"`, `false` / `"none"`, or a list of `yhat_cells`, `adjusted_fit_cells`, `n_cells`, `weights_cells`, `k_cells`, `combi_cells`, `ysolo_cells`, `ysolo_distribution`',
      default: "`false`",
    },
  },
];

const ROWS_BY_ANALYSIS: Record<Analysis, readonly OptionRow[]> = {
  psr: OPTION_TABLE.filter((r) => r.analyses.includes("psr")),
  maxfit: OPTION_TABLE.filter((r) => r.analyses.includes("maxfit")),
  grid: OPTION_TABLE.filter((r) => r.analyses.includes("grid")),
};

/** Wire keys (v3 and legacy spellings) each analysis reads. */
export const OPTION_KEYS: Readonly<Record<Analysis, readonly string[]>> = {
  psr: ROWS_BY_ANALYSIS.psr.flatMap((r) => r.spellings.map((s) => s.key)),
  maxfit: ROWS_BY_ANALYSIS.maxfit.flatMap((r) => r.spellings.map((s) => s.key)),
  grid: ROWS_BY_ANALYSIS.grid.flatMap((r) => r.spellings.map((s) => s.key)),
};

/** Every wire key of some analysis. */
export const ANY_OPTION_KEY: ReadonlySet<string> = new Set(OPTION_TABLE.flatMap((r) => r.spellings.map((s) => s.key)));

/**
 * Keys a v2 body carries at its top level (docs/api.md section 3). A v3 body may carry these at
 * its top level too (section 4.6); any other top-level key of a v3 body is ignored with a warning.
 */
export const V2_OPTION_KEYS: readonly string[] = OPTION_TABLE.flatMap((r) => r.spellings.filter((s) => s.v2Body === true).map((s) => s.key));

/** Keys an analysis reads but ignores (Grid and the missing-data keys), with the reason. */
function ignoredReason(analysis: Analysis, key: string): string | undefined {
  const row = OPTION_TABLE.find((r) => r.ignoredBy?.[analysis] !== undefined && r.spellings.some((s) => s.key === key));
  return row?.ignoredBy?.[analysis];
}

/** Engine options the vendor documents but this engine does not implement: ignored with this note. */
const NOT_IMPLEMENTED: Record<string, string> = {
  // docs/methodology.md section 7.5: the adjusted form is not public, so the impacts are always the unadjusted ones ("off").
  adjust_impact_for_missing: "accepted but not implemented by this engine",
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
  const warnings: RequestWarning[] = [];
  const present = new Map<string, unknown>();
  for (const [key, value] of Object.entries(raw ?? {})) {
    checkName("options", key);
    if (value !== null && value !== undefined) present.set(key, value);
  }
  const known = new Set(OPTION_KEYS[analysis]);
  for (const key of [...present.keys()]) {
    if (known.has(key)) continue;
    present.delete(key);
    const ignored = ignoredReason(analysis, key);
    if (ignored !== undefined) {
      if (dialect === "v3") warnings.push({ code: "ignored_option", key, reason: ignored });
    } else if (Object.hasOwn(NOT_IMPLEMENTED, key)) {
      warnings.push({ code: "ignored_option", key, reason: NOT_IMPLEMENTED[key] });
    } else {
      warnings.push({ code: "ignored_option", key, reason: `not a ${analysis} option` });
    }
  }

  const out: Record<string, unknown> = {};
  const threshold = readThresholds(present, warnings);
  if (threshold !== undefined) out.threshold = threshold;

  for (const spec of ROWS_BY_ANALYSIS[analysis]) {
    if (spec.name === "threshold") continue; // read above
    const name = spec.name;
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
  return { options: out as GivenOptionsFor<A>, notes: warnings, warnings: warnings.map(warningText) };
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
function readThresholds(present: Map<string, unknown>, warnings: RequestWarning[]): unknown[] | undefined {
  const range = present.get("threshold_range");
  const step = present.get("stepsize");
  if (present.has("threshold")) {
    if (range !== undefined) warnings.push({ code: "ignored_option", key: "threshold_range", reason: "threshold is given" });
    if (step !== undefined) warnings.push({ code: "ignored_option", key: "stepsize", reason: "threshold is given" });
    return readNumberList("threshold", present.get("threshold"));
  }
  if (range === undefined) {
    if (step !== undefined) warnings.push({ code: "ignored_option", key: "stepsize", reason: "no threshold_range [min, max] to step through" });
    return undefined;
  }
  const list = readNumberList("threshold_range", range);
  if (list.length !== 2 || step === undefined) {
    if (step !== undefined) warnings.push({ code: "ignored_option", key: "stepsize", reason: "threshold_range is an explicit list" });
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
    throw new InvalidInputError(
      `options.${key}`,
      `at most ${MAX_THRESHOLDS} thresholds (the engine calibrates at most ${MAX_THRESHOLDS})`,
      `got ${value.length}`,
    );
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
    throw new InvalidInputError(`options.${key}`, 'true, false, "all", "none", a comma-separated list or a list of retain keys', `got ${describe(value)}`);
  }
  const keys: RetainKey[] = [];
  let warning: RequestWarning | undefined;
  items.forEach((item, i) => {
    const name = typeof item === "string" ? item.trim().toLowerCase() : item;
    if (name === "") return;
    if (name === "xi_solo_cells") {
      warning = { code: "ignored_value", key, value: "xi_solo_cells", reason: "not produced by this engine" };
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

/**
 * Writes canonical options (given or resolved) as a v2 flat body fragment: v2 names where v2 has
 * one (eval_type, is_threshold_percent, most_eval, _output_scale, verify_missing_data, k, _seed,
 * _inner_parallel, _retain_grid_objects), v3 names for the rest (the v2 endpoints accept them,
 * section 4.6). `gt`/`lt` have no v2 spelling (most_eval is inclusive) and are written as
 * censor_operator. Options foreign to `analysis`, and null/undefined values, are left out.
 * `normalizeOptions(analysis, toV2Options(analysis, o), "v2").options` gives `o` back.
 */
export function toV2Options<A extends Analysis>(analysis: A, options: GivenOptionsFor<A>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [row, value] of entries(analysis, options as Record<string, unknown>))
    Object.assign(out, row.toV2 !== undefined ? row.toV2(value) : { [row.name]: jsonCopy(value) });
  return out;
}

/**
 * Writes canonical options as a v3 `options` object (JSON-safe: cov_inv as nested rows, retain as
 * `retain_grid_objects`). `normalizeOptions(analysis, toV3Options(analysis, o), "v3").options`
 * gives `o` back.
 */
export function toV3Options<A extends Analysis>(analysis: A, options: GivenOptionsFor<A>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [row, value] of entries(analysis, options as Record<string, unknown>))
    Object.assign(out, row.toV3 !== undefined ? row.toV3(value) : { [row.name]: jsonCopy(value) });
  return out;
}

function entries(analysis: Analysis, o: Record<string, unknown>): Array<[OptionRow, unknown]> {
  return ROWS_BY_ANALYSIS[analysis].filter((r) => o[r.name] !== undefined && o[r.name] !== null).map((r) => [r, o[r.name]]);
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

/**
 * Longest name (option key, field name) a request may hold; a longer one is refused naming it,
 * before anything is charged (issue 26: a 5 MiB unknown option key was accepted and charged). The
 * service's table of fixed limits (service/limits.ts BODY_LIMITS) lists it.
 */
export const MAX_NAME_CHARS = 128;

/**
 * Refuses a name longer than MAX_NAME_CHARS with an InvalidInputError naming it (quoted short).
 *
 * @example
 * checkName("options", "x".repeat(200)); // throws: options.xxxx...(200 characters): expected a name of at most 128 characters
 */
export function checkName(parent: string, key: string): void {
  if (key.length > MAX_NAME_CHARS) {
    throw new InvalidInputError(
      `${parent === "" ? "" : `${parent}.`}${quoteName(key)}`,
      `a name of at most ${MAX_NAME_CHARS} characters`,
      `this one has ${key.length}`,
    );
  }
}
