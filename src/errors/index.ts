/**
 * The one root of every error rbp-notebook throws, and the brand that makes `instanceof` work
 * across copies of the module.
 *
 * A notebook can load this package twice (tslab's require cache and an ESM import, a global and
 * a local install): two copies have two `ValidationError` classes, and a plain `instanceof` of
 * one copy's class is false for the other's error. As undici does, each class here carries a
 * brand, a `Symbol.for` key shared by every copy, and answers `instanceof` by the brand
 * (`Symbol.hasInstance`): an error is an instance of a class when it carries that class's brand,
 * whichever copy made it. A class that is not branded (a caller's own subclass) falls back to the
 * ordinary prototype check.
 *
 * Every error has a `code`: a stable snake_case machine code. The class sets a default (the
 * `code` of the table below); the client's errors keep the service's own code (`error` in its
 * body) when it sent one.
 *
 * | layer | root | classes |
 * | --- | --- | --- |
 * | engine | RbpBaseError | InvalidInputError `invalid_input`, ComputationError `computation_failed` |
 * | frame | RbpBaseError | FrameError `invalid_data` |
 * | api | RbpBaseError | ResultError `invalid_result` |
 * | client | RbpError | one per kind (client/errors.ts) |
 * | service | RbpBaseError | ServiceError (its status's code), ServiceRefusal (refusals.ts: `quota_exceeded`, `gone`, ...), the store's (store/errors.ts: `quota_exceeded`, `storage_full`, `storage_busy`, `store_damaged`; SchemaError `schema_mismatch`), PoolJobError `pool_job_failed`, PoolClosedError `pool_closed`, PoolWithdrawnError `pool_withdrawn` |
 * | notebook | RbpBaseError | PredictionError (`code` = its kind, snake_case) |
 * | cli | RbpBaseError | UsageError `usage` |
 */

const BRAND_OF = Symbol.for("rbp-notebook.error.brand-of");

/**
 * Marks a class with its brand: its instances (and its subclasses' instances), from any copy of
 * the module, answer `instanceof` for it. Call once per class, in a static block.
 *
 * @example
 * class QuotaError extends RbpBaseError {
 *   static {
 *     brand(this, "QuotaError");
 *   }
 * }
 */
export function brand(cls: abstract new (...args: never[]) => object, name: string): void {
  const key = Symbol.for(`rbp-notebook.error.${name}`);
  Object.defineProperty(cls, BRAND_OF, { value: key, enumerable: false });
  Object.defineProperty(cls.prototype, key, { value: true, enumerable: false });
}

/**
 * The root of every rbp-notebook error: a message, a stable `code`, and `instanceof` by brand.
 *
 * @example
 * try {
 *   await grid(rows, spec);
 * } catch (e) {
 *   if (e instanceof RbpBaseError) console.log(e.code);
 * }
 */
export class RbpBaseError extends Error {
  static {
    brand(this, "RbpBaseError");
  }

  /** A stable snake_case machine code (`invalid_input`, `quota_exceeded`, ...). */
  readonly code: string;

  constructor(message: string, code: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }

  /** `x instanceof C`: true when x carries C's brand (any copy of the module), else the prototype check. */
  static [Symbol.hasInstance](value: unknown): boolean {
    const key = Object.prototype.hasOwnProperty.call(this, BRAND_OF) ? (this as unknown as Record<symbol, symbol>)[BRAND_OF] : undefined;
    if (key === undefined) return Function.prototype[Symbol.hasInstance].call(this, value);
    return (typeof value === "object" || typeof value === "function") && value !== null && (value as Record<symbol, unknown>)[key] === true;
  }
}
