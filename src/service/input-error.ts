/**
 * Errors of the request parser and the checks before queueing (preflight.ts, limits.ts) as the
 * service's 422 replies; shared by the routes and the offload worker (offload-worker.ts).
 */
import { ComputationError, InvalidInputError } from "../engine/errors.js";
import { ServiceError } from "./http.js";
import { LimitExceededError } from "./limits.js";

/** An error of the request parser as the 422 reply. */
export function inputError(error: unknown): ServiceError {
  if (error instanceof LimitExceededError) {
    return new ServiceError(422, "limit_exceeded", error.message, {
      field: error.field,
      expected: error.expected,
      extra: { limit_name: error.limitName, limit: error.limit, requested: error.requested },
    });
  }
  if (error instanceof InvalidInputError) {
    return new ServiceError(422, "invalid_input", error.message, { field: error.field, expected: error.expected });
  }
  if (error instanceof ComputationError) {
    return new ServiceError(422, "invalid_input", error.message, error.field !== undefined ? { field: error.field } : {});
  }
  if (error instanceof ServiceError) return error;
  // The parser only looks at the request, so whatever it throws is about the request; its text
  // (a RangeError's, say) is the implementation's, not a reason a caller can act on.
  return new ServiceError(422, "invalid_input", "the request could not be read; check it against the API reference (docs/api.md)");
}
