/**
 * One parser for the POST bodies of the three analyses, both dialects; used by the local
 * service and by the CLI (`rbp predict`, which reads v3 bodies where access_id is optional).
 *
 * Steps: zod structure (schemas.ts) -> typed arrays -> the engine's `checkData` for every theta
 * row -> option dialects (options.ts) -> the engine resolver, once, for value and combination
 * checks. Every failure is an InvalidInputError naming the field, e.g. `X[3][1]`,
 * `theta[1][0]` or `options.threshold`.
 */
import type { ZodError, ZodIssue } from "zod";
import { checkData, datasetFromRows, type Dataset } from "../engine/data.js";
import { InvalidInputError } from "../engine/errors.js";
import {
  V2_OPTION_KEYS,
  checkName,
  normalizeOptions,
  resolveOptions,
  type Analysis,
  type Dialect,
  type GivenOptionsFor,
  type ResolvedOptionsFor,
} from "./options.js";
import { capWarnings, warningText, type RequestWarning } from "./warnings.js";
import { V2RequestSchema, V2RequestSchemaNoAccess, V3RequestSchema, V3RequestSchemaNoAccess, plainV3Body } from "./schemas.js";

export interface ParsedRequestFor<A extends Analysis> {
  analysis: A;
  /** The caller's access id; "" when it was optional (requireAccessId false) and absent. */
  accessId: string;
  data: Dataset;
  /** One or more circumstances, each of length K (v2: exactly one). */
  thetas: Float64Array[];
  /** False when theta was absent and the last row of X was used (Grid only). */
  thetaGiven: boolean;
  /**
   * The options as the caller set them, in canonical engine names and values (nulls dropped,
   * defaults not filled in). Pass these to the engine, which resolves them again.
   */
  options: GivenOptionsFor<A>;
  /** The same options resolved by the engine resolver (defaults filled in); for echoing back. */
  resolved: ResolvedOptionsFor<A>;
  /** What was ignored or adjusted, as data, all of it (warnings.ts): v2's `ignored_options` are its keys. */
  notes: RequestWarning[];
  /** The same as text for people, at most MAX_WARNINGS and a count of the rest: the receipt's and result's `warnings`. */
  warnings: string[];
}

export type ParsedRequest = ParsedRequestFor<"psr"> | ParsedRequestFor<"maxfit"> | ParsedRequestFor<"grid">;

export interface ParseRequestSettings {
  /** The service requires access_id; the CLI does not. Default true. */
  requireAccessId?: boolean;
  /**
   * v2 bodies may give X as a reference `"<crc64hex>.json"` to an earlier upload. When given, this
   * returns the uploaded matrix (validated like an inline X) or throws; without it a string X is
   * rejected.
   */
  resolveXReference?: (ref: string) => unknown;
  /**
   * @internal X as the caller read it from this very body just before (client/prepare.ts, in the
   * same synchronous call): N >= 1 rows of the same K >= 1 numbers or nulls, each cell in row
   * order with null as NaN, what the schema's X accepts. X is then not read again: the schema
   * checks the rest of the body (X has nothing to report), and the data takes these values; y goes
   * in memory of the same kind (a SharedArrayBuffer's when they are in one).
   */
  readX?: { values: Float64Array; rows: number; cols: number };
}

/** What the schema reads in place of an X read already (`readX`): a matrix it accepts, as it accepts that X. */
const X_READ: ReadonlyArray<ReadonlyArray<number>> = Object.freeze([Object.freeze([0])]);

const BODY_KEYS = new Set(["access_id", "y", "X", "theta", "options"]);
const V2_TOP_LEVEL = new Set(V2_OPTION_KEYS);

/**
 * Parses and validates a POST body of `analysis` in `dialect`.
 *
 * theta: optional in v3 (K numbers, or M rows of K), one row in v2 (1 x K nested or K flat).
 * Absent on Grid: the last row of X (`thetaGiven` false). Absent on PSR or MaxFit: rejected
 * (field `theta`); the spec does not say what the vendor does there.
 *
 * Options: v3 reads `options`, plus v2/legacy names at the top level (docs/api.md section 2.1); a key
 * given in both places with different values is a conflict. Other top-level keys of a v3 body
 * are ignored with a warning. v2 reads every key except access_id, y, X, theta as an option.
 */
export function parseRequest<A extends Analysis>(analysis: A, body: unknown, dialect: Dialect, settings: ParseRequestSettings = {}): ParsedRequestFor<A> {
  const requireAccessId = settings.requireAccessId ?? true;
  let input = body;
  if (isRecord(body) && typeof body.X === "string") {
    if (!settings.resolveXReference) {
      throw new InvalidInputError("X", "an array of N rows of K numbers or nulls", "uploaded X references are not accepted here");
    }
    input = { ...body, X: settings.resolveXReference(body.X) };
  }

  const schema = dialect === "v3" ? (requireAccessId ? V3RequestSchema : V3RequestSchemaNoAccess) : requireAccessId ? V2RequestSchema : V2RequestSchemaNoAccess;
  const readX = settings.readX;
  // X read already: the body's common case by plain code (what the schema answers for it), else the schema without X.
  const plain = readX !== undefined && dialect === "v3" && isRecord(input) ? plainV3Body(input, requireAccessId) : undefined;
  const result = plain !== undefined ? undefined : schema.safeParse(readX !== undefined && isRecord(input) ? { ...input, X: X_READ } : input);
  if (result !== undefined && !result.success) throw invalidFromZod(result.error);
  const parsed = (plain ?? result!.data) as Record<string, unknown> & {
    access_id?: string;
    y: number[];
    X: Array<Array<number | null>>;
    theta?: number[][] | null;
    options?: Record<string, unknown> | null;
  };

  const data = readX !== undefined ? datasetOfRead(parsed.y, readX) : datasetFromRows(parsed.y, parsed.X);
  const K = data.cols;

  // theta
  let thetaRows = parsed.theta ?? undefined;
  const thetaGiven = thetaRows !== undefined;
  if (thetaRows === undefined) {
    if (analysis !== "grid") {
      throw new InvalidInputError("theta", `K=${K} numbers (required for psr and maxfit)`);
    }
    const last = readX !== undefined ? Array.from(data.X.subarray((data.rows - 1) * K)) : parsed.X[parsed.X.length - 1].map((v) => (v === null ? NaN : v));
    if (last.some((v) => !Number.isFinite(v))) {
      throw new InvalidInputError("theta", `K=${K} finite numbers`, "theta was not given and its default, the last row of X, has missing values");
    }
    thetaRows = [last];
  }
  const thetas = thetaRows.map((row) => Float64Array.from(row));
  thetas.forEach((theta, r) => {
    try {
      // The data once (with the first row); each further row only for itself, so that an
      // experiment of M rows costs O(N K + M K), not O(M N K).
      if (r === 0) checkData(data, theta);
      else checkTheta(theta, K);
    } catch (e) {
      if (e instanceof InvalidInputError && thetas.length > 1 && e.field.startsWith("theta")) {
        throw new InvalidInputError(`theta[${r}]${e.field.slice("theta".length)}`, e.expected, detailOf(e));
      }
      throw e;
    }
  });

  // options
  const notes: RequestWarning[] = [];
  let raw: Record<string, unknown>;
  if (dialect === "v3") {
    raw = { ...(parsed.options ?? {}) };
    for (const [key, value] of Object.entries(parsed)) {
      if (BODY_KEYS.has(key)) continue;
      checkName("", key);
      if (!V2_TOP_LEVEL.has(key)) {
        notes.push({ code: "ignored_field", key, reason: 'settings go under "options"' });
        continue;
      }
      if (key in raw && raw[key] !== null && value !== null && JSON.stringify(raw[key]) !== JSON.stringify(value)) {
        throw new InvalidInputError(`options.${key}/${key}`, `one value for ${key} (given both under options and at the top level)`);
      }
      if (!(key in raw) || raw[key] === null) raw[key] = value;
    }
  } else {
    raw = {};
    for (const [key, value] of Object.entries(parsed)) {
      if (key !== "access_id" && key !== "y" && key !== "X" && key !== "theta") raw[key] = value;
    }
  }
  const normalized = normalizeOptions(analysis, raw, dialect);
  notes.push(...normalized.notes);
  const resolved = resolveOptions(analysis, normalized.options, K);

  return {
    analysis,
    accessId: parsed.access_id ?? "",
    data,
    thetas,
    thetaGiven,
    options: normalized.options,
    resolved,
    notes,
    warnings: capWarnings(notes).map(warningText),
  };
}

/** `datasetFromRows` of y and an X read already (`readX`): y copied beside X, in memory of the same kind. */
function datasetOfRead(y: number[], readX: NonNullable<ParseRequestSettings["readX"]>): Dataset {
  const bytes = 8 * y.length;
  const out = new Float64Array(readX.values.buffer instanceof SharedArrayBuffer ? new SharedArrayBuffer(bytes) : new ArrayBuffer(bytes));
  out.set(y);
  return { y: out, X: readX.values, rows: readX.rows, cols: readX.cols };
}

/** The theta part of the engine's `checkData` (same fields and messages). */
function checkTheta(theta: Float64Array, K: number): void {
  if (theta.length !== K) throw new InvalidInputError("theta", `K=${K} values, one per column of X`, `got ${theta.length}`);
  for (let j = 0; j < K; j++) {
    if (!Number.isFinite(theta[j])) throw new InvalidInputError(`theta[${j}]`, "a finite number", `got ${theta[j]}`);
  }
}

/** `["X", 3, 1]` -> `X[3][1]`; `["options", "threshold"]` -> `options.threshold`; `[]` -> `body`. */
export function fieldFromPath(path: ReadonlyArray<string | number>): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out === "" ? part : `.${part}`;
  }
  return out === "" ? "body" : out;
}

/** The first zod issue as an InvalidInputError with a field path and a readable expectation. */
export function invalidFromZod(error: ZodError): InvalidInputError {
  const issue = error.issues[0];
  return new InvalidInputError(fieldFromPath(issue.path), issue.message, issueDetail(issue));
}

function issueDetail(issue: ZodIssue): string | undefined {
  if (issue.code === "invalid_type") return issue.received === "undefined" ? "missing" : `got ${issue.received}`;
  if (issue.code === "custom" && typeof issue.params?.detail === "string") return issue.params.detail;
  if (issue.code === "too_small") return "got an empty array or string";
  return undefined;
}

function detailOf(e: InvalidInputError): string | undefined {
  const prefix = `${e.field}: expected ${e.expected}; `;
  return e.message.startsWith(prefix) ? e.message.slice(prefix.length) : undefined;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
