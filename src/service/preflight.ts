/**
 * Checks of a parsed request that the request parser leaves to the engine but that need no
 * computation, run before a POST is paid for, so that the caller gets a 422 naming the options
 * instead of a paid-for job that fails at once (docs/api.md section 2.1: "each forbidden option
 * combination" is an input error; only what is found during the computation fails the job).
 * Everything the engine refuses for the request's own sake is refused here (issue 11, item 5):
 *
 * - Grid: size and attribute constraints (`min_k`, `max_k`, `allowed_k`, `required_attributes`,
 *   `attribute_groups`) that admit no attribute combination at all, e.g. five required attributes
 *   with `max_k` 2. The engine's own planner decides, asked for a single combination (O(K^2)).
 * - `prediction_scale: "logistic"` with a y that is not 0/1 or lacks one class, by the engine's
 *   rule (psr.ts `checkBinaryOutcome`): every row for a Grid; for PSR and MaxFit the rows with
 *   every attribute present (the rows the model uses).
 * - PSR and MaxFit: no more rows with every attribute present than attributes (model.ts needs
 *   N > K complete rows).
 * - The service's limits on work (limits.ts, docs/limits.md).
 * (The engine's 255-threshold cap is checked by the option parser, api/options.ts.)
 *
 * Throws the engine's InvalidInputError (LimitExceededError for a limit); the route turns it into its 4xx.
 * Answers the request's work estimate (limits.ts `estimateWork`).
 */
import type { ParsedRequest } from "../api/request.js";
import { planCombinations } from "../engine/combinations.js";
import { invalid } from "../engine/errors.js";
import { checkLimits, DEFAULT_LIMITS, type ServiceLimits, type WorkEstimate } from "./limits.js";

export function checkBeforeQueue(request: ParsedRequest, limits: ServiceLimits = DEFAULT_LIMITS): WorkEstimate {
  const o = request.resolved;
  if (request.analysis === "grid") {
    const g = request.resolved as ParsedRequest["resolved"] & Parameters<typeof planCombinations>[1];
    const constrained =
      g.min_k !== undefined || g.max_k !== undefined || g.allowed_k !== undefined || g.required_attributes !== undefined || g.attribute_groups !== undefined;
    if (constrained && g.attribute_combi === undefined) planCombinations(request.data.cols, { ...g, max_iter: 1 });
  }
  const complete = request.analysis === "grid" ? undefined : completeRows(request);
  if (complete !== undefined && complete.count <= request.data.cols) {
    invalid("X", "more rows with every attribute present than attributes (N > K)", `${complete.count} complete rows for K=${request.data.cols}`);
  }
  if (o.prediction_scale === "logistic") checkBinary(request.data.y, complete?.rows);
  return checkLimits(request, limits);
}

/** Rows with every attribute present (the rows PSR and MaxFit fit their model on). */
function completeRows(request: ParsedRequest): { rows: Uint8Array; count: number } {
  const { X, rows: N, cols: K } = request.data;
  const rows = new Uint8Array(N);
  let count = 0;
  for (let i = 0; i < N; i++) {
    let ok = 1;
    for (let j = 0; j < K; j++) {
      if (Number.isNaN(X[i * K + j])) {
        ok = 0;
        break;
      }
    }
    rows[i] = ok;
    count += ok;
  }
  return { rows, count };
}

/** The engine's check of a logistic outcome, over `used` rows (all when undefined). */
function checkBinary(y: Float64Array, used: Uint8Array | undefined): void {
  let zeros = 0;
  let ones = 0;
  for (let i = 0; i < y.length; i++) {
    if (used !== undefined && used[i] === 0) continue;
    if (y[i] === 0) zeros++;
    else if (y[i] === 1) ones++;
    else invalid(`y[${i}]`, '0 or 1 when prediction_scale is "logistic"', `got ${y[i]}`);
  }
  if (zeros === 0 || ones === 0) invalid("y", 'both 0s and 1s when prediction_scale is "logistic"', `got only ${zeros === 0 ? "1s" : "0s"}`);
}
