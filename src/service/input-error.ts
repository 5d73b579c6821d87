/**
 * Errors of the request parser and the checks before queueing (preflight.ts, limits.ts) as the
 * service's 422 replies; shared by the routes and the offload worker (offload-worker.ts).
 */
import type { ComputationError, InvalidInputError } from "../engine/errors.js";
import { RbpBaseError } from "../errors/index.js";
import { ServiceError } from "./http.js";
import type { LimitExceededError } from "./limits.js";

/** An error of the request parser as the 422 reply, by its stable code. */
export function inputError(error: unknown): ServiceError {
  if (error instanceof ServiceError) return error;
  switch (error instanceof RbpBaseError ? error.code : undefined) {
    case "limit_exceeded": {
      const e = error as LimitExceededError;
      return new ServiceError(422, "limit_exceeded", e.message, {
        field: e.field,
        expected: e.expected,
        extra: { limit_name: e.limitName, limit: e.limit, requested: e.requested },
      });
    }
    case "invalid_input": {
      const e = error as InvalidInputError;
      return new ServiceError(422, "invalid_input", e.message, { field: e.field, expected: e.expected });
    }
    case "computation_failed": {
      const e = error as ComputationError;
      return new ServiceError(422, "invalid_input", e.message, e.field !== undefined ? { field: e.field } : {});
    }
  }
  // The parser only looks at the request, so whatever it throws is about the request; its text
  // (a RangeError's, say) is the implementation's, not a reason a caller can act on.
  return new ServiceError(422, "invalid_input", "the request could not be read; check it against the API reference (docs/api.md)");
}
