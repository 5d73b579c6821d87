/**
 * A typed request made ready to send: checked exactly as the service checks it, then encoded.
 *
 * 1. X's JSON size is bounded before encoding (size.ts): a lower bound over 5 MiB is refused at
 *    once with PayloadTooLargeError (the spec's "Kept under 5 MiB" for X in POST bodies). Integer
 *    data has exact bounds.
 * 2. X is encoded in blocks of rows (JSON.stringify writes NaN as null), counting; when the bounds left
 *    the size open, the encoding stops as soon as the count passes the limit, so an X over the
 *    limit costs at most the encoding of 5 MiB, and never the validation below.
 * 3. The v3 body is parsed with `parseRequest` (src/api/request.ts), the service's own parser:
 *    shapes, N > K, finite y and theta, option names, values and combinations. A refusal is a
 *    ValidationError with `local: true` naming the field; nothing is sent, no quota is spent.
 * 4. The bodies are assembled around X's text (the rows joined, which is JSON.stringify(X)):
 *    - v3: `{access_id, y, X, theta?, options?}` with the caller's options as given (the
 *      service parses them with the same code, so it reports the same warnings);
 *    - v2: one flat body per theta row, `y` as N x 1, `theta` as 1 x K (the last row of X when
 *      Grid leaves theta out), options in v2 names at the top level (`toV2Options` of the
 *      canonical options).
 */
import { toV2Options } from "../api/options.js";
import { parseRequest, type ParsedRequest } from "../api/request.js";
import { ComputationError, InvalidInputError } from "../engine/errors.js";
import { ConfigurationError, PayloadTooLargeError, ValidationError } from "./errors.js";
import { X_LIMIT_BYTES } from "./limits.js";
import { jsonSizeBounds, readMatrix } from "./size.js";
import type { Analysis, ApiVersion, PredictionRequest } from "./types.js";

export { X_LIMIT_BYTES };

export interface PreparedRequest {
  analysis: Analysis;
  /** v3: one body. v2: one body per theta row. */
  bodies: string[];
  /** Theta rows (jobs, quota units). */
  rows: number;
  /** Notes of the option parser (ignored keys, ...). */
  warnings: string[];
  /** Exact bytes of X's JSON. */
  xBytes: number;
}

export interface PrepareSettings {
  version: ApiVersion;
  /** The client's access id (CSA_ACCESS_ID); the request's own wins. */
  accessId: string | undefined;
  limitBytes?: number;
  /**
   * The parsed data (`CheckedRequest.parsed.data`) in SharedArrayBuffers: the in-process wire
   * hands it to the service, whose workers then read it without a copy each.
   */
  shared?: boolean;
}

const SEND_MESSAGE = "checked before sending: nothing was sent and no quota was spent";

/** A request checked as `prepareRequest` checks it, before its bodies are assembled. */
export interface CheckedRequest {
  analysis: Analysis;
  request: PredictionRequest<object>;
  accessId: string;
  /** The request as the service's parser reads it (from the values as given). */
  parsed: ParsedRequest;
  /** X's rows encoded in blocks when they had to be counted; undefined when X's bounds settled its size. */
  blocks: string[] | undefined;
  /** Upper bound of X's JSON size in bytes (undefined when X is not an array of rows). */
  xUpperBytes: number | undefined;
  /** Every cell of X is null or a finite number other than -0 (JSON carries X unchanged). */
  xExact: boolean;
  /** `xUpperBytes` is the bound of X's shape alone (26 bytes a cell): `jsonSizeBounds` gives a closer one. */
  xUpperLoose: boolean;
}

/**
 * Checks a request and encodes it: `encodeRequest(checkRequest(...))`.
 *
 * @example
 * const prepared = prepareRequest("grid", { y, X }, { version: "v3", accessId: "me" });
 */
export function prepareRequest(analysis: Analysis, request: PredictionRequest<object>, settings: PrepareSettings): PreparedRequest {
  return encodeRequest(checkRequest(analysis, request, settings), settings.version);
}

/**
 * Steps 1 to 3 of `prepareRequest` (the size of X, then the service's parser): the same errors,
 * without assembling the bodies; X is encoded only when its size bounds leave the limit open.
 *
 * @example
 * const checked = checkRequest("grid", { y, X }, { version: "v3", accessId: "me" });
 */
export function checkRequest(analysis: Analysis, request: PredictionRequest<object>, settings: PrepareSettings): CheckedRequest {
  if (analysis !== "psr" && analysis !== "maxfit" && analysis !== "grid") {
    throw new ValidationError(`analysis: expected "psr", "maxfit" or "grid", got ${JSON.stringify(analysis)} (${SEND_MESSAGE})`, {
      field: "analysis",
      expected: '"psr", "maxfit" or "grid"',
      local: true,
      code: "invalid_input",
    });
  }
  if (typeof request !== "object" || request === null || Array.isArray(request)) {
    throw new ValidationError(`body: expected an object with y, X, theta and options (${SEND_MESSAGE})`, {
      field: "body",
      expected: "an object with y, X, theta and options",
      local: true,
      code: "invalid_input",
    });
  }
  const accessId = request.accessId ?? settings.accessId;
  if (accessId === undefined || accessId === "") {
    throw new ConfigurationError(
      "CSA_ACCESS_ID",
      "no access id: a POST carries the user's access id; pass accessId to createClient (or in the request), or set CSA_ACCESS_ID",
    );
  }
  const limit = settings.limitBytes ?? X_LIMIT_BYTES;

  // X read once, for its size and its data (the parser then does not read it), when it is a
  // matrix that a byte a cell keeps under the limit; else its size bounds first, and the parser reads it.
  const read = readMatrix(request.X, { shared: settings.shared === true, maxBytes: limit });
  const bounds = read ?? jsonSizeBounds(request.X);
  if (bounds !== undefined && bounds.lower > limit) {
    throw tooLarge(bounds.lower, limit, true);
  }
  // Rows of X are arrays here (else bounds is undefined and the parser below says what is wrong).
  // Encoded in blocks of rows (about 64K cells each: as fast as one JSON.stringify of X, and
  // able to stop early).
  // Only when the bounds leave the size open is X counted here; otherwise it is encoded when the
  // bodies are assembled (encodeRequest), or never (an in-process request).
  let blocks: string[] | undefined;
  if (bounds !== undefined && bounds.upper > limit) {
    const rows = request.X as unknown[][];
    const step = blockRows(rows);
    blocks = [];
    let size = 2;
    for (let i = 0; i < rows.length; i += step) {
      const text = JSON.stringify(rows.slice(i, i + step)).slice(1, -1);
      blocks.push(text);
      size += text.length + (i > 0 ? 1 : 0);
      if (size > limit) throw tooLarge(size, limit, i + step < rows.length);
    }
  }

  const body: Record<string, unknown> = { access_id: accessId, y: request.y, X: request.X };
  if (request.theta !== undefined) body.theta = request.theta;
  if (request.options !== undefined) body.options = request.options;
  let parsed: ParsedRequest;
  try {
    const readX = read !== undefined ? { values: read.values, rows: read.rows, cols: read.cols } : undefined;
    parsed = parseRequest(analysis, body, "v3", { requireAccessId: true, ...(readX !== undefined ? { readX } : {}) }) as ParsedRequest;
  } catch (error) {
    if (error instanceof InvalidInputError) {
      throw new ValidationError(`${error.message} (${SEND_MESSAGE})`, {
        field: error.field,
        expected: error.expected,
        local: true,
        code: "invalid_input",
      });
    }
    if (error instanceof ComputationError) {
      throw new ValidationError(`${error.message} (${SEND_MESSAGE})`, { field: error.field, local: true, code: "invalid_input" });
    }
    throw error;
  }

  return { analysis, request, accessId, parsed, blocks, xUpperBytes: bounds?.upper, xExact: bounds?.exact ?? false, xUpperLoose: read?.loose === true };
}

/** Rows of X encoded in blocks of rows (about 64K cells each: as fast as one JSON.stringify of X). */
function encodeRows(rows: unknown[][]): string[] {
  const step = blockRows(rows);
  const blocks: string[] = [];
  for (let i = 0; i < rows.length; i += step) blocks.push(JSON.stringify(rows.slice(i, i + step)).slice(1, -1));
  return blocks;
}

function blockRows(rows: unknown[][]): number {
  return Math.max(1, Math.min(4096, Math.floor(65_536 / Math.max(1, rows[0]?.length ?? 1))));
}

/** Step 4 of `prepareRequest`: the bodies assembled around X's text. */
export function encodeRequest(checked: CheckedRequest, version: ApiVersion): PreparedRequest {
  const { analysis, request, accessId, parsed } = checked;
  const blocks = checked.blocks ?? (checked.xUpperBytes !== undefined ? encodeRows(request.X as unknown[][]) : undefined);
  const xJson = blocks !== undefined ? `[${blocks.join(",")}]` : JSON.stringify(request.X);

  const head = `{"access_id":${JSON.stringify(accessId)}`;
  let bodies: string[];
  if (version === "v3") {
    let tail = "";
    if (request.theta !== undefined) tail += `,"theta":${JSON.stringify(request.theta)}`;
    if (request.options !== undefined) tail += `,"options":${JSON.stringify(request.options)}`;
    bodies = [`${head},"y":${JSON.stringify(request.y)},"X":${xJson}${tail}}`];
  } else {
    const y = `,"y":${JSON.stringify(Array.from(parsed.data.y, (v) => [v]))}`;
    const options = toV2Options(parsed.analysis, parsed.options as never);
    const optionText = Object.keys(options).length > 0 ? `,${JSON.stringify(options).slice(1, -1)}` : "";
    bodies = parsed.thetas.map((theta) => `${head}${y},"X":${xJson},"theta":${JSON.stringify([Array.from(theta)])}${optionText}}`);
  }
  return { analysis, bodies, rows: parsed.thetas.length, warnings: parsed.warnings, xBytes: xJson.length };
}

function tooLarge(bytes: number, limit: number, bound: boolean): PayloadTooLargeError {
  const mib = (n: number) => (n / (1024 * 1024)).toFixed(2);
  return new PayloadTooLargeError(
    `X: its JSON is ${bound ? "at least " : ""}${bytes} bytes (${mib(bytes)} MiB), above the limit of ${limit} bytes (${mib(limit)} MiB) for X in a POST body; send fewer rows or columns (${SEND_MESSAGE})`,
    { limit, bytes, local: true, code: "payload_too_large" },
  );
}
