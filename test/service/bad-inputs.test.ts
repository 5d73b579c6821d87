/**
 * The table of bad inputs: every refusal of the v3 API over loopback HTTP, each with its
 * documented status, `error` code and field, and the one JSON error shape
 * `{message, error, status_code, error_code, field?, details?}` (README, "rbp serve"; docs/api.md
 * sections 1, 6.3 and 8):
 *
 * | status | error | when |
 * | --- | --- | --- |
 * | 400 | malformed_json | the body is empty or not JSON (field `body`) |
 * | 400 | bad_request | the path is not valid percent-encoding |
 * | 401 | unauthorized | no x-api-key |
 * | 403 | forbidden | an unknown x-api-key; access_id missing, not a string, not a user of the key's organisation, or expired |
 * | 404 | not_found | an unknown route; a job or experiment that does not exist, has another code or belongs to another organisation; an unknown field |
 * | 405 | method_not_allowed | a known path with another method (Allow header) |
 * | 413 | payload_too_large | a body over 10 MiB |
 * | 422 | invalid_input | a body that parses but cannot be used: not an object, wrong shapes or types, N <= K, a value out of range, a forbidden option combination (the field names the option or element) |
 * | 429 | quota_exceeded | the plan cannot pay for the POST (with `remaining` and `required`) |
 *
 * NaN tokens: JSON has none, but Python's json writes `NaN`, `Infinity` and `-Infinity` for
 * non-finite floats. Following docs/api.md section 1 the service reads a bare `NaN` as a missing
 * value (null) and `Infinity` as a number it refuses: NaN in X is a missing value (accepted), NaN
 * in y or theta a 422 naming the element (they cannot be missing), +-Infinity anywhere numeric a
 * 422 naming the element. A token anywhere else (a key, `NaNa`) leaves the body malformed: 400.
 *
 * Every refusal costs nothing: the quota is the same after the whole table.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorBodySchema } from "../../src/api/schemas.js";
import { parseJsonLenient } from "../../src/service/http.js";
import type { LocalService } from "../../src/service/index.js";
import { Client, gold, quickstart, start, tempDir, type Reply, writeCredentials } from "./helpers.js";

const KEYS = { a: "bad-inputs-key-of-a-0123", b: "bad-inputs-key-of-b-4567", broke: "bad-inputs-key-broke-89" };
const dir = tempDir();
let service: LocalService;
let a: Client;
let b: Client;

// Receipts the table reads with the wrong key or code, made in beforeAll.
const made = {
  aJob: { job_id: 0, job_code: "" },
  aExperiment: { experiment_id: 0, experiment_code: "", jobs: [] as Array<{ job_id: number; job_code: string }> },
  bJob: { job_id: 0, job_code: "" },
  bExperiment: { experiment_id: 0, experiment_code: "" },
};

beforeAll(async () => {
  const file = writeCredentials(dir.path, [
    { name: "a", api_key: KEYS.a, plan: { quota: 1000 }, users: [{ access_id: "alice" }, { access_id: "old-al", expires: "2020-01-01T00:00:00Z" }] },
    { name: "b", api_key: KEYS.b, plan: { quota: 1000 }, users: [{ access_id: "bob" }] },
    { name: "broke", api_key: KEYS.broke, plan: { quota: 0 }, users: [{ access_id: "bea" }] },
  ]);
  ({ service } = await start({ credentialsFile: file }));
  a = new Client(service.url, KEYS.a, "alice");
  b = new Client(service.url, KEYS.b, "bob");
  const two = quickstart({ theta: [gold.inputs.theta, gold.inputs.X[0]] });
  made.aJob = (await a.post("/v3/psr", quickstart())).body;
  made.aExperiment = (await a.post("/v3/psr", two)).body;
  made.bJob = (await b.post("/v3/psr", quickstart())).body;
  made.bExperiment = (await b.post("/v3/psr", two)).body;
  for (const receipt of [made.aJob, made.bJob]) {
    expect(receipt.job_code).toMatch(/^[0-9a-f]{16}$/);
  }
  const aPoll = await a.poll(`/v3/results/${made.aJob.job_id}/${made.aJob.job_code}`);
  expect(aPoll.status).toBe(200);
  expect((await b.poll(`/v3/results/${made.bJob.job_id}/${made.bJob.job_code}`)).status).toBe(200);
});
afterAll(async () => {
  await service?.close();
  dir.remove();
});

// ---------------------------------------------------------------------------------------------
// The table

interface Row {
  name: string;
  method?: "GET" | "POST" | "PUT" | "DELETE";
  /** Default POST /v3/psr. */
  path?: string | (() => string);
  /** An object (given access_id "alice" unless it sets one) or the raw body text. */
  body?: Record<string, unknown> | string | (() => string);
  /** The x-api-key header: default org a's; null = none. */
  key?: string | null;
  status: number;
  error: string;
  /** The field the error names (also `details[0].field`); undefined = not checked. */
  field?: string;
  /** More checks of the body or headers. */
  check?: (reply: Reply) => void;
}

/** The quickstart body as text with `"@TOKEN@"` placeholders turned into bare tokens. */
function rawWith(body: Record<string, unknown>, accessId = "alice"): string {
  return JSON.stringify({ access_id: accessId, ...body }).replace(/"@([A-Za-z-]+)@"/g, "$1");
}

const { y, X, theta } = gold.inputs;
const withX = (i: number, j: number, v: unknown) => X.map((row, r) => (r === i ? row.map((x, c) => (c === j ? v : x)) : row));
const withOptions = (options: Record<string, unknown>) => quickstart({ options });
const jobPath = (r: { job_id: number; job_code: string }) => `/v3/results/${r.job_id}/${r.job_code}`;
const experimentPath = (r: { experiment_id: number; experiment_code: string }) => `/v3/experiments/${r.experiment_id}/${r.experiment_code}`;
const otherCode = (code: string) => (code[0] === "0" ? "1" : "0") + code.slice(1);

const AUTH: Row[] = [
  { name: "POST without x-api-key", key: null, body: quickstart(), status: 401, error: "unauthorized", field: "x-api-key" },
  { name: "POST with an unknown x-api-key", key: "not-a-key-at-all", body: quickstart(), status: 403, error: "forbidden", field: "x-api-key" },
  { name: "POST with an empty x-api-key", key: "", body: quickstart(), status: 401, error: "unauthorized", field: "x-api-key" },
  { name: "access_id missing", body: { ...quickstart(), access_id: undefined }, status: 403, error: "forbidden", field: "access_id" },
  { name: "access_id not a string", body: { ...quickstart(), access_id: 42 }, status: 403, error: "forbidden", field: "access_id" },
  { name: "access_id empty", body: { ...quickstart(), access_id: "" }, status: 403, error: "forbidden", field: "access_id" },
  { name: "access_id of another organisation", body: { ...quickstart(), access_id: "bob" }, status: 403, error: "forbidden", field: "access_id" },
  { name: "access_id unknown", body: { ...quickstart(), access_id: "mallory" }, status: 403, error: "forbidden", field: "access_id" },
  {
    name: "access_id expired",
    body: { ...quickstart(), access_id: "old-al" },
    status: 403,
    error: "forbidden",
    field: "access_id",
    check: (r) => expect(r.body.message).toContain("expired"),
  },
  { name: "access_id checked before the values", body: { y: "junk", access_id: "mallory" }, status: 403, error: "forbidden", field: "access_id" },
  { name: "GET quota without x-api-key", method: "GET", path: "/v3/quota", key: null, status: 401, error: "unauthorized", field: "x-api-key" },
  { name: "GET quota with an unknown x-api-key", method: "GET", path: "/v3/quota", key: "nope-nope-nope", status: 403, error: "forbidden" },
  { name: "GET a result with an unknown x-api-key", method: "GET", path: () => jobPath(made.aJob), key: "nope-nope-nope", status: 403, error: "forbidden" },
  { name: "another organisation's receipt: result", method: "GET", path: () => jobPath(made.bJob), status: 404, error: "not_found" },
  {
    name: "another organisation's receipt: /jobs",
    method: "GET",
    path: () => `/v3/jobs/${made.bJob.job_id}/${made.bJob.job_code}`,
    status: 404,
    error: "not_found",
  },
  {
    name: "another organisation's receipt: a field",
    method: "GET",
    path: () => `/v3/jobs/${made.bJob.job_id}/${made.bJob.job_code}/yhat`,
    status: 404,
    error: "not_found",
  },
  { name: "another organisation's experiment", method: "GET", path: () => experimentPath(made.bExperiment), status: 404, error: "not_found" },
  { name: "a wrong job code", method: "GET", path: () => `/v3/results/${made.aJob.job_id}/${otherCode(made.aJob.job_code)}`, status: 404, error: "not_found" },
  {
    name: "a job code in upper case",
    method: "GET",
    path: () => `/v3/results/${made.aJob.job_id}/${made.aJob.job_code.toUpperCase()}`,
    status: 404,
    error: "not_found",
  },
  { name: "a job code one character longer", method: "GET", path: () => `${jobPath(made.aJob)}0`, status: 404, error: "not_found" },
  {
    name: "another job's code",
    method: "GET",
    path: () => `/v3/results/${made.aJob.job_id}/${made.aExperiment.jobs[0].job_code}`,
    status: 404,
    error: "not_found",
  },
  {
    name: "a wrong code on a field",
    method: "GET",
    path: () => `/v3/jobs/${made.aJob.job_id}/${otherCode(made.aJob.job_code)}/yhat`,
    status: 404,
    error: "not_found",
  },
  {
    name: "a job id that is not a number",
    method: "GET",
    path: () => `/v3/results/x${made.aJob.job_id}/${made.aJob.job_code}`,
    status: 404,
    error: "not_found",
  },
  { name: "a negative job id", method: "GET", path: () => `/v3/results/-${made.aJob.job_id}/${made.aJob.job_code}`, status: 404, error: "not_found" },
  { name: "a job id that does not exist", method: "GET", path: () => `/v3/results/987654/${made.aJob.job_code}`, status: 404, error: "not_found" },
  {
    name: "a wrong experiment code",
    method: "GET",
    path: () => experimentPath({ ...made.aExperiment, experiment_code: otherCode(made.aExperiment.experiment_code) }),
    status: 404,
    error: "not_found",
  },
  {
    name: "an experiment receipt read as a job",
    method: "GET",
    path: () => `/v3/results/${made.aExperiment.experiment_id}/${made.aExperiment.experiment_code}`,
    status: 404,
    error: "not_found",
  },
  {
    name: "a job receipt read as an experiment",
    method: "GET",
    path: () => `/v3/experiments/${made.aJob.job_id}/${made.aJob.job_code}`,
    status: 404,
    error: "not_found",
  },
  {
    name: "quota spent: a single job",
    key: KEYS.broke,
    body: { ...quickstart(), access_id: "bea" },
    status: 429,
    error: "quota_exceeded",
    check: (r) => {
      expect(r.body).toMatchObject({ quota: 0, used: 0, remaining: 0, required: 1 });
      expect(r.body.message).toContain("Limit Exceeded");
    },
  },
  {
    name: "quota spent: an experiment of three rows",
    key: KEYS.broke,
    body: { ...quickstart({ theta: [theta, theta, theta] }), access_id: "bea" },
    status: 429,
    error: "quota_exceeded",
    check: (r) => expect(r.body).toMatchObject({ remaining: 0, required: 3 }),
  },
  {
    name: "quota spent, but invalid input is reported first",
    key: KEYS.broke,
    body: { ...quickstart({ theta: [1] }), access_id: "bea" },
    status: 422,
    error: "invalid_input",
    field: "theta",
  },
];

const JSON_TEXT: Row[] = [
  { name: "an empty body", body: "", status: 400, error: "malformed_json", field: "body" },
  { name: "a blank body", body: "  \n\t ", status: 400, error: "malformed_json", field: "body" },
  { name: "truncated JSON", body: '{"access_id": "alice", "y": [1, 2', status: 400, error: "malformed_json", field: "body" },
  { name: "text after the JSON", body: () => `${rawWith(quickstart())} and more`, status: 400, error: "malformed_json", field: "body" },
  { name: "single quotes", body: "{'access_id': 'alice'}", status: 400, error: "malformed_json", field: "body" },
  { name: "trailing commas", body: '{"access_id": "alice", "y": [1, 2,],}', status: 400, error: "malformed_json", field: "body" },
  { name: "NaN as a key", body: '{NaN: 1, "access_id": "alice"}', status: 400, error: "malformed_json", field: "body" },
  { name: "a NaN-like word", body: () => rawWith(quickstart({ y: [...y.slice(0, 6), "@NaNa@"] })), status: 400, error: "malformed_json", field: "body" },
  {
    name: "a NaN token in y (missing outcomes are not allowed)",
    body: () => rawWith(quickstart({ y: [1, 2, "@NaN@", 4, 5, 6, 7] })),
    status: 422,
    error: "invalid_input",
    field: "y[2]",
  },
  {
    name: "a NaN token in theta",
    body: () => rawWith(quickstart({ theta: [24, "@NaN@", 81, 60, 11] })),
    status: 422,
    error: "invalid_input",
    field: "theta[1]",
  },
  { name: "an Infinity token in X", body: () => rawWith(quickstart({ X: withX(1, 0, "@Infinity@") })), status: 422, error: "invalid_input", field: "X[1][0]" },
  {
    name: "a -Infinity token in y",
    body: () => rawWith(quickstart({ y: [1, 2, 3, 4, 5, 6, "@-Infinity@"] })),
    status: 422,
    error: "invalid_input",
    field: "y[6]",
  },
  {
    name: "an Infinity token in theta",
    body: () => rawWith(quickstart({ theta: [24, 5, "@-Infinity@", 60, 11] })),
    status: 422,
    error: "invalid_input",
    field: "theta[2]",
  },
  {
    name: "a NaN token in a threshold",
    body: () => rawWith(withOptions({ threshold: [0, "@NaN@"] })),
    status: 422,
    error: "invalid_input",
    field: "options.threshold[1]",
  },
  {
    name: "an Infinity token in a threshold",
    body: () => rawWith(withOptions({ threshold: "@Infinity@" })),
    status: 422,
    error: "invalid_input",
    field: "options.threshold",
  },
  {
    name: "a number beyond the double range (1e999)",
    body: () => rawWith(quickstart({ X: withX(0, 0, "@1e999@") })),
    status: 422,
    error: "invalid_input",
    field: "X[0][0]",
  },
  { name: "a JSON array", body: "[1, 2, 3]", status: 422, error: "invalid_input", field: "body" },
  { name: "JSON null", body: "null", status: 422, error: "invalid_input", field: "body" },
  { name: "a JSON string", body: '"y and X"', status: 422, error: "invalid_input", field: "body" },
  { name: "a JSON number", body: "42", status: 422, error: "invalid_input", field: "body" },
  { name: "a bare NaN", body: "NaN", status: 422, error: "invalid_input", field: "body" },
];

const SHAPES: Row[] = [
  { name: "y missing", body: { X, theta }, status: 422, error: "invalid_input", field: "y" },
  { name: "X missing", body: { y, theta }, status: 422, error: "invalid_input", field: "X" },
  { name: "y a string", body: quickstart({ y: "18.8, 2.3" }), status: 422, error: "invalid_input", field: "y" },
  { name: "strings in y", body: quickstart({ y: y.map(String) }), status: 422, error: "invalid_input", field: "y[0]" },
  { name: "a string in X", body: quickstart({ X: withX(1, 0, "29") }), status: 422, error: "invalid_input", field: "X[1][0]" },
  { name: "a boolean in X", body: quickstart({ X: withX(2, 3, true) }), status: 422, error: "invalid_input", field: "X[2][3]" },
  { name: "an object in X", body: quickstart({ X: withX(4, 4, { value: 1 }) }), status: 422, error: "invalid_input", field: "X[4][4]" },
  { name: "X a string that is not an upload", body: quickstart({ X: "25,2,76;29,1,78" }), status: 422, error: "invalid_input", field: "X" },
  { name: "X an upload reference (v2 only)", body: quickstart({ X: "0123456789abcdef.json" }), status: 422, error: "invalid_input", field: "X" },
  {
    name: "X rows of different lengths",
    body: quickstart({ X: X.map((row, i) => (i === 1 ? row.slice(1) : row)) }),
    status: 422,
    error: "invalid_input",
    field: "X[1]",
  },
  { name: "a row of X null", body: quickstart({ X: X.map((row, i) => (i === 3 ? null : row)) }), status: 422, error: "invalid_input", field: "X[3]" },
  { name: "X nested too deep", body: quickstart({ X: X.map((row) => row.map((v) => [v])) }), status: 422, error: "invalid_input", field: "X[0][0]" },
  { name: "X empty", body: quickstart({ X: [] }), status: 422, error: "invalid_input", field: "X" },
  { name: "X of empty rows", body: { y: [1], X: [[]], theta: [] }, status: 422, error: "invalid_input", field: "X[0]" },
  { name: "y and X empty", body: { y: [], X: [], theta: [] }, status: 422, error: "invalid_input", field: "y" },
  {
    name: "N = K",
    body: {
      y: [1, 2, 3],
      X: [
        [1, 0, 0],
        [0, 1, 0],
        [0, 0, 1],
      ],
      theta: [1, 1, 1],
    },
    status: 422,
    error: "invalid_input",
    field: "X",
  },
  {
    name: "N < K",
    body: {
      y: [1, 2],
      X: [
        [1, 2, 3, 4],
        [4, 3, 2, 1],
      ],
      theta: [1, 1, 1, 1],
    },
    status: 422,
    error: "invalid_input",
    field: "X",
  },
  { name: "y shorter than X", body: quickstart({ y: y.slice(1) }), status: 422, error: "invalid_input", field: "y" },
  { name: "y a column of the wrong length", body: quickstart({ y: [[1], [2]] }), status: 422, error: "invalid_input", field: "y" },
  { name: "a missing outcome", body: quickstart({ y: y.map((v, i) => (i === 2 ? null : v)) }), status: 422, error: "invalid_input", field: "y[2]" },
  { name: "theta of the wrong length", body: quickstart({ theta: [1, 2, 3] }), status: 422, error: "invalid_input", field: "theta" },
  { name: "theta empty", body: quickstart({ theta: [] }), status: 422, error: "invalid_input", field: "theta" },
  { name: "theta rows of different lengths", body: quickstart({ theta: [theta, [1, 2]] }), status: 422, error: "invalid_input", field: "theta[1]" },
  { name: "a missing value in theta", body: quickstart({ theta: [24, 5, 81, 60, null] }), status: 422, error: "invalid_input", field: "theta[4]" },
  { name: "theta a string", body: quickstart({ theta: "24,5,81,60,11" }), status: 422, error: "invalid_input", field: "theta" },
  { name: "theta missing on PSR", body: { y, X }, status: 422, error: "invalid_input", field: "theta" },
  { name: "theta missing on MaxFit", path: "/v3/maxfit", body: { y, X }, status: 422, error: "invalid_input", field: "theta" },
  {
    name: "theta missing on Grid, the last row of X incomplete",
    path: "/v3/grid",
    body: { y, X: withX(6, 2, null) },
    status: 422,
    error: "invalid_input",
    field: "theta",
  },
  { name: "options an array", body: withOptions([1, 2] as never), status: 422, error: "invalid_input", field: "options" },
  { name: "options a string", body: quickstart({ options: "fast" }), status: 422, error: "invalid_input", field: "options" },
];

const OPTIONS: Row[] = [
  // the forbidden combinations (docs/api.md sections 2.1 and 4)
  { name: "PSR with censor_type both", body: withOptions({ censor_type: "both" }), status: 422, error: "invalid_input", field: "options.censor_type" },
  {
    name: "required_attributes with attribute_combi",
    path: "/v3/grid",
    body: withOptions({ required_attributes: [1, 0, 0, 0, 0], attribute_combi: [[1, 1, 0, 0, 0]] }),
    status: 422,
    error: "invalid_input",
    field: "options.required_attributes",
  },
  {
    name: "attribute_groups with attribute_combi",
    path: "/v3/grid",
    body: withOptions({ attribute_groups: [[1, 1, 0, 0, 0]], attribute_combi: [[1, 0, 0, 0, 0]] }),
    status: 422,
    error: "invalid_input",
    field: "options.attribute_groups",
  },
  {
    name: "allowed_k with min_k",
    path: "/v3/grid",
    body: withOptions({ allowed_k: [1, 3], min_k: 2 }),
    status: 422,
    error: "invalid_input",
    field: "options.min_k",
  },
  {
    name: "allowed_k with max_k",
    path: "/v3/grid",
    body: withOptions({ allowed_k: [1, 3], max_k: 4 }),
    status: 422,
    error: "invalid_input",
    field: "options.max_k",
  },
  { name: "max_k below min_k", path: "/v3/grid", body: withOptions({ min_k: 3, max_k: 2 }), status: 422, error: "invalid_input", field: "options.max_k" },
  {
    name: "k and min_k disagree",
    path: "/v3/grid",
    body: withOptions({ k: 2, min_k: 3 }),
    status: 422,
    error: "invalid_input",
    field: "options.min_k/options.k",
  },
  {
    name: "censor_type and eval_type disagree",
    path: "/v3/maxfit",
    body: withOptions({ censor_type: "relevance", eval_type: "similarity" }),
    status: 422,
    error: "invalid_input",
    field: "options.censor_type/options.eval_type",
  },
  {
    name: "threshold under options and at the top level disagree",
    body: quickstart({ threshold: [0.5], options: { threshold: [0.2] } }),
    status: 422,
    error: "invalid_input",
    field: "options.threshold/threshold",
  },
  {
    name: "required_attributes larger than max_k (no combination admissible)",
    path: "/v3/grid",
    body: withOptions({ required_attributes: [1, 1, 1, 0, 0], max_k: 2 }),
    status: 422,
    error: "invalid_input",
    field: "options",
    check: (r) => expect(r.body.message).toContain("required_attributes switch on 3 attributes but max_k is 2"),
  },
  {
    name: "attribute_groups that allow no size of allowed_k",
    path: "/v3/grid",
    body: withOptions({ attribute_groups: [[1, 1, 1, 1, 0]], allowed_k: [2, 3] }),
    status: 422,
    error: "invalid_input",
    field: "options",
    check: (r) => expect(r.body.message).toContain("allowed_k is [2, 3]"),
  },
  // values
  { name: "min_k above K", path: "/v3/grid", body: withOptions({ min_k: 6 }), status: 422, error: "invalid_input", field: "options.min_k" },
  { name: "allowed_k empty", path: "/v3/grid", body: withOptions({ allowed_k: [] }), status: 422, error: "invalid_input", field: "options.allowed_k" },
  { name: "allowed_k above K", path: "/v3/grid", body: withOptions({ allowed_k: [9] }), status: 422, error: "invalid_input", field: "options.allowed_k[0]" },
  { name: "a percent threshold above 1", body: withOptions({ threshold: [0, 1.5] }), status: 422, error: "invalid_input", field: "options.threshold[1]" },
  { name: "threshold empty", body: withOptions({ threshold: [] }), status: 422, error: "invalid_input", field: "options.threshold" },
  { name: "threshold a word", body: withOptions({ threshold: "high" }), status: 422, error: "invalid_input", field: "options.threshold" },
  { name: "an unknown censor_operator", body: withOptions({ censor_operator: "ge" }), status: 422, error: "invalid_input", field: "options.censor_operator" },
  {
    name: "an unknown objective",
    path: "/v3/maxfit",
    body: withOptions({ objective: "best" }),
    status: 422,
    error: "invalid_input",
    field: "options.objective",
  },
  { name: "inv_method a number", body: withOptions({ inv_method: 3 }), status: 422, error: "invalid_input", field: "options.inv_method" },
  { name: "seed beyond 2^32", path: "/v3/grid", body: withOptions({ seed: 2 ** 33 }), status: 422, error: "invalid_input", field: "options.seed" },
  { name: "max_iter not an integer", path: "/v3/grid", body: withOptions({ max_iter: 1.5 }), status: 422, error: "invalid_input", field: "options.max_iter" },
  {
    name: "cov_inv of the wrong size",
    body: withOptions({
      cov_inv: [
        [1, 0],
        [0, 1],
      ],
    }),
    status: 422,
    error: "invalid_input",
    field: "options.cov_inv",
  },
  {
    name: "overlapping attribute_groups",
    path: "/v3/grid",
    body: withOptions({
      attribute_groups: [
        [1, 1, 0, 0, 0],
        [0, 1, 1, 0, 0],
      ],
    }),
    status: 422,
    error: "invalid_input",
    field: "options.attribute_groups[1]",
  },
  {
    name: "an attribute_combi row of zeros",
    path: "/v3/grid",
    body: withOptions({ attribute_combi: [[0, 0, 0, 0, 0]] }),
    status: 422,
    error: "invalid_input",
    field: "options.attribute_combi[0]",
  },
  {
    name: "required_attributes not 0/1",
    path: "/v3/grid",
    body: withOptions({ required_attributes: [1, 2, 0, 0, 0] }),
    status: 422,
    error: "invalid_input",
    field: "options.required_attributes",
  },
  {
    name: "an unknown retain key",
    path: "/v3/grid",
    body: withOptions({ retain_grid_objects: ["everything"] }),
    status: 422,
    error: "invalid_input",
    field: "options.retain_grid_objects[0]",
  },
  {
    name: "include_linear_regression a word",
    body: withOptions({ include_linear_regression: "yes" }),
    status: 422,
    error: "invalid_input",
    field: "options.include_linear_regression",
  },
  {
    name: "threshold_range reversed",
    body: withOptions({ threshold_range: [0.5, 0.1], stepsize: 0.1 }),
    status: 422,
    error: "invalid_input",
    field: "options.threshold_range",
  },
  {
    name: "a negative stepsize",
    body: withOptions({ threshold_range: [0, 0.5], stepsize: -1 }),
    status: 422,
    error: "invalid_input",
    field: "options.stepsize",
  },
];

const SIZE_AND_ROUTES: Row[] = [
  {
    name: "a body over 10 MiB",
    body: () => JSON.stringify({ access_id: "alice", y, X, theta, pad: "x".repeat(10 * 1024 * 1024) }),
    status: 413,
    error: "payload_too_large",
    check: (r) => expect(r.body.limit).toBe(10 * 1024 * 1024),
  },
  {
    name: "GET on a POST route",
    method: "GET",
    path: "/v3/psr",
    status: 405,
    error: "method_not_allowed",
    check: (r) => expect(r.headers.get("allow")).toBe("POST"),
  },
  {
    name: "POST on a GET route",
    path: "/v3/quota",
    body: quickstart(),
    status: 405,
    error: "method_not_allowed",
    check: (r) => expect(r.headers.get("allow")).toBe("GET"),
  },
  { name: "DELETE a result", method: "DELETE", path: () => jobPath(made.aJob), status: 405, error: "method_not_allowed" },
  { name: "an unknown analysis", path: "/v3/regression", body: quickstart(), status: 404, error: "not_found" },
  { name: "an unknown route", method: "GET", path: "/v3/nothing/here", status: 404, error: "not_found" },
  { name: "an unknown version", method: "GET", path: "/v9/quota", status: 404, error: "not_found" },
  { name: "a path that is not valid percent-encoding", method: "GET", path: "/v3/results/%E0%A4%A/abc", status: 400, error: "bad_request" },
  {
    name: "an unknown field of a completed job",
    method: "GET",
    path: () => `/v3/jobs/${made.aJob.job_id}/${made.aJob.job_code}/insights/relevence`,
    status: 404,
    error: "not_found",
    field: "insights/relevence",
  },
];

const TABLE = [...AUTH, ...JSON_TEXT, ...SHAPES, ...OPTIONS, ...SIZE_AND_ROUTES];

async function send(row: Row): Promise<Reply> {
  const method = row.method ?? "POST";
  const path = typeof row.path === "function" ? row.path() : (row.path ?? "/v3/psr");
  const key = row.key === undefined ? KEYS.a : row.key;
  const headers: Record<string, string> = {};
  if (key !== null) headers["x-api-key"] = key;
  let body: string | undefined;
  if (row.body !== undefined) {
    headers["content-type"] = "application/json";
    const raw = typeof row.body === "function" ? row.body() : row.body;
    body = typeof raw === "string" ? raw : JSON.stringify({ access_id: "alice", ...raw });
  }
  const res = await fetch(service.url + path, { method, headers, body });
  const text = await res.text();
  expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
  let parsed: unknown;
  expect(() => (parsed = JSON.parse(text)), `not JSON: ${text.slice(0, 200)}`).not.toThrow();
  return { status: res.status, headers: res.headers, body: parsed };
}

describe("the bad-input table", () => {
  it("has at least 40 rows, each named once", () => {
    expect(TABLE.length).toBeGreaterThanOrEqual(40);
    expect(new Set(TABLE.map((r) => r.name)).size).toBe(TABLE.length);
  });

  it.each(TABLE.map((row) => [row.name, row] as const))("%s", async (_name, row) => {
    const reply = await send(row);
    const summary = JSON.stringify(reply.body).slice(0, 300);
    expect(reply.status, summary).toBe(row.status);
    const shape = ErrorBodySchema.safeParse(reply.body);
    expect(shape.success, summary).toBe(true);
    expect(reply.body).toMatchObject({ error: row.error, status_code: row.status, error_code: [400, 413, 422].includes(row.status) ? 4 : 1 });
    expect(reply.body.message).toBeTypeOf("string");
    expect(reply.body.message.length).toBeGreaterThan(0);
    if (row.field !== undefined) {
      expect(reply.body.field, summary).toBe(row.field);
      expect(reply.body.details?.[0]?.field).toBe(row.field);
      if (row.error === "invalid_input") expect(reply.body.message).toContain(row.field);
    }
    // secrets are never echoed
    expect(JSON.stringify(reply.body)).not.toMatch(/bad-inputs-key/);
    row.check?.(reply);
  });

  it("refusals cost nothing: every organisation's quota is as before the table", async () => {
    expect((await a.get("/v3/quota")).body).toMatchObject({ quota: 1000, used: 3 });
    expect((await b.get("/v3/quota")).body).toMatchObject({ quota: 1000, used: 3 });
    expect((await a.as(KEYS.broke).get("/v3/quota")).body).toMatchObject({ quota: 0, used: 0, remaining: 0 });
  });
});

describe("NaN tokens in X are missing values", () => {
  it("a bare NaN in X is read as null: accepted, and the same result as null", async () => {
    const withNaN = await a.post("/v3/psr", rawWith(quickstart({ X: withX(2, 1, "@NaN@") })));
    expect(withNaN.status, JSON.stringify(withNaN.body)).toBe(200);
    const withNull = await a.post("/v3/psr", quickstart({ X: withX(2, 1, null) }));
    const [r1, r2] = [await a.poll(jobPath(withNaN.body)), await a.poll(jobPath(withNull.body))];
    expect(r1.status).toBe(200);
    expect(r1.body.results).toEqual(r2.body.results);
    expect(r1.body.results.insights.relevance[2]).toBeNull();
  });

  it("the lenient parse reads only bare tokens in value positions", () => {
    const read = (text: string) => JSON.stringify(parseJsonLenient(text), (_k, v) => (typeof v === "number" && !Number.isFinite(v) ? String(v) : v));
    expect(read('{"a": NaN, "b": [1,-Infinity, Infinity ]}')).toBe('{"a":null,"b":[1,"-Infinity","Infinity"]}');
    expect(read('{"s": "x\\"NaN", "t": "y\\\\", "u": NaN}')).toBe('{"s":"x\\"NaN","t":"y\\\\","u":null}');
    expect(read("NaN")).toBe("null");
    for (const bad of ["[NaNa]", "[NaN1]", "{NaN: 1}", "[1 NaN]", "[-NaN]", "[+Infinity]", "[Inf]", '["a" NaN]']) {
      expect(() => parseJsonLenient(bad), bad).toThrow(SyntaxError);
    }
  });

  it("NaN inside a string is text, not a token", async () => {
    const r = await a.post("/v3/psr", rawWith(quickstart({ note: "NaN, Infinity", X: withX(0, 0, "@NaN@") })));
    expect(r.status).toBe(200);
    expect(r.body.warnings.join(" ")).toContain("note");
    expect((await a.poll(jobPath(r.body))).status).toBe(200);
  });
});
