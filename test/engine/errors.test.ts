/**
 * Invalid inputs: each must throw the right class (InvalidInputError for what the caller got wrong,
 * ComputationError for what cannot be computed), naming the field at fault and saying why.
 */
import { describe, expect, it } from "vitest";
import { ComputationError, grid, InvalidInputError, maxfit, psr, type Dataset } from "../../src/engine/index.js";
import { datasetFromRows } from "../../src/engine/data.js";

/** 10 rows, K = 3, well conditioned. */
const ROWS = [
  [0.5, 1.2, -0.3],
  [1.1, -0.4, 0.8],
  [-0.7, 0.9, 1.5],
  [2.0, 0.1, -1.1],
  [0.3, -1.3, 0.4],
  [-1.2, 0.6, -0.6],
  [0.9, 1.7, 0.2],
  [-0.1, -0.8, -1.4],
  [1.6, 0.3, 1.0],
  [-0.5, -0.2, 0.7],
];
const Y = [1.2, 0.4, 2.2, -0.3, 0.9, 1.5, 2.8, -1.0, 1.9, 0.6];
const K = 3;
const base = (): Dataset => datasetFromRows(Y, ROWS);
const theta = () => Float64Array.from([0.2, 0.5, -0.1]);

/** The dataset with one X value replaced. */
function withX(i: number, j: number, value: number): Dataset {
  const d = base();
  const X = Float64Array.from(d.X);
  X[i * K + j] = value;
  return { ...d, X };
}

function withY(i: number, value: number): Dataset {
  const d = base();
  const y = Float64Array.from(d.y);
  y[i] = value;
  return { ...d, y };
}

/** Seven of the ten rows miss one value each: 3 complete rows for K = 3. */
function fewCompleteRows(): Dataset {
  const d = base();
  const X = Float64Array.from(d.X);
  for (let i = 0; i < 7; i++) X[i * K + (i % K)] = NaN;
  return { ...d, X };
}

/** Column 2 replaced by a copy of column 0: the covariance is exactly singular. */
function duplicateColumn(): Dataset {
  return datasetFromRows(
    Y,
    ROWS.map((r) => [r[0], r[1], r[0]]),
  );
}

type Run = () => unknown;
type ErrorClass = typeof InvalidInputError | typeof ComputationError;
interface Row {
  name: string;
  run: Run;
  error: ErrorClass;
  field: string;
  message: string;
}

// Option values the types do not allow, as a caller without types would send them.
const bad = <T>(value: unknown) => value as T;

const rows: Row[] = [
  // Shapes and finiteness (checkData).
  {
    name: "y shorter than X",
    run: () => psr({ ...base(), y: Float64Array.from(Y.slice(1)) }, theta()),
    error: InvalidInputError,
    field: "y",
    message: "one per row of X",
  },
  {
    name: "y longer than X",
    run: () => grid({ ...base(), y: Float64Array.from([...Y, 1]) }, theta()),
    error: InvalidInputError,
    field: "y",
    message: "got 11",
  },
  { name: "X values not rows x cols", run: () => psr({ ...base(), rows: 9 }, theta()), error: InvalidInputError, field: "X", message: "9 rows of 3 values" },
  {
    name: "ragged rows in datasetFromRows",
    run: () => datasetFromRows([1, 2], [[1, 2], [3]]),
    error: InvalidInputError,
    field: "X[1]",
    message: "2 values like the first row",
  },
  { name: "theta shorter than K", run: () => psr(base(), Float64Array.from([1, 2])), error: InvalidInputError, field: "theta", message: "one per column of X" },
  { name: "theta longer than K", run: () => maxfit(base(), Float64Array.from([1, 2, 3, 4])), error: InvalidInputError, field: "theta", message: "K=3" },
  {
    name: "N <= K (N = K)",
    run: () =>
      psr(
        datasetFromRows(
          [1, 2, 3],
          [
            [1, 0, 0],
            [0, 1, 0],
            [0, 0, 1],
          ],
        ),
        theta(),
      ),
    error: InvalidInputError,
    field: "X",
    message: "more rows than columns",
  },
  {
    name: "N < K",
    run: () =>
      grid(
        datasetFromRows(
          [1, 2],
          [
            [1, 0, 0],
            [0, 1, 0],
          ],
        ),
        theta(),
      ),
    error: InvalidInputError,
    field: "X",
    message: "N=2 rows and K=3",
  },
  { name: "NaN in y", run: () => psr(withY(3, NaN), theta()), error: InvalidInputError, field: "y[3]", message: "a finite number" },
  { name: "Infinity in y", run: () => maxfit(withY(0, Infinity), theta()), error: InvalidInputError, field: "y[0]", message: "got Infinity" },
  { name: "-Infinity in y", run: () => grid(withY(9, -Infinity), theta()), error: InvalidInputError, field: "y[9]", message: "a finite number" },
  { name: "NaN in theta", run: () => psr(base(), Float64Array.from([0, NaN, 0])), error: InvalidInputError, field: "theta[1]", message: "a finite number" },
  {
    name: "Infinity in theta",
    run: () => grid(base(), Float64Array.from([0, 0, Infinity])),
    error: InvalidInputError,
    field: "theta[2]",
    message: "got Infinity",
  },
  {
    name: "Infinity in X",
    run: () => psr(withX(4, 1, Infinity), theta()),
    error: InvalidInputError,
    field: "X[4][1]",
    message: "a finite number or a missing value",
  },
  { name: "-Infinity in X (Grid)", run: () => grid(withX(0, 2, -Infinity), theta()), error: InvalidInputError, field: "X[0][2]", message: "got -Infinity" },
  {
    name: "too few complete rows for K (pseudoinverse)",
    run: () => psr(fewCompleteRows(), theta(), { missing_moments: "complete", inv_method: "pseudoinverse" }),
    error: InvalidInputError,
    field: "X",
    message: "more rows with every used attribute present than attributes",
  },
  {
    // Found by this table: the covariance of <= K complete rows is singular, so buildModel throws
    // ComputationError("... use inv_method: pseudoinverse") before psr.ts checks usableCount <= K;
    // the caller is sent to the wrong option.
    name: "too few complete rows for K (gaussian) is an InvalidInputError on X, not a singular covariance",
    run: () => psr(fewCompleteRows(), theta(), { missing_moments: "complete" }),
    error: InvalidInputError,
    field: "X",
    message: "more rows with every used attribute present than attributes",
  },
  {
    name: "too few complete rows with pairwise moments (MaxFit, gaussian)",
    run: () => maxfit(fewCompleteRows(), theta(), { missing_moments: "pairwise" }),
    error: InvalidInputError,
    field: "X",
    message: "more rows with every used attribute present than attributes",
  },

  // Enumerated options.
  {
    name: "unknown censor_type (PSR)",
    run: () => psr(base(), theta(), { censor_type: bad("relevant") }),
    error: InvalidInputError,
    field: "options.censor_type",
    message: 'one of "relevance", "similarity"',
  },
  {
    name: "unknown censor_type (MaxFit)",
    run: () => maxfit(base(), theta(), { censor_type: bad("all") }),
    error: InvalidInputError,
    field: "options.censor_type",
    message: '"both"',
  },
  {
    name: "unknown censor_type (Grid)",
    run: () => grid(base(), theta(), { censor_type: bad("Relevance") }),
    error: InvalidInputError,
    field: "options.censor_type",
    message: 'got "Relevance"',
  },
  {
    name: "PSR with censor_type both",
    run: () => psr(base(), theta(), { censor_type: bad("both") }),
    error: InvalidInputError,
    field: "options.censor_type",
    message: "PSR evaluates one censor",
  },
  {
    name: "unknown censor_unit",
    run: () => psr(base(), theta(), { censor_unit: bad("percentile") }),
    error: InvalidInputError,
    field: "options.censor_unit",
    message: 'one of "percent", "score"',
  },
  {
    name: "unknown censor_operator",
    run: () => maxfit(base(), theta(), { censor_operator: bad(">=") }),
    error: InvalidInputError,
    field: "options.censor_operator",
    message: '"gt", "gte", "lt", "lte"',
  },
  {
    name: "unknown adj_fit_multiplier",
    run: () => grid(base(), theta(), { adj_fit_multiplier: bad("k") }),
    error: InvalidInputError,
    field: "options.adj_fit_multiplier",
    message: '"identity", "K", "log"',
  },
  {
    name: "unknown inv_method",
    run: () => psr(base(), theta(), { inv_method: bad("lu") }),
    error: InvalidInputError,
    field: "options.inv_method",
    message: '"gaussian", "cholesky", "pseudoinverse"',
  },
  {
    name: "unknown missing_moments (PSR)",
    run: () => psr(base(), theta(), { missing_moments: bad("listwise") }),
    error: InvalidInputError,
    field: "options.missing_moments",
    message: '"pairwise", "complete"',
  },
  {
    name: "unknown missing_moments (MaxFit)",
    run: () => maxfit(base(), theta(), { missing_moments: bad(1) }),
    error: InvalidInputError,
    field: "options.missing_moments",
    message: "got 1",
  },
  {
    name: "unknown prediction_scale",
    run: () => grid(base(), theta(), { prediction_scale: bad("binary") }),
    error: InvalidInputError,
    field: "options.prediction_scale",
    message: '"response", "logistic"',
  },
  {
    name: "unknown objective (MaxFit)",
    run: () => maxfit(base(), theta(), { objective: bad("k_fit") }),
    error: InvalidInputError,
    field: "options.objective",
    message: '"fit", "adjusted_fit", "kfit"',
  },
  {
    name: "unknown objective (Grid)",
    run: () => grid(base(), theta(), { objective: bad("r2") }),
    error: InvalidInputError,
    field: "options.objective",
    message: 'got "r2"',
  },
  {
    name: "unknown retain key",
    run: () => grid(base(), theta(), { retain: [bad("yhat")] }),
    error: InvalidInputError,
    field: "options.retain[0]",
    message: "yhat_cells",
  },

  // Thresholds.
  {
    name: "percent threshold above 1",
    run: () => psr(base(), theta(), { threshold: [0.5, 1.5] }),
    error: InvalidInputError,
    field: "options.threshold[1]",
    message: "between 0 and 1",
  },
  {
    name: "percent threshold below 0",
    run: () => grid(base(), theta(), { threshold: [-0.1] }),
    error: InvalidInputError,
    field: "options.threshold[0]",
    message: "got -0.1",
  },
  {
    name: "NaN threshold",
    run: () => maxfit(base(), theta(), { threshold: [NaN] }),
    error: InvalidInputError,
    field: "options.threshold[0]",
    message: "a finite number",
  },
  {
    name: "empty threshold list",
    run: () => psr(base(), theta(), { threshold: [] }),
    error: InvalidInputError,
    field: "options.threshold",
    message: "non-empty list",
  },
  {
    name: "empty threshold list (Grid)",
    run: () => grid(base(), theta(), { threshold: [] }),
    error: InvalidInputError,
    field: "options.threshold",
    message: "non-empty list",
  },

  // Grid combination options.
  {
    name: "required_attributes with attribute_combi",
    run: () => grid(base(), theta(), { attribute_combi: [[1, 0, 1]], required_attributes: [1, 0, 0] }),
    error: InvalidInputError,
    field: "options.required_attributes",
    message: "attribute_combi",
  },
  {
    name: "attribute_groups with attribute_combi",
    run: () => grid(base(), theta(), { attribute_combi: [[1, 1, 0]], attribute_groups: [[1, 1, 0]] }),
    error: InvalidInputError,
    field: "options.attribute_groups",
    message: "attribute_combi",
  },
  {
    name: "allowed_k with min_k",
    run: () => grid(base(), theta(), { allowed_k: [2], min_k: 1 }),
    error: InvalidInputError,
    field: "options.min_k",
    message: "allowed_k replaces min_k and max_k",
  },
  {
    name: "allowed_k with max_k",
    run: () => grid(base(), theta(), { allowed_k: [2], max_k: 3 }),
    error: InvalidInputError,
    field: "options.max_k",
    message: "allowed_k replaces min_k and max_k",
  },
  { name: "min_k 0", run: () => grid(base(), theta(), { min_k: 0 }), error: InvalidInputError, field: "options.min_k", message: "between 1 and K=3" },
  { name: "min_k K+1", run: () => grid(base(), theta(), { min_k: 4 }), error: InvalidInputError, field: "options.min_k", message: "got 4" },
  { name: "min_k not an integer", run: () => grid(base(), theta(), { min_k: 1.5 }), error: InvalidInputError, field: "options.min_k", message: "an integer" },
  { name: "max_k 0", run: () => grid(base(), theta(), { max_k: 0 }), error: InvalidInputError, field: "options.max_k", message: "between 1 and K=3" },
  {
    name: "max_k < min_k",
    run: () => grid(base(), theta(), { min_k: 3, max_k: 2 }),
    error: InvalidInputError,
    field: "options.max_k",
    message: ">= min_k (3)",
  },
  {
    name: "allowed_k containing 0",
    run: () => grid(base(), theta(), { allowed_k: [0, 2] }),
    error: InvalidInputError,
    field: "options.allowed_k[0]",
    message: "between 1 and K=3",
  },
  {
    name: "allowed_k containing K+1",
    run: () => grid(base(), theta(), { allowed_k: [1, 4] }),
    error: InvalidInputError,
    field: "options.allowed_k[1]",
    message: "got 4",
  },
  {
    name: "empty allowed_k",
    run: () => grid(base(), theta(), { allowed_k: [] }),
    error: InvalidInputError,
    field: "options.allowed_k",
    message: "non-empty list",
  },
  {
    name: "attribute_combi mask of wrong length",
    run: () =>
      grid(base(), theta(), {
        attribute_combi: [
          [1, 0, 1],
          [1, 0],
        ],
      }),
    error: InvalidInputError,
    field: "options.attribute_combi[1]",
    message: "3 values, each 0 or 1",
  },
  {
    name: "attribute_combi mask with a 2",
    run: () => grid(base(), theta(), { attribute_combi: [[1, 2, 0]] }),
    error: InvalidInputError,
    field: "options.attribute_combi[0]",
    message: "each 0 or 1",
  },
  {
    name: "attribute_combi row of zeros",
    run: () => grid(base(), theta(), { attribute_combi: [[0, 0, 0]] }),
    error: InvalidInputError,
    field: "options.attribute_combi[0]",
    message: "at least one attribute",
  },
  {
    name: "empty attribute_combi",
    run: () => grid(base(), theta(), { attribute_combi: [] }),
    error: InvalidInputError,
    field: "options.attribute_combi",
    message: "non-empty list",
  },
  {
    name: "required_attributes of wrong length",
    run: () => grid(base(), theta(), { required_attributes: [1, 0, 0, 0] }),
    error: InvalidInputError,
    field: "options.required_attributes",
    message: "3 values, each 0 or 1",
  },
  {
    name: "required_attributes with a 2",
    run: () => grid(base(), theta(), { required_attributes: [0, 2, 0] }),
    error: InvalidInputError,
    field: "options.required_attributes",
    message: "each 0 or 1",
  },
  {
    name: "attribute_groups row of wrong length",
    run: () => grid(base(), theta(), { attribute_groups: [[1, 1]] }),
    error: InvalidInputError,
    field: "options.attribute_groups[0]",
    message: "3 values, each 0 or 1",
  },
  {
    name: "attribute_groups row with a 2",
    run: () =>
      grid(base(), theta(), {
        attribute_groups: [
          [1, 0, 0],
          [0, 2, 1],
        ],
      }),
    error: InvalidInputError,
    field: "options.attribute_groups[1]",
    message: "each 0 or 1",
  },
  {
    name: "overlapping attribute_groups",
    run: () =>
      grid(base(), theta(), {
        attribute_groups: [
          [1, 1, 0],
          [0, 1, 1],
        ],
      }),
    error: InvalidInputError,
    field: "options.attribute_groups[1]",
    message: "attribute 1 is already in group 0",
  },
  {
    name: "required_attributes beyond max_k",
    run: () => grid(base(), theta(), { required_attributes: [1, 1, 1], max_k: 2 }),
    error: InvalidInputError,
    field: "options",
    message: "admit at least one attribute combination",
  },
  { name: "max_iter 0", run: () => grid(base(), theta(), { max_iter: 0 }), error: InvalidInputError, field: "options.max_iter", message: "an integer >= 1" },
  {
    name: "max_iter not an integer",
    run: () => grid(base(), theta(), { max_iter: 2.5 }),
    error: InvalidInputError,
    field: "options.max_iter",
    message: "got 2.5",
  },
  { name: "seed -1", run: () => grid(base(), theta(), { seed: -1 }), error: InvalidInputError, field: "options.seed", message: "an integer in [0, 2^32)" },
  { name: "seed 2^32", run: () => grid(base(), theta(), { seed: 2 ** 32 }), error: InvalidInputError, field: "options.seed", message: "got 4294967296" },

  // Other options.
  {
    name: "cov_inv of wrong size",
    run: () => psr(base(), theta(), { cov_inv: new Float64Array(4) }),
    error: InvalidInputError,
    field: "options.cov_inv",
    message: "3 x 3",
  },
  {
    name: "include_linear_regression not a boolean",
    run: () => psr(base(), theta(), { include_linear_regression: bad("yes") }),
    error: InvalidInputError,
    field: "options.include_linear_regression",
    message: "true or false",
  },

  // Logistic scale.
  {
    name: "logistic scale with y not 0/1 (PSR)",
    run: () => psr(base(), theta(), { prediction_scale: "logistic" }),
    error: InvalidInputError,
    field: "y[0]",
    message: '0 or 1 when prediction_scale is "logistic"',
  },
  {
    name: "logistic scale with y not 0/1 (Grid)",
    run: () => grid(datasetFromRows([0, 1, 1, 0, 0.5, 1, 0, 1, 0, 1], ROWS), theta(), { prediction_scale: "logistic" }),
    error: InvalidInputError,
    field: "y[4]",
    message: "got 0.5",
  },
  {
    name: "logistic scale with a single class",
    run: () => maxfit(datasetFromRows(new Array(10).fill(1), ROWS), theta(), { prediction_scale: "logistic" }),
    error: InvalidInputError,
    field: "y",
    message: "both 0s and 1s",
  },

  // Singular covariance.
  {
    name: "singular covariance, gaussian (PSR)",
    run: () => psr(duplicateColumn(), theta(), { inv_method: "gaussian" }),
    error: ComputationError,
    field: "options.inv_method",
    message: 'inv_method: "pseudoinverse"',
  },
  {
    name: "singular covariance, cholesky (PSR)",
    run: () => psr(duplicateColumn(), theta(), { inv_method: "cholesky" }),
    error: ComputationError,
    field: "options.inv_method",
    message: 'inv_method: "pseudoinverse"',
  },
  {
    name: "singular covariance, default inv_method (MaxFit)",
    run: () => maxfit(duplicateColumn(), theta()),
    error: ComputationError,
    field: "options.inv_method",
    message: 'inv_method: "pseudoinverse"',
  },
  {
    name: "singular covariance, cholesky (MaxFit)",
    run: () => maxfit(duplicateColumn(), theta(), { inv_method: "cholesky" }),
    error: ComputationError,
    field: "options.inv_method",
    message: 'inv_method: "pseudoinverse"',
  },
  {
    name: "constant column, gaussian (PSR)",
    run: () =>
      psr(
        datasetFromRows(
          Y,
          ROWS.map((r) => [r[0], 3, r[2]]),
        ),
        theta(),
      ),
    error: ComputationError,
    field: "options.inv_method",
    message: 'inv_method: "pseudoinverse"',
  },
  {
    name: "Grid where every cell is invalid",
    run: () => grid(base(), theta(), { threshold: [1], censor_operator: "gt" }),
    error: ComputationError,
    field: "options.threshold",
    message: "Every Grid cell is invalid",
  },
  {
    name: "MaxFit where no threshold retains 2 rows",
    run: () => maxfit(base(), theta(), { threshold: [1], censor_operator: "gt" }),
    error: ComputationError,
    field: "options.threshold",
    message: "lower the thresholds",
  },
];

describe("invalid inputs", () => {
  it("the table has at least 30 rows", () => {
    expect(rows.length).toBeGreaterThanOrEqual(30);
  });

  it.each(rows)("$name -> $error.name on $field", ({ run, error, field, message }) => {
    let thrown: unknown;
    try {
      run();
    } catch (e) {
      thrown = e;
    }
    expect(thrown, "expected a throw").toBeDefined();
    expect(thrown).toBeInstanceOf(error);
    // The other class must not match (neither extends the other).
    expect(thrown).not.toBeInstanceOf(error === InvalidInputError ? ComputationError : InvalidInputError);
    const e = thrown as InvalidInputError | ComputationError;
    expect(e.field).toBe(field);
    expect(e.message).toContain(message);
    expect(e.name).toBe(error.name);
    if (e instanceof InvalidInputError) {
      expect(e.message.startsWith(`${field}: expected `)).toBe(true);
      expect(e.expected.length).toBeGreaterThan(0);
    }
  });
});

describe("ways out that the errors name", () => {
  it("pseudoinverse succeeds where gaussian and cholesky report a singular covariance (PSR, MaxFit, Grid)", () => {
    const data = duplicateColumn();
    const p = psr(data, theta(), { inv_method: "pseudoinverse", threshold: [0, 0.5] });
    expect(p.yhat.every(Number.isFinite)).toBe(true);
    const m = maxfit(data, theta(), { inv_method: "pseudoinverse" });
    expect(Number.isFinite(m.yhat[0])).toBe(true);
    const g = grid(data, theta(), { inv_method: "pseudoinverse" });
    expect(Number.isFinite(g.yhat[0])).toBe(true);
    expect(g.grid_search!.invalid_cells).toBe(0);
  });

  it("pseudoinverse on a duplicated column gives the same prediction as dropping the duplicate", () => {
    const p = psr(duplicateColumn(), theta(), { inv_method: "pseudoinverse", threshold: [0, 0.5] });
    // theta's third entry must follow the duplicate for the comparison to be meaningful.
    const t = theta();
    const same = psr(duplicateColumn(), Float64Array.from([t[0], t[1], t[0]]), { inv_method: "pseudoinverse", threshold: [0, 0.5] });
    const reduced = psr(
      datasetFromRows(
        Y,
        ROWS.map((r) => [r[0], r[1]]),
      ),
      Float64Array.from([t[0], t[1]]),
      { threshold: [0, 0.5] },
    );
    same.yhat.forEach((v, i) => expect(Math.abs(v - reduced.yhat[i])).toBeLessThan(1e-9));
    expect(p.yhat.every(Number.isFinite)).toBe(true);
  });

  it("Grid with gaussian does not throw on a singular full covariance: singular combinations get zero weight and a warning names pseudoinverse", () => {
    const g = grid(duplicateColumn(), theta(), {});
    expect(Number.isFinite(g.yhat[0])).toBe(true);
    expect(g.warnings.join(" ")).toContain('inv_method: "pseudoinverse"');
    expect(g.yhat_linear![0]).toBeNaN();
  });
});
