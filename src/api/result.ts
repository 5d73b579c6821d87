/**
 * The client's normalised result: one plain, typed structure for the v3 `results` object and the
 * v2 flat result object, close to the engine layout (src/engine/result.ts), for display and
 * notebook code.
 *
 * - `fromV3Results(results)` reads the v3 `results` object (the engine layout of docs/api.md
 *   5.2; pass the envelope's `results`, not the envelope).
 * - `fromV2Result(flat)` reads the v2 flat object of a completed `GET /results` (5.1).
 *
 * The same job read through both gives the same values for every field both carry (v2 has no
 * `thresholds`, `analysis` or `warnings`; v3 has no `most_eval` or `experiment_id`). Undefined
 * numbers are null (NaN and infinities read as null too). Vectors are plain arrays: per-threshold
 * fields have length T (1 for MaxFit and the Grid composite), per-observation fields length N,
 * `weights` and `include` are N x T.
 *
 * v2 shapes are read leniently, because G12 leaves the vendor's nesting open: a vector may come as
 * `[[a, b]]`, `[[a], [b]]`, `[a, b]` or a bare scalar; a scalar as `[[x]]`, `[x]` or `x`;
 * `info_theta` also as the published N x 1 repetition (its first value is taken); `weights` and
 * `include` as N x T or as a flat N-vector. A top-level `null` in v2 means "not filled" (the field
 * is treated as absent), except `yhat`, where null means the job is still running.
 *
 * A malformed body throws `ResultError` whose `field` names the first offending field
 * (`insights.relevance[2]`, `weights[3]`); a v2 body of a running or failed job throws
 * `ResultError` with `reason` `not_finished` or `failed`.
 */
import { z } from "zod";
import type { CensorType } from "../engine/options.js";
import type { Analysis } from "../engine/result.js";
import { fieldFromPath } from "./request.js";
import { brand, RbpBaseError } from "../errors/index.js";
import { lambdaErrorMessage, v2ClientErrorText } from "./v2-status.js";
import { HeldColumn } from "./columns.js";

/** A number that may be undefined (null on the wire). */
export type Num = number | null;

export interface ResultSoloStatistics {
  sigma: Num[];
  skewness: Num[];
  kurtosis: Num[];
  pearson_modality_index: Num[];
  /** v2: `ysolo_bimodality_coefficient`. */
  bimodal_index: Num[];
}

/** How a Grid searched: combinations evaluated, and whether they were sampled (max_iter). */
export interface ResultGridSearch {
  combinations: number;
  /** Combinations the constraints admit. */
  admissible?: number;
  sampled?: boolean;
  /** Cells with too few rows or a singular covariance (zero weight). */
  invalid_cells?: number;
}

/** Grid insights, length K each. */
export interface ResultGridInsights {
  /** Impact on Fit = marginal contribution to conviction (v2 also: contribution_to_conviction, variable_importance). */
  impact_on_fit: Num[];
  /** Impact on Prediction = marginal contribution to prediction (v2 also: contribution_to_prediction, variable_importance_on_yhat). */
  impact_on_prediction: Num[];
  component_contribution_to_prediction?: Num[];
  /** v3 only. */
  variable_weights?: Num[];
}

export interface Result {
  /** v3 only. */
  analysis?: Analysis;
  /** Per threshold (length T; 1 for MaxFit and the Grid composite). */
  yhat: Num[];
  fit: Num[];
  adjusted_fit: Num[];
  agreement: Num[];
  asymmetry: Num[];
  outlier_influence: Num[];
  /** v2: `kfit`. */
  k_fit: Num[];
  /** v3 only: the thresholds (PSR: each column; MaxFit: the winner's; Grid: those evaluated). */
  thresholds?: number[];
  /** PSR: its censor; MaxFit: the winner's; Grid: those evaluated. v2: from `eval_type` ("both" = both). */
  censor_type?: CensorType[];
  /** v2 only: `most_eval` (true for the operators gte/gt). */
  most_eval?: boolean;
  /** N x T. */
  weights: Num[][];
  /** N x T of 0/1; absent for a Grid composite. */
  include?: number[][];
  relevance?: Num[];
  similarity?: Num[];
  info_x?: Num[];
  info_theta?: Num;
  yhat_linear?: Num;
  /** Per threshold; absent for a Grid composite. */
  n?: number[];
  /** Attributes used, per threshold (v2 `K`); a Grid gives one value, its number of attributes. */
  k?: number[];
  r_star?: Num[];
  r_star_percent?: Num[];
  phi?: Num[];
  lambda_sq?: Num[];
  rho?: Num[];
  /** Statistics of the observations' votes (y_solo); v2 carries them for Grid only. */
  solo_statistics?: ResultSoloStatistics;
  grid_insights?: ResultGridInsights;
  /** v3 only, when the service says how a Grid searched. */
  grid_search?: ResultGridSearch;
  /** v2 only. */
  experiment_id?: number;
  /** v3 only. */
  warnings?: string[];
}

export type ResultErrorReason = "malformed" | "not_finished" | "failed";

/** A response that is not a usable result; `field` names where (`body` for the whole object). */
export class ResultError extends RbpBaseError {
  static {
    brand(this, "ResultError");
  }
  override readonly name = "ResultError";
  readonly field: string;
  readonly reason: ResultErrorReason;
  /** v2 failures: the body's status_code and error_code. */
  readonly status_code: number | undefined;
  readonly error_code: number | undefined;

  constructor(message: string, field: string, reason: ResultErrorReason, codes: { status_code?: number; error_code?: number } = {}) {
    super(message, "invalid_result");
    this.field = field;
    this.reason = reason;
    this.status_code = codes.status_code;
    this.error_code = codes.error_code;
  }
}

// ---------------------------------------------------------------------------------------------
// Schemas (internal: no zod type crosses the exported surface)

const NUM = "a number or null";
const cell = z
  .union([z.number(), z.nan(), z.null()], { errorMap: () => ({ message: `expected ${NUM}` }) })
  .transform((v): Num => (v === null || !Number.isFinite(v) ? null : v));
const count = z.number({ invalid_type_error: "expected a number", required_error: "missing (expected a number)" });
const flag = z
  .union([z.literal(0), z.literal(1), z.boolean()], { errorMap: () => ({ message: "expected 0 or 1 (or a boolean)" }) })
  .transform((v) => Number(v));

function arrayOf<T extends z.ZodTypeAny>(item: T, what: string) {
  return z.array(item, { invalid_type_error: `expected ${what}`, required_error: `missing (expected ${what})` });
}
const vector = (what = `an array of numbers or nulls`) => arrayOf(cell, what);
const rectangular = <T>(rows: T[][], ctx: z.RefinementCtx): void => {
  const width = rows.length > 0 ? rows[0].length : 0;
  rows.forEach((r, i) => {
    if (r.length !== width)
      ctx.addIssue({ code: z.ZodIssueCode.custom, path: [i], message: `expected a row of ${width} values like the first row, got ${r.length}` });
  });
};
const matrixOf = <T extends z.ZodTypeAny>(item: T, what: string) =>
  arrayOf(arrayOf(item, `a row of ${what}`), `an N x T matrix of ${what}`).superRefine(rectangular);
const censor = z.enum(["relevance", "similarity"], { errorMap: () => ({ message: 'expected "relevance" or "similarity"' }) });

const soloStatisticsV3 = z.object({
  sigma: vector(),
  skewness: vector(),
  kurtosis: vector(),
  pearson_modality_index: vector(),
  bimodal_index: vector(),
});

const V3Schema = z.object(
  {
    analysis: z.enum(["psr", "maxfit", "grid"], { errorMap: () => ({ message: "expected psr, maxfit or grid" }) }).optional(),
    n_variables: count.optional(),
    thresholds: arrayOf(count, "an array of numbers").optional(),
    censor_type: arrayOf(censor, "an array of censor names").optional(),
    yhat: vector(),
    fit: vector(),
    adjusted_fit: vector(),
    agreement: vector(),
    asymmetry: vector(),
    outlier_influence: vector(),
    k_fit: vector(),
    yhat_linear: vector().optional(),
    auxiliary: z
      .object(
        {
          phi: vector(),
          lambda_sq: vector(),
          r_star: vector(),
          r_star_percent: vector(),
          n: arrayOf(count, "an array of counts"),
          k: arrayOf(count, "an array of counts"),
          rho: vector(),
        },
        { invalid_type_error: "expected an object" },
      )
      .optional(),
    insights: z.object(
      {
        relevance: vector(),
        similarity: vector(),
        info_x: vector(),
        info_theta: z.union([cell, arrayOf(cell, "a number").min(1, "expected one number")], {
          errorMap: () => ({ message: "expected a number or [number]" }),
        }),
      },
      { invalid_type_error: "expected an object", required_error: "missing (expected an object)" },
    ),
    prediction_weights: z.object(
      { weights: matrixOf(cell, "numbers or nulls"), include: matrixOf(flag, "0/1").optional() },
      { invalid_type_error: "expected an object", required_error: "missing (expected an object)" },
    ),
    solo_distribution: z.object({ statistics: soloStatisticsV3 }, { invalid_type_error: "expected an object" }).optional(),
    grid_insights: z
      .object(
        {
          variable_weights: vector().optional(),
          marginal_contribution_to_conviction: vector(),
          marginal_contribution_to_prediction: vector(),
          component_contribution_to_prediction: vector().optional(),
          impact_on_fit: vector().optional(),
          impact_on_prediction: vector().optional(),
        },
        { invalid_type_error: "expected an object" },
      )
      .optional(),
    grid_search: z
      .object(
        { combinations: count, admissible: count.optional(), sampled: z.boolean().optional(), invalid_cells: count.optional() },
        { invalid_type_error: "expected an object" },
      )
      .optional(),
    warnings: arrayOf(z.string({ invalid_type_error: "expected a string" }), "an array of strings").optional(),
  },
  { invalid_type_error: "expected the v3 results object" },
);

// v2 shape adapters (G12: the vendor's nesting is not certain, so read every form).
function asVector(v: unknown): unknown {
  if (v === null || typeof v === "number") return [v];
  if (Array.isArray(v) && v.length > 0 && v.every(Array.isArray)) {
    const rows = v as unknown[][];
    if (rows.length === 1) return rows[0];
    if (rows.every((r) => r.length === 1)) return rows.map((r) => r[0]);
  }
  return v;
}
function asMatrix(v: unknown): unknown {
  if (Array.isArray(v) && v.length > 0 && v.every((e) => !Array.isArray(e))) return v.map((e) => [e]);
  return v;
}
function asScalar(v: unknown): unknown {
  let x = v;
  for (let depth = 0; depth < 2 && Array.isArray(x) && x.length === 1; depth++) x = x[0];
  return x;
}
const VECTOR = "a vector of numbers or nulls ([[a, b, ...]], [[a], [b], ...] or [a, b, ...])";
const v2Vector = () =>
  z.preprocess(
    (v, ctx) => {
      const vec = asVector(v);
      if (Array.isArray(vec) && vec.some(Array.isArray)) {
        ctx.addIssue({ code: z.ZodIssueCode.custom, message: `expected ${VECTOR}, got ${describe(v)}` });
      }
      return vec;
    },
    arrayOf(cell, VECTOR),
  );
const v2Counts = z.preprocess(
  (v, ctx) => {
    const vec = asVector(v);
    if (Array.isArray(vec) && vec.some(Array.isArray)) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: `expected a vector of numbers, got ${describe(v)}` });
    }
    return vec;
  },
  arrayOf(count, "a vector of numbers"),
);
const v2Scalar = z.preprocess(asScalar, cell);
const v2Matrix = <T extends z.ZodTypeAny>(item: T, what: string) => z.preprocess(asMatrix, matrixOf(item, what));
/** info_theta: 1 x 1 (G12) or the published N x 1 repetition; the first value. */
const v2InfoTheta = z.preprocess((v) => {
  const vec = asVector(v);
  return Array.isArray(vec) && vec.length > 0 && !Array.isArray(vec[0]) ? vec[0] : vec;
}, cell);
const v2EvalType = z.preprocess(
  (v) => {
    const s = asScalar(v);
    return typeof s === "string" ? s.toLowerCase() : s;
  },
  z.enum(["relevance", "similarity", "both"], { errorMap: () => ({ message: 'expected "relevance", "similarity" or "both"' }) }),
);
const v2Bool = z.preprocess(asScalar, z.boolean({ invalid_type_error: "expected true or false", required_error: "missing" }));
const v2Int = z.preprocess(asScalar, z.number({ invalid_type_error: "expected an integer" }).int("expected an integer"));

const V2Schema = z.object({
  yhat: v2Vector(),
  fit: v2Vector(),
  adjusted_fit: v2Vector(),
  kfit: v2Vector(),
  agreement: v2Vector(),
  asymmetry: v2Vector(),
  outlier_influence: v2Vector(),
  weights: v2Matrix(cell, "numbers or nulls"),
  include: v2Matrix(flag, "0/1").optional(),
  relevance: v2Vector().optional(),
  similarity: v2Vector().optional(),
  info_x: v2Vector().optional(),
  info_theta: v2InfoTheta.optional(),
  K: v2Counts.optional(),
  n: v2Counts.optional(),
  phi: v2Vector().optional(),
  lambda_sq: v2Vector().optional(),
  rho: v2Vector().optional(),
  r_star: v2Vector().optional(),
  r_star_percent: v2Vector().optional(),
  eval_type: v2EvalType.optional(),
  most_eval: v2Bool.optional(),
  yhat_linear: v2Scalar.optional(),
  marginal_contribution_to_conviction: v2Vector().optional(),
  contribution_to_conviction: v2Vector().optional(),
  variable_importance: v2Vector().optional(),
  marginal_contribution_to_prediction: v2Vector().optional(),
  contribution_to_prediction: v2Vector().optional(),
  variable_importance_on_yhat: v2Vector().optional(),
  component_contribution_to_prediction: v2Vector().optional(),
  ysolo_sigma: v2Scalar.optional(),
  ysolo_skewness: v2Scalar.optional(),
  ysolo_kurtosis: v2Scalar.optional(),
  ysolo_pearson_modality_index: v2Scalar.optional(),
  ysolo_bimodality_coefficient: v2Scalar.optional(),
  experiment_id: v2Int.optional(),
});

const YSOLO = [
  ["ysolo_sigma", "sigma"],
  ["ysolo_skewness", "skewness"],
  ["ysolo_kurtosis", "kurtosis"],
  ["ysolo_pearson_modality_index", "pearson_modality_index"],
  ["ysolo_bimodality_coefficient", "bimodal_index"],
] as const;

// ---------------------------------------------------------------------------------------------

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function describe(v: unknown): string {
  if (v === undefined) return "nothing";
  if (v === null) return "null";
  if (Array.isArray(v)) {
    if (v.length > 0 && v.every(Array.isArray)) return `a ${v.length} x ${(v[0] as unknown[]).length} array`;
    return `an array of ${v.length}`;
  }
  if (typeof v === "string") return `the string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...` : v)}`;
  if (typeof v === "object") return "an object";
  return `${typeof v} ${String(v)}`;
}

function at(value: unknown, path: ReadonlyArray<string | number>): unknown {
  let v = value;
  for (const p of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<string | number, unknown>)[p];
  }
  return v;
}

function parseWith<S extends z.ZodTypeAny>(schema: S, value: unknown, source: "v2" | "v3"): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = fieldFromPath(issue.path);
  const absent = issue.code === "invalid_type" && issue.received === "undefined";
  const message = absent && !issue.message.startsWith("missing") ? "missing" : issue.message;
  const got = issue.code === "custom" || message.startsWith("missing") ? "" : `, got ${describe(at(value, issue.path))}`;
  throw new ResultError(`${source} result: ${field}: ${message}${got}`, field, "malformed");
}

const CENSORS_OF = { relevance: ["relevance"], similarity: ["similarity"], both: ["relevance", "similarity"] } as const;

/** Normalises a v3 `results` object (the engine layout, as `toJson` writes it). */
export function fromV3Results(results: unknown): Result {
  if (!isObject(results)) throw new ResultError(`v3 result: body: expected the results object, got ${describe(results)}`, "body", "malformed");
  return normalizeV3(parseWith(V3Schema, results, "v3"));
}

/**
 * `fromV3Results` without the schema check, for a `results` object this package's own service
 * wrote in this process (the embedded service's in-process lane): the same Result, field for field
 * (a test compares the two on real results), for a fraction of the time. Anything else, and
 * everything read from a network, goes through `fromV3Results`.
 *
 * @example
 * const result = fromOwnV3Results(JSON.parse(json)); // json: what the embedded service stored
 */
export function fromOwnV3Results(results: unknown): Result {
  return fromOwn(results, (rows) => rows.map((row) => row.map(Number)));
}

/**
 * `fromOwnV3Results` for a result read with its long columns held (`HeldColumn`: the embedded
 * service's `readDecodedColumns`), for a reader that holds results compactly (the notebook's
 * Prediction): the same members in the same order, each held column in the place of the plain
 * array `fromOwnV3Results` would give, holding the same numbers (NaN for null). Such a result
 * is the reader's own: it must not reach other code.
 *
 * @example
 * const compact = CompactResult.of(fromOwnV3Columns(readDecodedColumns(decoded)));
 */
export function fromOwnV3Columns(results: unknown): Result {
  return fromOwn(results, (include) => (include instanceof HeldColumn ? includeColumn(include) : include.map((row) => row.map(Number))));
}

/** A held include column as `row.map(Number)` reads it: null (NaN) is 0. */
function includeColumn(column: HeldColumn): HeldColumn {
  const { values } = column;
  let i = 0;
  while (i < values.length && values[i] === values[i]) i++;
  if (i === values.length) return column;
  const copy = Float64Array.from(values, (v) => (v === v ? v : 0));
  return new HeldColumn(copy, column.width, column.rows);
}

function fromOwn(results: unknown, readInclude: (include: Array<Array<number | boolean>>) => unknown): Result {
  if (!isObject(results)) throw new ResultError(`v3 result: body: expected the results object, got ${describe(results)}`, "body", "malformed");
  const r = results as unknown as V3Parsed;
  const include = r.prediction_weights.include as unknown as Array<Array<number | boolean>> | undefined;
  const stats = r.solo_distribution?.statistics;
  return normalizeV3({
    ...r,
    prediction_weights: { weights: r.prediction_weights.weights, ...(include !== undefined ? { include: readInclude(include) as number[][] } : {}) },
    ...(stats !== undefined
      ? {
          solo_distribution: {
            statistics: {
              sigma: stats.sigma,
              skewness: stats.skewness,
              kurtosis: stats.kurtosis,
              pearson_modality_index: stats.pearson_modality_index,
              bimodal_index: stats.bimodal_index,
            },
          },
        }
      : {}),
  });
}

type V3Parsed = z.output<typeof V3Schema>;

function normalizeV3(r: V3Parsed): Result {
  // Assigned one by one in this order (the Result's keys' order): a literal that starts with a
  // spread (`...(analysis ? { analysis } : {})`) defined every key after it on V8's slow path, and
  // left an object whose later keys were slow too: 11.5 us a call hot (a Grid's result), 0.6 this way.
  const out = {} as Result;
  if (r.analysis !== undefined) out.analysis = r.analysis;
  out.yhat = r.yhat;
  out.fit = r.fit;
  out.adjusted_fit = r.adjusted_fit;
  out.agreement = r.agreement;
  out.asymmetry = r.asymmetry;
  out.outlier_influence = r.outlier_influence;
  out.k_fit = r.k_fit;
  out.weights = r.prediction_weights.weights;
  if (r.thresholds !== undefined) out.thresholds = r.thresholds;
  if (r.censor_type !== undefined) out.censor_type = r.censor_type;
  if (r.prediction_weights.include !== undefined) out.include = r.prediction_weights.include;
  out.relevance = r.insights.relevance;
  out.similarity = r.insights.similarity;
  out.info_x = r.insights.info_x;
  const theta = r.insights.info_theta;
  out.info_theta = Array.isArray(theta) ? theta[0] : theta;
  if (r.yhat_linear !== undefined && r.yhat_linear.length > 0) out.yhat_linear = r.yhat_linear[0];
  const aux = r.auxiliary;
  if (aux !== undefined) {
    out.n = aux.n;
    out.k = aux.k;
    out.r_star = aux.r_star;
    out.r_star_percent = aux.r_star_percent;
    out.phi = aux.phi;
    out.lambda_sq = aux.lambda_sq;
    out.rho = aux.rho;
  } else if (r.analysis === "grid" && r.n_variables !== undefined) {
    // A Grid composite has no auxiliary block; its K is the number of attributes (as v2 `K`).
    out.k = [r.n_variables];
  }
  if (r.solo_distribution !== undefined) out.solo_statistics = { ...r.solo_distribution.statistics };
  const gi = r.grid_insights;
  if (gi !== undefined) {
    out.grid_insights = {
      impact_on_fit: gi.impact_on_fit ?? gi.marginal_contribution_to_conviction,
      impact_on_prediction: gi.impact_on_prediction ?? gi.marginal_contribution_to_prediction,
      ...(gi.component_contribution_to_prediction !== undefined ? { component_contribution_to_prediction: gi.component_contribution_to_prediction } : {}),
      ...(gi.variable_weights !== undefined ? { variable_weights: gi.variable_weights } : {}),
    };
  }
  if (r.grid_search !== undefined) {
    const { combinations, admissible, sampled, invalid_cells } = r.grid_search;
    out.grid_search = {
      combinations,
      ...(admissible !== undefined ? { admissible } : {}),
      ...(sampled !== undefined ? { sampled } : {}),
      ...(invalid_cells !== undefined ? { invalid_cells } : {}),
    };
  }
  if (r.warnings !== undefined) out.warnings = r.warnings;
  return out;
}

/**
 * Normalises the v2 flat object of a completed job. Throws ResultError with reason `failed` for a
 * failed body (error_code > 0; the message is the one the official client would show), and
 * `not_finished` for a running body (no yhat or yhat null).
 */
export function fromV2Result(flat: unknown): Result {
  if (!isObject(flat)) throw new ResultError(`v2 result: body: expected the flat result object, got ${describe(flat)}`, "body", "malformed");
  const errorCode = flat.error_code;
  const statusCode = typeof flat.status_code === "number" ? flat.status_code : undefined;
  if (errorCode !== undefined && errorCode !== null && typeof errorCode !== "number") {
    throw new ResultError(`v2 result: error_code: expected an integer, got ${describe(errorCode)}`, "error_code", "malformed");
  }
  if (typeof errorCode === "number" && errorCode > 0) {
    const known = lambdaErrorMessage(errorCode) !== undefined;
    const text = known ? v2ClientErrorText(statusCode ?? 0, errorCode) : `error_code ${errorCode}`;
    const detail = typeof flat.message === "string" && flat.message !== "" ? `: ${flat.message}` : "";
    throw new ResultError(`v2 job failed (${text})${detail}`, "error_code", "failed", { status_code: statusCode, error_code: errorCode });
  }
  if (flat.yhat === undefined || flat.yhat === null) {
    throw new ResultError("v2 job not finished: the body has no yhat (poll again)", "yhat", "not_finished", {
      status_code: statusCode,
      error_code: typeof errorCode === "number" ? errorCode : undefined,
    });
  }
  // A top-level null is a field not filled for this job: read it as absent.
  const present: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(flat)) if (value !== null) present[key] = value;
  const r = parseWith(V2Schema, present, "v2");

  const out: Result = {
    yhat: r.yhat,
    fit: r.fit,
    adjusted_fit: r.adjusted_fit,
    agreement: r.agreement,
    asymmetry: r.asymmetry,
    outlier_influence: r.outlier_influence,
    k_fit: r.kfit,
    weights: r.weights,
  };
  if (r.eval_type !== undefined) out.censor_type = [...CENSORS_OF[r.eval_type]];
  if (r.most_eval !== undefined) out.most_eval = r.most_eval;
  if (r.include !== undefined) out.include = r.include;
  if (r.relevance !== undefined) out.relevance = r.relevance;
  if (r.similarity !== undefined) out.similarity = r.similarity;
  if (r.info_x !== undefined) out.info_x = r.info_x;
  if (r.info_theta !== undefined) out.info_theta = r.info_theta;
  if (r.yhat_linear !== undefined) out.yhat_linear = r.yhat_linear;
  if (r.n !== undefined) out.n = r.n;
  if (r.K !== undefined) out.k = r.K;
  if (r.r_star !== undefined) out.r_star = r.r_star;
  if (r.r_star_percent !== undefined) out.r_star_percent = r.r_star_percent;
  if (r.phi !== undefined) out.phi = r.phi;
  if (r.lambda_sq !== undefined) out.lambda_sq = r.lambda_sq;
  if (r.rho !== undefined) out.rho = r.rho;

  const given = YSOLO.filter(([key]) => r[key] !== undefined);
  if (given.length > 0) {
    const missing = YSOLO.find(([key]) => r[key] === undefined);
    if (missing !== undefined) {
      throw new ResultError(`v2 result: ${missing[0]}: missing (the other ysolo_* statistics are present)`, missing[0], "malformed");
    }
    const stat = (key: (typeof YSOLO)[number][0]): Num[] => [r[key] as Num];
    out.solo_statistics = {
      sigma: stat("ysolo_sigma"),
      skewness: stat("ysolo_skewness"),
      kurtosis: stat("ysolo_kurtosis"),
      pearson_modality_index: stat("ysolo_pearson_modality_index"),
      bimodal_index: stat("ysolo_bimodality_coefficient"),
    };
  }
  // The new names first, then the deprecated aliases (the same measures).
  const impactOnFit = r.marginal_contribution_to_conviction ?? r.contribution_to_conviction ?? r.variable_importance;
  const impactOnPrediction = r.marginal_contribution_to_prediction ?? r.contribution_to_prediction ?? r.variable_importance_on_yhat;
  if (impactOnFit !== undefined || impactOnPrediction !== undefined) {
    if (impactOnFit === undefined) {
      throw new ResultError(
        "v2 result: marginal_contribution_to_conviction: missing (the prediction contributions are present)",
        "marginal_contribution_to_conviction",
        "malformed",
      );
    }
    if (impactOnPrediction === undefined) {
      throw new ResultError(
        "v2 result: marginal_contribution_to_prediction: missing (the conviction contributions are present)",
        "marginal_contribution_to_prediction",
        "malformed",
      );
    }
    out.grid_insights = {
      impact_on_fit: impactOnFit,
      impact_on_prediction: impactOnPrediction,
      ...(r.component_contribution_to_prediction !== undefined ? { component_contribution_to_prediction: r.component_contribution_to_prediction } : {}),
    };
  }
  if (r.experiment_id !== undefined) out.experiment_id = r.experiment_id;
  return out;
}
