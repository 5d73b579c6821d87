/**
 * Checks of a parsed request that the request parser leaves to the engine but that need no
 * computation, run before a POST is paid for, so that the caller gets a 422 naming the options
 * instead of a paid-for job that fails at once (api-compat.md 6.3: "each forbidden option
 * combination" is an input error; only what is found during the computation fails the job).
 *
 * - Grid: size and attribute constraints (`min_k`, `max_k`, `allowed_k`, `required_attributes`,
 *   `attribute_groups`) that admit no attribute combination at all, e.g. five required attributes
 *   with `max_k` 2. The engine's own planner decides, asked for a single combination (O(K^2)).
 *
 * Throws the engine's InvalidInputError (field `options`); the route turns it into its 4xx.
 */
import type { ParsedRequest } from "../api/request.js";
import { planCombinations } from "../engine/combinations.js";

export function checkBeforeQueue(request: ParsedRequest): void {
  if (request.analysis === "grid") {
    const o = request.resolved;
    const constrained =
      o.min_k !== undefined || o.max_k !== undefined || o.allowed_k !== undefined || o.required_attributes !== undefined || o.attribute_groups !== undefined;
    if (constrained && o.attribute_combi === undefined) planCombinations(request.data.cols, { ...o, max_iter: 1 });
  }
}
