/**
 * Fuzzing the v3 API over loopback HTTP with fast-check (fixed seeds, bounded runs): whatever
 * arrives, the service answers with JSON and never with a 5xx.
 *
 * - random JSON bodies (any JSON value; objects with the request's own keys and junk keys) POSTed
 *   to /grid, /maxfit and /psr;
 * - mutated valid bodies: the quickstart body with one to three values replaced (a wrong type at
 *   any key, an element of y, X or theta, any option; huge and tiny numbers, nested junk, strings
 *   in X, nulls, plausible option values), sometimes then damaged as text (truncated, a number
 *   turned into a NaN / Infinity token, a byte changed);
 * - random methods and paths (known prefixes, random segments, bad percent-encoding, random field
 *   paths under a real completed job), with and without a key.
 *
 * Every reply: status < 500, a JSON body, and for 4xx the error shape. Every POST that was
 * accepted runs to an end (200 or 409), and the service never logs an internal error.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPTION_KEYS } from "../../src/api/options.js";
import { ErrorBodySchema } from "../../src/api/schemas.js";
import type { LocalService } from "../../src/service/index.js";
import { Client, gold, quickstart, start } from "./helpers.js";

const RUNS = 300;
let service: LocalService;
let client: Client;
const logs: string[] = [];
const accepted: Array<{ job_id: number; job_code: string }> = [];
let completed: { job_id: number; job_code: string };

beforeAll(async () => {
  ({ service, client } = await start({ workers: 2, log: (line) => logs.push(line) }));
  completed = (await client.post("/v3/grid", quickstart())).body;
  expect((await client.poll(`/v3/results/${completed.job_id}/${completed.job_code}`)).status).toBe(200);
});
afterAll(() => service?.close());

interface Sent {
  method: string;
  path: string;
  body?: string;
  key?: string | null;
}

/** Sends one request and checks the invariants of every reply. */
async function check(req: Sent): Promise<void> {
  const headers: Record<string, string> = {};
  const key = req.key === undefined ? client.apiKey! : req.key;
  if (key !== null) headers["x-api-key"] = key;
  if (req.body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(service.url + req.path, { method: req.method, headers, body: req.body });
  const text = await res.text();
  const what = `${req.method} ${req.path} ${(req.body ?? "").slice(0, 300)} -> ${res.status} ${text.slice(0, 300)}`;
  expect(res.status, what).toBeLessThan(500);
  expect(res.headers.get("content-type"), what).toBe("application/json; charset=utf-8");
  let body: any;
  expect(() => (body = JSON.parse(text)), what).not.toThrow();
  if (res.status >= 400) {
    expect(ErrorBodySchema.safeParse(body).success, what).toBe(true);
    expect(body.status_code, what).toBe(res.status);
  } else {
    expect(typeof body === "object" && body !== null && !Array.isArray(body), what).toBe(true);
  }
  if (req.method === "POST" && res.status === 200) {
    if (body.jobs) accepted.push(...body.jobs);
    else accepted.push(body);
  }
}

// ---------------------------------------------------------------------------------------------
// Arbitraries

const analysis = fc.constantFrom("grid", "maxfit", "psr");
const prefix = fc.constantFrom("/v3", "/v3/prediction-engine");
const optionKeys = [...new Set([...OPTION_KEYS.grid, ...OPTION_KEYS.psr, ...OPTION_KEYS.maxfit])];
const bodyKeys = ["access_id", "y", "X", "theta", "options"];

const number = fc.oneof(fc.double(), fc.integer(), fc.constantFrom(0, -0, 1, -1, 0.5, 1e308, -1e308, 5e-324, 2 ** 53 + 2, 2 ** 32, 1e21, 4294967295, 16383));
/** Values an option might plausibly hold, to get past the first checks and into the engine. */
const plausible = fc.oneof(
  fc.constantFrom("both", "relevance", "similarity", "percent", "score", "gte", "lt", "logistic", "response", "pseudoinverse", "cholesky"),
  fc.constantFrom("kfit", "fit", "adjusted_fit", "K", "log", "identity", "off", "auto", "complete", "pairwise", "all", "none", "true"),
  fc.constantFrom(
    [0, 0.5],
    [0.2],
    [1, 0, 0, 0, 0],
    [0, 1, 1, 0, 0],
    [[1, 1, 0, 0, 0]],
    [
      [0, 0, 1, 1, 0],
      [1, 0, 0, 0, 0],
    ],
    [1, 3],
    [5],
    [],
  ),
  fc.integer({ min: -1, max: 6 }),
  fc.double({ min: -1, max: 2, noNaN: true }),
  fc.boolean(),
);
const junk: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    number,
    fc.string({ unit: "binary", maxLength: 12 }),
    fc.constantFrom(null, "", "NaN", "1", "Infinity", "0123456789abcdef.json"),
    fc.boolean(),
    plausible,
    fc.array(tie("value"), { maxLength: 6 }),
    fc.dictionary(fc.string({ maxLength: 6 }), tie("value"), { maxKeys: 4 }),
    fc.array(fc.array(number, { maxLength: 6 }), { maxLength: 8 }),
  ),
})).value;

const randomBody = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v) ?? "null"),
  fc
    .dictionary(fc.oneof(fc.constantFrom(...bodyKeys, ...optionKeys, "__proto__", "constructor"), fc.string({ maxLength: 8 })), junk, { maxKeys: 8 })
    .chain((d) => fc.boolean().map((withAccess) => JSON.stringify(withAccess ? { ...d, access_id: client.accessId } : d))),
);

const N = gold.inputs.y.length;
const K = gold.inputs.theta.length;
type Path = Array<string | number>;
const mutationPath: fc.Arbitrary<Path> = fc.oneof(
  fc.constantFrom<Path>(["y"], ["X"], ["theta"], ["options"], ["access_id"], ["threshold"], ["eval_type"], ["k"]),
  fc.tuple(fc.constant("y"), fc.nat(N - 1)),
  fc.tuple(fc.constant("X"), fc.nat(N - 1)),
  fc.tuple(fc.constant("X"), fc.nat(N - 1), fc.nat(K - 1)),
  fc.tuple(fc.constant("theta"), fc.nat(K - 1)),
  { arbitrary: fc.tuple(fc.constant("options"), fc.constantFrom(...optionKeys)), weight: 4 },
);

function setAt(target: any, path: Path, value: unknown): void {
  let node = target;
  for (let i = 0; i < path.length - 1; i++) {
    const step = path[i];
    // an earlier mutation may have replaced a container: make a fresh one
    if (typeof node[step] !== "object" || node[step] === null) node[step] = typeof path[i + 1] === "number" ? [] : {};
    node = node[step];
  }
  node[path[path.length - 1]] = value;
}

/** Damage to the text of a body. */
const textDamage = fc.oneof(
  { arbitrary: fc.constant((t: string) => t), weight: 5 },
  fc.nat().map((n) => (t: string) => t.slice(0, n % (t.length + 1))),
  fc.tuple(fc.nat(), fc.constantFrom("NaN", "Infinity", "-Infinity", "1e999", "-0", "null")).map(([n, token]) => (t: string) => {
    const numbers = [...t.matchAll(/-?\d+(\.\d+)?(e[+-]?\d+)?/g)];
    if (numbers.length === 0) return t;
    const m = numbers[n % numbers.length];
    return t.slice(0, m.index) + token + t.slice(m.index! + m[0].length);
  }),
  fc.tuple(fc.nat(), fc.constantFrom("{", "}", "[", "]", ",", ":", '"', "\\", "\u0000", "é")).map(([n, ch]) => (t: string) => {
    const i = n % (t.length + 1);
    return t.slice(0, i) + ch + t.slice(i + 1);
  }),
);

const mutatedBody = fc
  .tuple(
    fc.boolean(),
    fc.array(
      mutationPath.chain((path) => {
        // options mostly get plausible values, so that many bodies reach the engine and run
        const option = path[0] === "options" || (path.length === 1 && !["y", "X", "theta", "access_id"].includes(path[0] as string));
        // elements of y, X and theta mostly get numbers (huge, tiny, negative zero) or null
        const element = path.length > 1 && path[0] !== "options";
        const value = option
          ? fc.oneof({ arbitrary: plausible, weight: 4 }, { arbitrary: junk, weight: 1 })
          : element
            ? fc.oneof({ arbitrary: number, weight: 3 }, { arbitrary: fc.constant(null), weight: 1 }, { arbitrary: junk, weight: 1 })
            : junk;
        return value.map((v) => [path, v] as const);
      }),
      { minLength: 1, maxLength: 3 },
    ),
    textDamage,
  )
  .map(([experiment, mutations, damage]) => {
    // a deep copy: quickstart() shares the gold arrays
    const body: any = structuredClone({ access_id: client.accessId, ...quickstart(), options: {} });
    if (experiment) body.theta = structuredClone([gold.inputs.theta, gold.inputs.X[1]]);
    for (const [path, value] of mutations) setAt(body, path, value);
    return damage(JSON.stringify(body));
  });

const segment = fc.oneof(
  fc.constantFrom(
    "grid",
    "psr",
    "maxfit",
    "results",
    "jobs",
    "experiments",
    "quota",
    "insights",
    "Impact%20on%20Fit",
    "yhat",
    "..",
    ".",
    "%",
    "%zz",
    "%2F",
    "%00",
  ),
  fc.nat({ max: 20 }).map(String),
  fc.stringMatching(/^[0-9a-f]{16}$/),
  fc.string({ maxLength: 10 }).map(encodeURIComponent),
  fc.string({ unit: "binary", maxLength: 6 }).map((s) => encodeURIComponent(s.replace(/[\uD800-\uDFFF]/g, "x"))),
);
const randomRequest = fc
  .tuple(
    fc.constantFrom("GET", "GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"),
    fc.constantFrom("", "/v3", "/v3/prediction-engine", "/v2/prediction-engine", "/v3/jobs", "/v3/results", "/v3/experiments", "field"),
    fc.array(segment, { maxLength: 5 }),
    fc.option(fc.constantFrom("?x=1", "?job_id=1&job_code=0", "?%zz", "#frag"), { nil: undefined }),
    fc.constantFrom<string | null | undefined>(undefined, undefined, undefined, null, "wrong-key"),
    fc.option(
      fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v) ?? "null"),
      { nil: undefined },
    ),
  )
  .map(([method, base, segments, query, key, body]): Sent => {
    const head = base === "field" ? `/v3/jobs/${completed.job_id}/${completed.job_code}` : base;
    return {
      method,
      path: `${head}/${segments.join("/")}${query ?? ""}`,
      key,
      body: method === "GET" || method === "OPTIONS" ? undefined : body,
    };
  });

// ---------------------------------------------------------------------------------------------

describe("fuzz: never a 5xx, always JSON", () => {
  it("random JSON bodies to the three analyses", async () => {
    await fc.assert(
      fc.asyncProperty(prefix, analysis, randomBody, async (p, a, body) => check({ method: "POST", path: `${p}/${a}`, body })),
      { seed: 20240601, numRuns: RUNS },
    );
  }, 30_000);

  it("mutated valid bodies: wrong types, huge numbers, nested junk, strings in X, nulls, damaged text", async () => {
    await fc.assert(
      fc.asyncProperty(analysis, mutatedBody, async (a, body) => check({ method: "POST", path: `/v3/${a}`, body })),
      { seed: 4242, numRuns: RUNS },
    );
  }, 30_000);

  it("random methods and paths", async () => {
    await fc.assert(
      fc.asyncProperty(randomRequest, async (req) => check(req)),
      { seed: 777, numRuns: RUNS },
    );
  }, 30_000);

  it("every accepted POST runs to an end, and nothing was logged as an internal error", async () => {
    expect(accepted.length).toBeGreaterThan(0);
    for (const r of accepted) {
      const end = await client.poll(`/v3/results/${r.job_id}/${r.job_code}`, 30_000);
      expect([200, 409], JSON.stringify(end.body).slice(0, 300)).toContain(end.status);
    }
    expect(logs.filter((line) => line.includes("internal error"))).toEqual([]);
    expect(logs.filter((line) => / 5\d\d \d+ms$/.test(line))).toEqual([]);
  }, 30_000);
});
