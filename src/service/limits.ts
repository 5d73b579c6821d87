/**
 * The service's limits on the work one request may ask for (docs/limits.md), checked at POST
 * before anything is charged (preflight.ts), each refused with a 422 naming the option at fault
 * and the limit (`error: "limit_exceeded"`, `limit`, `limit_name`, `requested`):
 *
 * | limit | counts | default | `rbp serve` flag |
 * | --- | --- | --- | --- |
 * | maxAttributes | K, the columns of X | 100 | --max-attributes |
 * | maxThetaRows | theta rows of one POST (jobs of one experiment) | 10,000 | --max-theta-rows |
 * | maxCombinations | Grid combinations evaluated: attribute_combi rows, else min(max_iter, the count K, min_k, max_k, allowed_k, required_attributes and attribute_groups admit) | 100,000 | --max-combinations |
 * | maxRetainedValues | numbers the retain options keep (yhat/adjusted_fit/n cells Q x T per censor, weights_cells N x T x Q per censor, ysolo_cells N x Q, combi_cells Q x K, k_cells Q) | 5,000,000 | --max-retained-values |
 * | maxWork | N x cells of one job (cells: combinations x thresholds x censors; PSR and MaxFit have one combination) | 1,000,000,000 | --max-work |
 *
 * The defaults keep one job within about a minute of one core and a few hundred MB on a laptop
 * (about 15 to 70 ns per row and cell, measured on a loaded 2-core machine); a team's server
 * raises them with the flags. Each unit counts what one job will do, so the check needs no
 * computation beyond counting (the Grid planner, asked for one combination, gives the count).
 */
import { planCombinations } from "../engine/combinations.js";
import { InvalidInputError } from "../engine/errors.js";
import type { ParsedRequest } from "../api/request.js";
import { MAX_NAME_CHARS, resolveOptions, type GivenOptionsFor } from "../api/options.js";
import type { Analysis } from "../api/options.js";
import type { Dataset } from "../engine/data.js";

/** Bytes in a mebibyte, for sizes in settings and messages. */
export const MiB = 1024 * 1024;

export interface ServiceLimits {
  /** Most attribute columns (K) of X. */
  maxAttributes: number;
  /** Most theta rows of one POST (each row is a job; the rows of one experiment). */
  maxThetaRows: number;
  /** Most Grid combinations one job evaluates. */
  maxCombinations: number;
  /** Most numbers one job's retained cell arrays hold. */
  maxRetainedValues: number;
  /** Most rows x cells one job computes. */
  maxWork: number;
}

export const DEFAULT_LIMITS: ServiceLimits = {
  maxAttributes: 100,
  maxThetaRows: 10_000,
  maxCombinations: 100_000,
  maxRetainedValues: 5_000_000,
  maxWork: 1_000_000_000,
};

/**
 * Fixed bounds on the shape of any JSON body a client sends (docs/limits.md, "Fixed limits"),
 * checked as soon as it is parsed (http.ts `checkJsonShape`), before validation and before
 * anything is charged: a 422 (v2: 400) naming the field and the limit.
 */
export interface BodyLimits {
  /** Longest name: any key of a JSON object (option keys, field names, keys inside option values). */
  maxNameChars: number;
  /** Most keys of one JSON object (the top level, `options`, any object inside). */
  maxObjectKeys: number;
  /** Deepest nesting of arrays and objects (a POST body needs 4). */
  maxJsonDepth: number;
}

export const BODY_LIMITS: Readonly<BodyLimits> = {
  maxNameChars: MAX_NAME_CHARS,
  maxObjectKeys: 256,
  maxJsonDepth: 32,
};

/** The `rbp serve` flag that raises each limit (for messages and `--help`). */
export const LIMIT_FLAGS: Readonly<Record<keyof ServiceLimits, string>> = {
  maxAttributes: "--max-attributes",
  maxThetaRows: "--max-theta-rows",
  maxCombinations: "--max-combinations",
  maxRetainedValues: "--max-retained-values",
  maxWork: "--max-work",
};

/** A request beyond one of the service's limits: an input error naming the option, with the limit (code `limit_exceeded`). */
export class LimitExceededError extends InvalidInputError {
  override readonly code = "limit_exceeded";
  readonly limitName: keyof ServiceLimits;
  readonly limit: number;
  readonly requested: number;

  constructor(field: string, limitName: keyof ServiceLimits, limit: number, requested: number, what: string) {
    super(
      field,
      `at most ${fmt(limit)} ${what} (this service's limit ${limitName}; its operator can raise it with rbp serve ${LIMIT_FLAGS[limitName]})`,
      `this request asks for ${fmt(requested)}`,
    );
    this.limitName = limitName;
    this.limit = limit;
    this.requested = requested;
  }
}

/** What one job of the request will compute, by the units the limits count. */
export interface WorkEstimate {
  attributes: number;
  thetaRows: number;
  /** Combinations evaluated (1 for PSR and MaxFit). */
  combinations: number;
  thresholds: number;
  censors: number;
  /** combinations x thresholds x censors. */
  cells: number;
  /** rows x cells. */
  work: number;
  retainedValues: number;
}

/**
 * Counts what one job of a parsed request computes (no computation: the Grid planner is asked for
 * a single combination, O(K^2)). Throws the planner's InvalidInputError when the Grid constraints
 * admit no combination.
 *
 * @example
 * estimateWork(parseRequest("grid", body, "v3")).cells; // combinations x thresholds x censors
 */
export function estimateWork(request: ParsedRequest): WorkEstimate {
  const N = request.data.rows;
  const K = request.data.cols;
  const o = request.resolved;
  const thresholds = o.threshold.length;
  const censors = o.censor_type === "both" ? 2 : 1;
  let combinations = 1;
  let retainedValues = 0;
  if (request.analysis === "grid") {
    const g = request.resolved as ParsedRequest["resolved"] & { attribute_combi?: unknown[]; max_iter: number; retain: string[] };
    const plan = planCombinations(K, { ...(request.resolved as Parameters<typeof planCombinations>[1]), max_iter: 1 });
    combinations = g.attribute_combi !== undefined ? g.attribute_combi.length : Math.min(g.max_iter, plan.admissible);
    const Q = combinations;
    for (const key of new Set(g.retain)) {
      if (key === "k_cells") retainedValues += Q;
      else if (key === "combi_cells") retainedValues += Q * K;
      else if (key === "ysolo_cells") retainedValues += N * Q;
      else if (key === "yhat_cells" || key === "adjusted_fit_cells" || key === "n_cells") retainedValues += Q * thresholds * censors;
      else if (key === "weights_cells") retainedValues += N * thresholds * Q * censors;
    }
  }
  const cells = combinations * thresholds * censors;
  return { attributes: K, thetaRows: request.thetas.length, combinations, thresholds, censors, cells, work: N * cells, retainedValues };
}

/**
 * Rows x cells of one job of a stored request (its canonical options resolved again): what the
 * service schedules by (core.ts: an experiment's rows per task).
 *
 * @example
 * jobWork({ analysis: "grid", data, thetas, options: {} }); // N x combinations x 4 thresholds x 2 censors
 */
export function jobWork(input: { analysis: Analysis; data: Dataset; thetas: Float64Array[]; options: Record<string, unknown> }): number {
  const given = input.options as GivenOptionsFor<Analysis>;
  const resolved = resolveOptions(input.analysis, given, input.data.cols);
  return estimateWork({ ...input, options: given, resolved, accessId: "", thetaGiven: true, notes: [], warnings: [] } as ParsedRequest).work;
}

/**
 * Refuses a request beyond `limits` with a LimitExceededError naming the option that decides the
 * count: `X` (attributes), `theta` (rows), `options.attribute_combi` or `options.max_iter`
 * (combinations; `options.min_k`... when max_iter is the default and the constraints admit more),
 * `options.retain_grid_objects` (retained values), and for the work the option most to blame.
 *
 * @example
 * checkLimits(request, { ...DEFAULT_LIMITS, maxCombinations: 1000 });
 */
export function checkLimits(request: ParsedRequest, limits: ServiceLimits): WorkEstimate {
  const K = request.data.cols;
  if (K > limits.maxAttributes) throw new LimitExceededError("X", "maxAttributes", limits.maxAttributes, K, "attribute columns");
  const M = request.thetas.length;
  if (M > limits.maxThetaRows) throw new LimitExceededError("theta", "maxThetaRows", limits.maxThetaRows, M, "theta rows (jobs) in one request");
  const estimate = estimateWork(request);
  const given = request.options as Record<string, unknown>;
  if (estimate.combinations > limits.maxCombinations) {
    const field =
      given.attribute_combi !== undefined
        ? "options.attribute_combi"
        : given.max_iter !== undefined
          ? "options.max_iter"
          : (["allowed_k", "max_k", "min_k"].map((k) => `options.${k}`).find((f) => given[f.slice(8)] !== undefined) ?? "options.max_iter");
    throw new LimitExceededError(field, "maxCombinations", limits.maxCombinations, estimate.combinations, "Grid combinations per job");
  }
  if (estimate.retainedValues > limits.maxRetainedValues) {
    throw new LimitExceededError(
      "options.retain_grid_objects",
      "maxRetainedValues",
      limits.maxRetainedValues,
      estimate.retainedValues,
      "retained cell values per job",
    );
  }
  if (estimate.work > limits.maxWork) {
    const field = estimate.combinations > 1 ? (given.max_iter !== undefined ? "options.max_iter" : "options.threshold") : "options.threshold";
    throw new LimitExceededError(
      field,
      "maxWork",
      limits.maxWork,
      estimate.work,
      `rows x cells per job (here ${fmt(request.data.rows)} rows x ${fmt(estimate.combinations)} combinations x ${estimate.thresholds} thresholds x ${estimate.censors} censors)`,
    );
  }
  return estimate;
}

function fmt(n: number): string {
  return Number.isFinite(n) ? n.toLocaleString("en-US") : "more than 2^53";
}
