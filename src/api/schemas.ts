/**
 * zod schemas of the wire bodies (docs/api.md sections 1, 2, 2.1 and 3).
 * Each issue message is the readable "expected" text that request.ts puts into InvalidInputError;
 * a custom issue may carry `params.detail` (the "got ..." part).
 *
 * These schemas check structure only (types, non-empty, rectangular X). Cross-field shapes
 * (len(y) = N, N > K, theta of length K, finiteness) are checked by the engine's `checkData`,
 * and option values by `normalizeOptions` and the engine resolvers.
 */
import { z } from "zod";

const number = (message: string) => z.number({ invalid_type_error: message, required_error: message });

/** Outcomes, value by value (the detailed check). */
const YDetailedSchema = z
  .array(number("a finite number (y is N numbers or an N x 1 column, without missing values)"), {
    invalid_type_error: "an array of N numbers or an N x 1 column",
    required_error: "an array of N numbers or an N x 1 column",
  })
  .min(1, "at least one value");

/**
 * Outcomes: N numbers, or an N x 1 column (flattened). No nulls: y has no missing values. Numbers
 * (nearly always) are accepted by one plain loop; zod's value-by-value check (20 ms for N=100,000)
 * only runs to name what is wrong.
 */
export const YSchema = z.preprocess(
  (v) => (Array.isArray(v) && v.length > 0 && v.every((e) => Array.isArray(e) && e.length === 1) ? v.map((e) => e[0]) : v),
  z
    .unknown()
    .superRefine((value, ctx) => {
      if (isNumbers(value)) return;
      const detailed = YDetailedSchema.safeParse(value);
      if (!detailed.success) for (const issue of detailed.error.issues) ctx.addIssue(issue);
    })
    .transform((value) => value as number[]),
);

/** What YDetailedSchema accepts: a non-empty array of numbers (zod's number: not NaN). */
function isNumbers(value: unknown): boolean {
  if (!Array.isArray(value) || value.length === 0) return false;
  for (let i = 0; i < value.length; i++) {
    const v: unknown = value[i];
    if (typeof v !== "number" || v !== v) return false;
  }
  return true;
}

/** One cell of X: a number, or null (also NaN) for a missing value. */
export const XCellSchema = z.union([z.number(), z.nan(), z.null()], {
  errorMap: () => ({ message: "a number or null (missing)" }),
});

/** Attributes: N rows of K cells, all rows of the same length (the detailed check, issue by issue). */
const XDetailedSchema = z
  .array(z.array(XCellSchema, { invalid_type_error: "a row of K numbers or nulls" }).min(1, "a row of at least one value"), {
    invalid_type_error: "an array of N rows of K numbers or nulls",
    required_error: "an array of N rows of K numbers or nulls",
  })
  .min(1, "at least one row")
  .superRefine((rows, ctx) => {
    if (rows.length === 0) return;
    const k = rows[0].length;
    rows.forEach((row, i) => {
      if (row.length !== k) {
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          path: [i],
          message: `${k} values like the first row`,
          params: { detail: `got ${row.length}` },
        });
      }
    });
  });

/**
 * Attributes: N rows of K cells, all rows of the same length. A well-formed X (nearly always) is
 * accepted by one plain loop; zod's cell-by-cell check, ten times slower on a 5 MiB X, only runs
 * to name what is wrong.
 */
export const XSchema = z
  .unknown()
  .superRefine((value, ctx) => {
    if (isMatrix(value)) return;
    const detailed = XDetailedSchema.safeParse(value);
    if (!detailed.success) for (const issue of detailed.error.issues) ctx.addIssue(issue);
  })
  .transform((value) => value as Array<Array<number | null>>);

function isMatrix(value: unknown): boolean {
  if (!Array.isArray(value) || value.length === 0 || !Array.isArray(value[0])) return false;
  const k = value[0].length;
  if (k === 0) return false;
  for (const row of value) {
    if (!Array.isArray(row) || row.length !== k) return false;
    for (let j = 0; j < k; j++) {
      const cell = row[j];
      if (cell !== null && typeof cell !== "number") return false;
    }
  }
  return true;
}

function isNumber(v: unknown): v is number {
  return typeof v === "number" && !Number.isNaN(v);
}

/**
 * Circumstances: K numbers (one row) or M rows of K numbers; always returned as rows.
 * Lengths against K are checked later (checkData).
 */
export const ThetaSchema = z
  .array(z.unknown(), {
    invalid_type_error: "K numbers, or rows of K numbers",
    required_error: "K numbers, or rows of K numbers",
  })
  .min(1, "K numbers, or rows of K numbers")
  .superRefine((items, ctx) => {
    const nested = items.some((v) => Array.isArray(v));
    const bad = (path: number[], message: string, v: unknown) =>
      ctx.addIssue({ code: z.ZodIssueCode.custom, path, message, params: { detail: `got ${JSON.stringify(v) ?? String(v)}` } });
    items.forEach((item, r) => {
      if (!nested) {
        if (!isNumber(item)) bad([r], "a finite number", item);
      } else if (!Array.isArray(item)) {
        bad([r], "a row of K numbers (all rows of theta nested alike)", item);
      } else {
        item.forEach((v, j) => {
          if (!isNumber(v)) bad([r, j], "a finite number", v);
        });
      }
    });
  })
  .transform((items): number[][] => (items.some((v) => Array.isArray(v)) ? (items as number[][]) : [items as number[]]));

export const AccessIdSchema = z
  .string({ invalid_type_error: "a non-empty string", required_error: "a non-empty string (the user access id)" })
  .min(1, "a non-empty string");

export const OptionsObjectSchema = z.record(z.unknown(), {
  invalid_type_error: "an object of option names and values",
});

/** Version 3 body (docs/api.md section 2.1). Extra top-level keys are kept for request.ts to sort out. */
export const V3RequestSchema = z
  .object(
    {
      access_id: AccessIdSchema,
      y: YSchema,
      X: XSchema,
      theta: ThetaSchema.nullish(),
      options: OptionsObjectSchema.nullish(),
    },
    { invalid_type_error: "a JSON object", required_error: "a JSON object" },
  )
  .passthrough();

/**
 * What `V3RequestSchema` (`requireAccessId`) or `V3RequestSchemaNoAccess` answers for a body it
 * accepts in the common case, read by plain code: only the body's own keys (access_id, y, X,
 * options); access_id a non-empty string (or absent when not required); y non-empty numbers, none
 * NaN (not a column); no theta (absent, undefined or null); options absent, null, or a plain object
 * of own string keys, none `__proto__`, no value undefined (what the record schema keeps as is).
 * X is not read: the caller has read it (request.ts `readX`) and answers for it. Undefined when
 * the body is anything else: the schema then reads it and says what is wrong.
 *
 * @example
 * plainV3Body({ access_id: "me", y: [1, 2], X }, true); // { access_id: "me", y: [1, 2], X, theta: undefined, options: undefined }
 */
export function plainV3Body(body: Record<string, unknown>, requireAccessId: boolean): V3RequestBody | undefined {
  const proto = Object.getPrototypeOf(body) as unknown;
  if (proto !== Object.prototype && proto !== null) return undefined;
  for (const key of Object.keys(body)) if (key !== "access_id" && key !== "y" && key !== "X" && key !== "options" && key !== "theta") return undefined;
  const { access_id: accessId, y, theta, options } = body;
  if (!(typeof accessId === "string" && accessId.length > 0) && (requireAccessId || accessId !== undefined)) return undefined;
  if (theta !== undefined && theta !== null) return undefined;
  if (!isNumbers(y)) return undefined;
  if (options !== undefined && options !== null && !isPlainRecord(options)) return undefined;
  return {
    access_id: accessId as string,
    y: y as number[],
    X: body.X as Array<Array<number | null>>,
    theta: undefined,
    options: options as Record<string, unknown> | null | undefined,
  };
}

/** An object the options' record schema gives back as an equal object: plain, own string keys only, none `__proto__`, no value undefined. */
function isPlainRecord(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  if ((proto !== Object.prototype && proto !== null) || Object.getOwnPropertySymbols(value).length > 0) return false;
  for (const key in value) {
    if (!Object.hasOwn(value, key) || key === "__proto__" || (value as Record<string, unknown>)[key] === undefined) return false;
  }
  return true;
}

/** Version 2 flat body (docs/api.md section 3): options at the top level. */
export const V2RequestSchema = z
  .object(
    {
      access_id: AccessIdSchema,
      y: YSchema,
      X: XSchema,
      theta: ThetaSchema.refine((rows) => rows.length === 1, {
        message: "exactly one row of K numbers (1 x K) in version 2",
      }).nullish(),
    },
    { invalid_type_error: "a JSON object", required_error: "a JSON object" },
  )
  .passthrough();

/** The same bodies without the access id requirement (the CLI reads v3 bodies from files). */
export const V3RequestSchemaNoAccess = V3RequestSchema.extend({ access_id: AccessIdSchema.optional() });
export const V2RequestSchemaNoAccess = V2RequestSchema.extend({ access_id: AccessIdSchema.optional() });

export type V3RequestBody = z.output<typeof V3RequestSchema>;
export type V2RequestBody = z.output<typeof V2RequestSchema>;

const JobId = z.number().int();
/** 16 lower-case hex characters in practice; any string is accepted on read. */
const JobCode = z.string().min(1);

/** One warning as data (v3 receipts' `warning_details`, src/api/warnings.ts): `warnings[i]` is its text. */
const WarningDetailSchema = z.object({ code: z.string(), key: z.string().optional(), value: z.string().optional(), reason: z.string() });

/** Receipt of a POST with one circumstance (docs/api.md section 2). */
export const ReceiptSchema = z.object({
  job_id: JobId,
  job_code: JobCode,
  /** v3: ignored options and other notes, as text (docs/api.md section 2.1). */
  warnings: z.array(z.string()).optional(),
  /** v3: the same warnings as data, one for one. */
  warning_details: z.array(WarningDetailSchema).optional(),
  /** v2: keys that were ignored (docs/api.md section 2.1). */
  ignored_options: z.array(z.string()).optional(),
});
export type Receipt = z.output<typeof ReceiptSchema>;

/** Receipt of a v3 POST whose theta has M > 1 rows (docs/api.md section 2). */
export const ExperimentReceiptSchema = z.object({
  experiment_id: JobId,
  experiment_code: JobCode,
  jobs: z.array(z.object({ job_id: JobId, job_code: JobCode, row: z.number().int().nonnegative() })).min(1),
  warnings: z.array(z.string()).optional(),
  warning_details: z.array(WarningDetailSchema).optional(),
});
export type ExperimentReceipt = z.output<typeof ExperimentReceiptSchema>;

/** One entry of an error body's `details`: typically the field at fault and what was expected. */
export const ErrorDetailSchema = z.object({ field: z.string().optional(), expected: z.string().optional(), message: z.string().optional() }).passthrough();

/** Error body of every error response and failed-job body (docs/api.md section 1). */
export const ErrorBodySchema = z.object({
  message: z.string(),
  error: z.string(),
  status_code: z.number().int(),
  error_code: z.number().int(),
  details: z.array(ErrorDetailSchema).optional(),
});
export type ErrorBody = z.output<typeof ErrorBodySchema>;
