/**
 * Errors the engine throws. Each names the input field at fault so that the service can answer
 * with a 422 naming it, and a notebook cell can show the user which word to change.
 */

import { brand, RbpBaseError } from "../errors/index.js";

/** The caller gave something the engine cannot accept: a shape, a value, or a combination of options. */
export class InvalidInputError extends RbpBaseError {
  static {
    brand(this, "InvalidInputError");
  }
  override readonly name = "InvalidInputError";
  /** The request field at fault, for example `theta`, `options.censor_type` or `X[3][1]`. */
  readonly field: string;
  /** What the engine expected there, in words. */
  readonly expected: string;

  constructor(field: string, expected: string, detail?: string) {
    super(`${field}: expected ${expected}${detail ? `; ${detail}` : ""}`, "invalid_input");
    this.field = field;
    this.expected = expected;
  }
}

/**
 * The input was well formed but the computation cannot go on: a singular covariance under an
 * inverse method that needs a regular one, or no valid calibration at all. The service reports
 * these as failed jobs (they are found while computing, not while validating).
 */
export class ComputationError extends RbpBaseError {
  static {
    brand(this, "ComputationError");
  }
  override readonly name = "ComputationError";
  /** The option that offers a way out, if there is one. */
  readonly field: string | undefined;

  constructor(message: string, field?: string) {
    super(message, "computation_failed");
    this.field = field;
  }
}

export function invalid(field: string, expected: string, detail?: string): never {
  throw new InvalidInputError(field, expected, detail);
}
