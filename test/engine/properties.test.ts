/**
 * Property-based tests of the relevance engine (docs/methodology.md sections 1 to 7) on random,
 * well-conditioned data. Every property runs under a fixed fast-check seed so that the suite is
 * deterministic; the data themselves come from a small seeded PRNG driven by the generated seed.
 */
import fc from "fast-check";
import { CUT_TIE_TOLERANCE, MAXFIT_TIE_TOLERANCE } from "../../src/engine/choices.js";
import { createRandom } from "../../src/engine/random.js";
import { describe, expect, it } from "vitest";
import { grid, maxfit, psr, type Dataset } from "../../src/engine/index.js";
import { datasetFromRows } from "../../src/engine/data.js";
import type { CensorOperator, CensorType, Objective } from "../../src/engine/options.js";
import type { EngineResult } from "../../src/engine/result.js";

// ---------------------------------------------------------------------------------------------
// Random data
// ---------------------------------------------------------------------------------------------

function normal(rand: () => number): number {
  const u = 1 - rand();
  const v = rand();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

interface Case {
  N: number;
  K: number;
  seed: number;
  data: Dataset;
  theta: Float64Array;
}

/** A fresh PRNG for choices made inside a property (where to put NaNs...), the same on every replay. */
const randFor = (c: Case) => createRandom((c.seed ^ 0x5bd1e995) >>> 0);

/** Correlated normal attributes (X = Z M, M unit upper triangular), y linear in X plus noise. */
function makeCase(N: number, K: number, seed: number): Case {
  const rand = createRandom(seed);
  const M = new Float64Array(K * K);
  for (let a = 0; a < K; a++) for (let b = a; b < K; b++) M[a * K + b] = a === b ? 1 : 0.5 * normal(rand);
  const X = new Float64Array(N * K);
  for (let i = 0; i < N; i++) {
    const z = Array.from({ length: K }, () => normal(rand));
    for (let b = 0; b < K; b++) {
      let s = 0;
      for (let a = 0; a <= b; a++) s += z[a] * M[a * K + b];
      X[i * K + b] = s;
    }
  }
  const beta = Array.from({ length: K }, () => normal(rand));
  const y = new Float64Array(N);
  for (let i = 0; i < N; i++) {
    let s = 1 + 0.7 * normal(rand);
    for (let j = 0; j < K; j++) s += beta[j] * X[i * K + j];
    // A mild non-linearity so that partial samples differ from OLS.
    y[i] = s + 0.5 * X[i * K] * X[i * K];
  }
  const theta = Float64Array.from({ length: K }, () => 1.2 * normal(rand));
  // Counterexamples print as a one-line recipe: makeCase(N, K, seed).
  const repro = { [fc.toStringMethod]: () => `makeCase(${N}, ${K}, ${seed})` };
  return Object.assign(repro, { N, K, seed, data: { y, X, rows: N, cols: K }, theta });
}

/** N in [K+5, 60], K in [1, maxK]. */
const caseArb = (maxK = 5, maxN = 60) =>
  fc
    .integer({ min: 1, max: maxK })
    .chain((K) =>
      fc.record({
        K: fc.constant(K),
        N: fc.integer({ min: K + 5, max: maxN }),
        seed: fc.integer({ min: 0, max: 0x7fffffff }),
      }),
    )
    .map(({ N, K, seed }) => makeCase(N, K, seed));

const RUNS = { numRuns: 60 };
const run = <T>(arb: fc.Arbitrary<T>, seed: number, body: (value: T) => void, numRuns = RUNS.numRuns) => fc.assert(fc.property(arb, body), { seed, numRuns });

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

const THRESHOLDS = [0, 0.2, 0.5, 0.8];
/**
 * For lt/lte the retained share is the bottom one: threshold 0 keeps a single row (an invalid
 * calibration), so these operators get thresholds that keep at least 2 rows of N >= 5.
 */
const LOW_THRESHOLDS = [1, 0.8, 0.5, 0.3];
const thresholdsFor = (op: CensorOperator) => (op === "lt" || op === "lte" ? LOW_THRESHOLDS : THRESHOLDS);
const CENSORS: CensorType[] = ["relevance", "similarity"];

/** |a - e| <= tol * max(1, |e|); NaN matches NaN only. */
function close(actual: number, expected: number, tol: number, label: string): void {
  if (Number.isNaN(expected) || Number.isNaN(actual)) {
    expect(actual, `${label}: ${actual} vs ${expected}`).toBeNaN();
    expect(expected, `${label}: ${actual} vs ${expected}`).toBeNaN();
    return;
  }
  const err = Math.abs(actual - expected);
  expect(err, `${label}: ${actual} vs ${expected}`).toBeLessThanOrEqual(tol * Math.max(1, Math.abs(expected)));
}

function closeAll(actual: ArrayLike<number>, expected: ArrayLike<number>, tol: number, label: string): void {
  expect(actual.length, `${label}: length`).toBe(expected.length);
  for (let i = 0; i < expected.length; i++) close(actual[i], expected[i], tol, `${label}[${i}]`);
}

function closeMatrix(actual: number[][], expected: number[][], tol: number, label: string): void {
  expect(actual.length, `${label}: rows`).toBe(expected.length);
  actual.forEach((row, i) => closeAll(row, expected[i], tol, `${label}[${i}]`));
}

const column = (m: number[][], t: number) => m.map((row) => row[t]);
const sum = (v: ArrayLike<number>) => Array.from(v).reduce((s, x) => s + x, 0);

/** Copies of the dataset's pieces. */
function rowsOf(data: Dataset): number[][] {
  return Array.from({ length: data.rows }, (_, i) => Array.from(data.X.subarray(i * data.cols, (i + 1) * data.cols)));
}

function dataset(y: ArrayLike<number>, rows: number[][]): Dataset {
  const K = rows[0].length;
  const X = new Float64Array(rows.length * K);
  rows.forEach((row, i) => row.forEach((v, j) => (X[i * K + j] = v)));
  return { y: Float64Array.from(y), X, rows: rows.length, cols: K };
}

function subColumns(data: Dataset, theta: Float64Array, columns: number[]): { data: Dataset; theta: Float64Array } {
  const rows = rowsOf(data).map((row) => columns.map((j) => row[j]));
  return { data: dataset(data.y, rows), theta: Float64Array.from(columns, (j) => theta[j]) };
}

function subRows(data: Dataset, keep: number[]): Dataset {
  const rows = rowsOf(data);
  return dataset(
    keep.map((i) => data.y[i]),
    keep.map((i) => rows[i]),
  );
}

/** Independent OLS with intercept: normal equations of [1, X] solved by Gaussian elimination with partial pivoting. */
function olsPrediction(data: Dataset, theta: Float64Array): number {
  const { rows: N, cols: K, X, y } = data;
  const p = K + 1;
  const A = Array.from({ length: p }, () => new Array<number>(p + 1).fill(0));
  const design = (i: number, a: number) => (a === 0 ? 1 : X[i * K + a - 1]);
  for (let i = 0; i < N; i++) {
    for (let a = 0; a < p; a++) {
      for (let b = 0; b < p; b++) A[a][b] += design(i, a) * design(i, b);
      A[a][p] += design(i, a) * y[i];
    }
  }
  for (let c = 0; c < p; c++) {
    let piv = c;
    for (let r = c + 1; r < p; r++) if (Math.abs(A[r][c]) > Math.abs(A[piv][c])) piv = r;
    [A[c], A[piv]] = [A[piv], A[c]];
    for (let r = 0; r < p; r++) {
      if (r === c) continue;
      const f = A[r][c] / A[c][c];
      for (let j = c; j <= p; j++) A[r][j] -= f * A[c][j];
    }
  }
  const beta = A.map((row, a) => row[p] / row[a]);
  let yhat = beta[0];
  for (let j = 0; j < K; j++) yhat += beta[j + 1] * theta[j];
  return yhat;
}

/** numpy's default ("linear", type 7) percentile of the values at fraction q. */
function percentile(values: number[], q: number, width = 0): number {
  const s = [...values].sort((a, b) => a - b);
  const h = (s.length - 1) * q;
  const lo = Math.floor(h);
  if (!(h > lo && lo + 1 < s.length)) return s[lo];
  const cut = s[lo] + (h - lo) * (s[lo + 1] - s[lo]);
  // Within the tie width of a neighbour, the cut is that neighbour (docs/ties.md).
  return cut - s[lo] <= width ? s[lo] : s[lo + 1] - cut <= width ? s[lo + 1] : cut;
}

/** The fields compared when two results must be "the same prediction". */
function expectSameResult(actual: EngineResult, expected: EngineResult, tol: number, label: string): void {
  closeAll(actual.yhat, expected.yhat, tol, `${label} yhat`);
  closeAll(actual.fit, expected.fit, tol, `${label} fit`);
  closeAll(actual.adjusted_fit, expected.adjusted_fit, tol, `${label} adjusted_fit`);
  closeMatrix(actual.prediction_weights.weights, expected.prediction_weights.weights, tol, `${label} weights`);
  closeAll(actual.insights.relevance, expected.insights.relevance, tol, `${label} relevance`);
}

// ---------------------------------------------------------------------------------------------
// PSR basics
// ---------------------------------------------------------------------------------------------

describe("PSR at threshold 0 is least squares", () => {
  it("yhat (relevance censor, percent, gte, threshold 0) and yhat_linear equal an independent OLS prediction", () => {
    run(caseArb(), 101, ({ data, theta }) => {
      const ols = olsPrediction(data, theta);
      const result = psr(data, theta, { threshold: [0], censor_type: "relevance", censor_unit: "percent", censor_operator: "gte" });
      close(result.yhat[0], ols, 1e-8, "yhat at threshold 0");
      expect(result.yhat_linear).toBeDefined();
      close(result.yhat_linear![0], ols, 1e-8, "yhat_linear");
      expect(result.auxiliary!.n[0]).toBe(data.rows);
      close(result.auxiliary!.lambda_sq[0], 1, 1e-12, "lambda_sq");
    });
  });

  it("the similarity censor at threshold 0 is the same OLS prediction", () => {
    run(caseArb(), 102, ({ data, theta }) => {
      const result = psr(data, theta, { threshold: [0], censor_type: "similarity" });
      close(result.yhat[0], olsPrediction(data, theta), 1e-8, "yhat at threshold 0");
    });
  });
});

describe("weights sum to 1", () => {
  it("every threshold column of PSR (both censors, gte and lte), MaxFit and the Grid composite", () => {
    run(caseArb(), 201, ({ data, theta }) => {
      for (const censor_type of CENSORS) {
        for (const censor_operator of ["gte", "lte"] as CensorOperator[]) {
          const result = psr(data, theta, { threshold: thresholdsFor(censor_operator), censor_type, censor_operator });
          THRESHOLDS.forEach((_, t) => close(sum(column(result.prediction_weights.weights, t)), 1, 1e-9, `psr ${censor_type} ${censor_operator} t=${t}`));
        }
      }
      const mf = maxfit(data, theta, { threshold: THRESHOLDS });
      close(sum(column(mf.prediction_weights.weights, 0)), 1, 1e-9, "maxfit");
      const g = grid(data, theta, { threshold: THRESHOLDS });
      close(sum(column(g.prediction_weights.weights, 0)), 1, 1e-9, "grid composite");
    });
  });

  it("yhat equals the weights applied to y (PSR every threshold, MaxFit, Grid)", () => {
    run(caseArb(), 202, ({ data, theta }) => {
      const dot = (w: number[]) => w.reduce((s, wi, i) => s + wi * data.y[i], 0);
      const result = psr(data, theta, { threshold: THRESHOLDS });
      THRESHOLDS.forEach((_, t) => close(dot(column(result.prediction_weights.weights, t)), result.yhat[t], 1e-9, `psr t=${t}`));
      const mf = maxfit(data, theta, { threshold: THRESHOLDS });
      close(dot(column(mf.prediction_weights.weights, 0)), mf.yhat[0], 1e-9, "maxfit");
      const g = grid(data, theta, { threshold: THRESHOLDS });
      close(dot(column(g.prediction_weights.weights, 0)), g.yhat[0], 1e-9, "grid");
    });
  });
});

describe("relevance identities (complete data)", () => {
  it("relevance sums to 0 and sum r^2/(N-1) equals info_theta", () => {
    run(caseArb(), 301, ({ data, theta }) => {
      const result = psr(data, theta, { threshold: [0.5] });
      const r = result.insights.relevance;
      expect(r).toHaveLength(data.rows);
      const scale = r.reduce((s, v) => s + Math.abs(v), 0);
      expect(Math.abs(sum(r))).toBeLessThanOrEqual(1e-10 * Math.max(1, scale));
      const variance = r.reduce((s, v) => s + v * v, 0) / (data.rows - 1);
      close(variance, result.insights.info_theta[0], 1e-9, "sum r^2/(N-1) vs info_theta");
      close(result.auxiliary!.full_var[0], result.insights.info_theta[0], 1e-9, "full_var vs info_theta");
    });
  });

  it("the Grid reports the same all-attribute relevance and info_theta as PSR", () => {
    run(caseArb(), 302, ({ data, theta }) => {
      const p = psr(data, theta, { threshold: [0] });
      const g = grid(data, theta, {});
      closeAll(g.insights.relevance, p.insights.relevance, 1e-9, "relevance");
      close(g.insights.info_theta[0], p.insights.info_theta[0], 1e-9, "info_theta");
      close(g.yhat_linear![0], p.yhat_linear![0], 1e-9, "yhat_linear");
    });
  });
});

// ---------------------------------------------------------------------------------------------
// Affine invariance
// ---------------------------------------------------------------------------------------------

/** A factor in +-[1e-3, 1e3] (log-uniform magnitude) and a shift in [-1e3, 1e3]. */
const affineArb = fc.record({
  logScale: fc.double({ min: -3, max: 3, noNaN: true }),
  negative: fc.boolean(),
  shift: fc.double({ min: -1000, max: 1000, noNaN: true }),
  column: fc.nat(),
});

function transformed(c: Case, a: { logScale: number; negative: boolean; shift: number; column: number }) {
  const j = a.column % c.K;
  const factor = (a.negative ? -1 : 1) * 10 ** a.logScale;
  const X = Float64Array.from(c.data.X);
  for (let i = 0; i < c.N; i++) X[i * c.K + j] = factor * X[i * c.K + j] + a.shift;
  const theta = Float64Array.from(c.theta);
  theta[j] = factor * theta[j] + a.shift;
  return { data: { ...c.data, X }, theta, j, factor };
}

describe("results do not depend on the attributes' units or origins", () => {
  it("PSR (both censors, several thresholds, gte and lte) is invariant to rescaling and shifting one column", () => {
    run(fc.tuple(caseArb(), affineArb), 401, ([c, a]) => {
      const t = transformed(c, a);
      for (const censor_type of CENSORS) {
        for (const censor_operator of ["gte", "lte"] as CensorOperator[]) {
          const options = { threshold: thresholdsFor(censor_operator), censor_type, censor_operator };
          const before = psr(c.data, c.theta, options);
          const after = psr(t.data, t.theta, options);
          expectSameResult(after, before, 1e-8, `psr ${censor_type} ${censor_operator}`);
          closeAll(after.insights.similarity, before.insights.similarity, 1e-8, "similarity");
          closeAll(after.yhat_linear!, before.yhat_linear!, 1e-8, "yhat_linear");
        }
      }
    });
  });

  it("the Grid (composite and cells) is invariant to rescaling and shifting one column", () => {
    run(
      fc.tuple(caseArb(4, 40), affineArb),
      402,
      ([c, a]) => {
        const t = transformed(c, a);
        const options = { threshold: THRESHOLDS, retain: ["yhat_cells", "adjusted_fit_cells"] as ("yhat_cells" | "adjusted_fit_cells")[] };
        const before = grid(c.data, c.theta, options);
        const after = grid(t.data, t.theta, options);
        expectSameResult(after, before, 1e-8, "grid");
        for (const censor of CENSORS) {
          closeMatrix(after.grid_cells![censor]!.yhat_cells!, before.grid_cells![censor]!.yhat_cells!, 1e-8, `${censor} yhat_cells`);
          closeMatrix(after.grid_cells![censor]!.adjusted_fit_cells!, before.grid_cells![censor]!.adjusted_fit_cells!, 1e-8, `${censor} adjusted_fit_cells`);
        }
      },
      40,
    );
  });

  it("MaxFit picks the same winner after rescaling and shifting one column", () => {
    run(fc.tuple(caseArb(), affineArb), 403, ([c, a]) => {
      const t = transformed(c, a);
      const before = maxfit(c.data, c.theta, { threshold: THRESHOLDS });
      const after = maxfit(t.data, t.theta, { threshold: THRESHOLDS });
      expectSameResult(after, before, 1e-8, "maxfit");
    });
  });
});

// ---------------------------------------------------------------------------------------------
// Grid cells against PSR
// ---------------------------------------------------------------------------------------------

/** One to three random non-empty masks over the K columns. */
const combiCaseArb = caseArb(5, 40).chain((c) =>
  fc
    .array(
      fc.array(fc.boolean(), { minLength: c.K, maxLength: c.K }).filter((m) => m.some((b) => b)),
      {
        minLength: 1,
        maxLength: 3,
      },
    )
    .map((masks) => ({ c, masks: masks.map((m) => m.map((b) => (b ? 1 : 0))) })),
);

function checkCellsAgainstPsr(c: Case, masks: number[][], label: string): void {
  const result = grid(c.data, c.theta, {
    threshold: THRESHOLDS,
    attribute_combi: masks,
    retain: ["yhat_cells", "adjusted_fit_cells", "n_cells", "weights_cells"],
  });
  const N = c.N;
  const T = THRESHOLDS.length;
  let total = 0;
  let weightedYhat = 0;
  const compositeWeights = new Float64Array(N);
  masks.forEach((mask, q) => {
    const columns = mask.flatMap((b, j) => (b ? [j] : []));
    const sub = subColumns(c.data, c.theta, columns);
    for (const censor_type of CENSORS) {
      const cells = result.grid_cells![censor_type]!;
      const expected = psr(sub.data, sub.theta, { threshold: THRESHOLDS, censor_type, missing_moments: "complete" });
      for (let t = 0; t < T; t++) {
        const where = `${label} ${censor_type} q=${q} t=${THRESHOLDS[t]}`;
        close(cells.yhat_cells![q][t], expected.yhat[t], 1e-8, `${where} yhat_cells`);
        close(cells.adjusted_fit_cells![q][t], expected.adjusted_fit[t], 1e-8, `${where} adjusted_fit_cells`);
        expect(cells.n_cells![q][t], `${where} n_cells`).toBe(expected.auxiliary!.n[t]);
        const w = cells.weights_cells!.map((row) => row[t][q]);
        const want = column(expected.prediction_weights.weights, t);
        if (Number.isNaN(expected.yhat[t])) {
          // An invalid cell (fewer than 2 retained): its weights are undefined on the rows it could use.
          // (Rows it cannot use are checked by a separate test below.)
          want.forEach((v, i) => Number.isNaN(v) && expect(w[i], `${where} weights_cells[${i}] of an invalid cell`).toBeNaN());
        } else {
          closeAll(w, want, 1e-8, `${where} weights_cells`);
        }
        const a = cells.adjusted_fit_cells![q][t];
        const y = cells.yhat_cells![q][t];
        if (Number.isFinite(a) && Number.isFinite(y) && a > 0) {
          total += a;
          weightedYhat += a * y;
          for (let i = 0; i < N; i++) compositeWeights[i] += a * w[i];
        }
      }
    }
  });
  expect(total).toBeGreaterThan(0);
  close(result.yhat[0], weightedYhat / total, 1e-9, `${label} composite yhat`);
  closeAll(
    column(result.prediction_weights.weights, 0),
    Array.from(compositeWeights, (w) => w / total),
    1e-9,
    `${label} composite weights`,
  );
}

describe("Grid cells are PSRs on their own columns", () => {
  it("explicit combinations (complete data): cells equal PSR on the sub-dataset; the composite is their adjusted-fit-weighted average", () => {
    run(combiCaseArb, 501, ({ c, masks }) => checkCellsAgainstPsr(c, masks, "complete"), 50);
  });

  it("one explicit combination of every column equals PSR on all columns", () => {
    run(caseArb(5, 40), 502, (c) => checkCellsAgainstPsr(c, [new Array<number>(c.K).fill(1)], "all columns"), 40);
  });

  it("explicit combinations with missing values (per-combination path): cells equal PSR (complete moments) on the sub-dataset", () => {
    run(
      combiCaseArb,
      503,
      ({ c, masks }) => {
        // A few NaNs in random places; the sub-dataset PSR with complete moments drops the same rows.
        const rand = randFor(c);
        const X = Float64Array.from(c.data.X);
        const holes = Math.min(3, c.N - c.K - 4);
        for (let h = 0; h < holes; h++) X[Math.floor(rand() * c.N) * c.K + Math.floor(rand() * c.K)] = NaN;
        checkCellsAgainstPsr({ ...c, data: { ...c.data, X } }, masks, "missing");
      },
      40,
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Missing values
// ---------------------------------------------------------------------------------------------

/** Puts NaNs in 1..(N-K-4) rows (1..K of their columns); returns the data and the NaN rows. */
function withMissingRows(c: Case): { data: Dataset; missing: number[]; complete: number[] } {
  const rand = randFor(c);
  const X = Float64Array.from(c.data.X);
  const count = 1 + Math.floor(rand() * Math.min(5, c.N - c.K - 4));
  const missing = new Set<number>();
  while (missing.size < count) missing.add(Math.floor(rand() * c.N));
  for (const i of missing) {
    const holes = 1 + Math.floor(rand() * c.K);
    for (let h = 0; h < holes; h++) X[i * c.K + Math.floor(rand() * c.K)] = NaN;
  }
  const complete = Array.from({ length: c.N }, (_, i) => i).filter((i) => !missing.has(i));
  return { data: { ...c.data, X }, missing: [...missing].sort((a, b) => a - b), complete };
}

describe("rows with missing values", () => {
  it("PSR (complete moments): NaN rows get weight 0 and NaN relevance; the rest equals PSR on the complete rows", () => {
    run(caseArb(), 601, (c) => {
      const { data, missing, complete } = withMissingRows(c);
      for (const censor_type of CENSORS) {
        for (const censor_operator of ["gte", "lte"] as CensorOperator[]) {
          const options = { threshold: thresholdsFor(censor_operator), censor_type, censor_operator, missing_moments: "complete" as const };
          const result = psr(data, c.theta, options);
          const expected = psr(subRows(c.data, complete), c.theta, options);
          const label = `${censor_type} ${censor_operator}`;
          closeAll(result.yhat, expected.yhat, 1e-9, `${label} yhat`);
          closeAll(result.fit, expected.fit, 1e-9, `${label} fit`);
          closeAll(result.adjusted_fit, expected.adjusted_fit, 1e-9, `${label} adjusted_fit`);
          closeAll(result.auxiliary!.n, expected.auxiliary!.n, 0, `${label} n`);
          closeAll(result.yhat_linear!, expected.yhat_linear!, 1e-9, `${label} yhat_linear`);
          for (const i of missing) {
            expect(
              result.prediction_weights.weights[i].every((w) => w === 0),
              `${label} weight of NaN row ${i}`,
            ).toBe(true);
            expect(result.insights.relevance[i], `${label} relevance of NaN row ${i}`).toBeNaN();
            expect(result.insights.similarity[i], `${label} similarity of NaN row ${i}`).toBeNaN();
          }
          closeMatrix(
            complete.map((i) => result.prediction_weights.weights[i]),
            expected.prediction_weights.weights,
            1e-9,
            `${label} weights of complete rows`,
          );
          closeAll(
            complete.map((i) => result.insights.relevance[i]),
            expected.insights.relevance,
            1e-9,
            `${label} relevance of complete rows`,
          );
          closeMatrix(
            complete.map((i) => result.prediction_weights.include![i]),
            expected.prediction_weights.include!,
            0,
            `${label} include of complete rows`,
          );
        }
      }
    });
  });

  it("Grid: a row missing in every column is ignored (equals the Grid without that row, weight 0, NaN relevance)", () => {
    run(
      caseArb(4, 40),
      602,
      (c) => {
        const row = Math.floor(randFor(c)() * c.N);
        const X = Float64Array.from(c.data.X);
        for (let j = 0; j < c.K; j++) X[row * c.K + j] = NaN;
        const options = { threshold: THRESHOLDS };
        const result = grid({ ...c.data, X }, c.theta, options);
        const keep = Array.from({ length: c.N }, (_, i) => i).filter((i) => i !== row);
        const expected = grid(subRows(c.data, keep), c.theta, options);
        close(result.yhat[0], expected.yhat[0], 1e-9, "yhat");
        close(result.adjusted_fit[0], expected.adjusted_fit[0], 1e-9, "adjusted_fit");
        close(result.yhat_linear![0], expected.yhat_linear![0], 1e-9, "yhat_linear");
        expect(result.prediction_weights.weights[row][0]).toBe(0);
        expect(result.insights.relevance[row]).toBeNaN();
        closeMatrix(
          keep.map((i) => result.prediction_weights.weights[i]),
          expected.prediction_weights.weights,
          1e-9,
          "weights of the other rows",
        );
        closeAll(
          keep.map((i) => result.insights.relevance[i]),
          expected.insights.relevance,
          1e-9,
          "relevance",
        );
      },
      40,
    );
  });
});

/**
 * A row missing in every column is usable by no combination, so the Grid should behave as if it
 * were not there (PSR does: fit, y_solo and ybar are over usable rows). The composite-level
 * statistics of grid.ts (compositeFit, soloVotes(..., allRows, ybar, N), the equal-weights
 * fallback, ybar for the insights) are computed over all N rows instead; these tests pin that down.
 */
describe("Grid with a row missing in every column", () => {
  const allNaNRow = (c: Case) => {
    const row = Math.floor(randFor(c)() * c.N);
    const X = Float64Array.from(c.data.X);
    for (let j = 0; j < c.K; j++) X[row * c.K + j] = NaN;
    const keep = Array.from({ length: c.N }, (_, i) => i).filter((i) => i !== row);
    return { row, data: { ...c.data, X }, keep, without: subRows(c.data, keep) };
  };

  it("the composite fit ignores the all-NaN row (equals the fit of the Grid without it)", () => {
    run(
      caseArb(4, 40),
      603,
      (c) => {
        const { data, without } = allNaNRow(c);
        const result = grid(data, c.theta, { threshold: THRESHOLDS });
        const expected = grid(without, c.theta, { threshold: THRESHOLDS });
        close(result.fit[0], expected.fit[0], 1e-9, "composite fit");
      },
      40,
    );
  });

  it("y_solo of the all-NaN row is NaN (as in PSR) and the other votes equal the Grid without it", () => {
    run(
      caseArb(4, 40),
      604,
      (c) => {
        const { row, data, keep, without } = allNaNRow(c);
        const result = grid(data, c.theta, { threshold: THRESHOLDS });
        const expected = grid(without, c.theta, { threshold: THRESHOLDS });
        expect(result.solo_distribution.y_solo[row][0], "vote of the all-NaN row").toBeNaN();
        closeMatrix(
          keep.map((i) => result.solo_distribution.y_solo[i]),
          expected.solo_distribution.y_solo,
          1e-9,
          "votes of the other rows",
        );
      },
      40,
    );
  });

  it("grid_insights (component_contribution_to_prediction uses ybar) equal the Grid without the all-NaN row", () => {
    run(
      caseArb(4, 40),
      605,
      (c) => {
        const { data, without } = allNaNRow(c);
        const result = grid(data, c.theta, { threshold: THRESHOLDS });
        const expected = grid(without, c.theta, { threshold: THRESHOLDS });
        for (const key of ["agreement", "asymmetry", "k_fit", "outlier_influence"] as const) {
          closeAll(result[key], expected[key], 1e-9, key);
        }
        const gi = result.grid_insights!;
        const want = expected.grid_insights!;
        closeAll(gi.variable_weights, want.variable_weights, 1e-9, "variable_weights");
        closeAll(gi.marginal_contribution_to_conviction, want.marginal_contribution_to_conviction, 1e-9, "MCTC");
        closeAll(gi.marginal_contribution_to_prediction, want.marginal_contribution_to_prediction, 1e-9, "MCTP");
        closeAll(gi.component_contribution_to_prediction, want.component_contribution_to_prediction, 1e-9, "CCTP");
      },
      40,
    );
  });

  it("the equal-weights fallback (log multiplier, K = 1) gives the all-NaN row weight 0 and yhat = mean of the usable y", () => {
    run(
      caseArb(1),
      606,
      (c) => {
        const { row, data, keep } = allNaNRow(c);
        const result = grid(data, c.theta, { threshold: THRESHOLDS, adj_fit_multiplier: "log" });
        expect(result.prediction_weights.weights[row][0], "weight of the all-NaN row").toBe(0);
        close(result.yhat[0], sum(keep.map((i) => c.data.y[i])) / keep.length, 1e-9, "yhat");
      },
      30,
    );
  });
});

describe("Grid cells with missing values", () => {
  it("an invalid Grid cell's weights_cells are 0 on rows its combination cannot use, as PSR reports them", () => {
    // makeCase(6, 1, 0) with row 0 missing: 5 usable rows, so threshold 0.8 keeps 1 row (invalid cell).
    const c = makeCase(6, 1, 0);
    const X = Float64Array.from(c.data.X);
    X[0] = NaN;
    const data = { ...c.data, X };
    const options = { threshold: [0, 0.8], censor_type: "relevance" as const };
    const result = grid(data, c.theta, { ...options, retain: ["weights_cells", "yhat_cells"] });
    const reference = psr(data, c.theta, { ...options, missing_moments: "complete" });
    expect(reference.yhat[1]).toBeNaN();
    expect(result.grid_cells!.relevance!.yhat_cells![0][1]).toBeNaN();
    expect(reference.prediction_weights.weights[0][1]).toBe(0);
    expect(result.grid_cells!.relevance!.weights_cells![0][1][0], "weights_cells of the unusable row").toBe(0);
  });
});

// ---------------------------------------------------------------------------------------------
// MaxFit, operators, diagnostics
// ---------------------------------------------------------------------------------------------

describe("MaxFit", () => {
  const objectiveArb = fc.constantFrom<Objective>("fit", "adjusted_fit", "kfit");
  const censorArb = fc.constantFrom<"relevance" | "similarity" | "both">("relevance", "similarity", "both");

  it("threshold 0 keeps every row under both censors: a tie that relevance, listed first, wins", () => {
    run(fc.tuple(caseArb(), objectiveArb), 702, ([c, objective]) => {
      const result = maxfit(c.data, c.theta, { threshold: [0], objective, censor_type: "both" });
      expect(result.maxfit_index!.selected).toBe(0);
      expect(result.censor_type).toEqual(["relevance"]);
    });
  });

  it("a tie that differs only in the last bits still goes to the first candidate (found by search: similarity was 2 ulp ahead at 0)", () => {
    const y = [27.9185320854187, 14.481236432492732, 77.00520162582397, 45.795598888397215, 101.55143986940384];
    const X = [[27.7], [6.7], [68.8], [43.4], [97.3]];
    const result = maxfit(datasetFromRows(y, X), Float64Array.from([29]), { threshold: [0, 0.2, 0.5, 0.8], censor_type: "both" });
    const path = result.maxfit_index!;
    expect(path.fit[4]).not.toBe(path.fit[0]); // the two censors' fits at threshold 0 are not bit-identical
    expect(path.selected).toBe(0);
    expect(result.censor_type).toEqual(["relevance"]);
  });

  it("its result equals the PSR of its winner, and its objective is the maximum of the maxfit_index path", () => {
    run(fc.tuple(caseArb(), objectiveArb, censorArb), 701, ([c, objective, censor_type]) => {
      const result = maxfit(c.data, c.theta, { threshold: THRESHOLDS, objective, censor_type });
      const path = result.maxfit_index!;
      expect(path.objective).toBe(objective);
      const values = objective === "fit" ? path.fit : objective === "adjusted_fit" ? path.adjusted_fit : path.k_fit;
      const finite = values.filter((v) => Number.isFinite(v));
      const max = Math.max(...finite);
      // First maximum wins, equality read up to rounding (MAXFIT_TIE_TOLERANCE).
      const tied = (v: number) => max - v <= MAXFIT_TIE_TOLERANCE * Math.max(1, Math.abs(max));
      expect(tied(values[path.selected])).toBe(true);
      expect(values.findIndex(tied)).toBe(path.selected);
      const winnerCensor = path.censor_type[path.selected];
      const winnerThreshold = path.threshold[path.selected];
      expect(result.censor_type).toEqual([winnerCensor]);
      expect(result.thresholds).toEqual([winnerThreshold]);
      const ownObjective = objective === "fit" ? result.fit[0] : objective === "adjusted_fit" ? result.adjusted_fit[0] : result.k_fit[0];
      close(ownObjective, values[path.selected], 1e-12, "objective of the result");
      close(result.yhat[0], path.yhat[path.selected], 1e-12, "yhat vs path");

      const winner = psr(c.data, c.theta, { threshold: [winnerThreshold], censor_type: winnerCensor });
      expectSameResult(result, winner, 1e-12, "maxfit vs psr");
      for (const key of ["agreement", "asymmetry", "k_fit", "outlier_influence"] as const) {
        closeAll(result[key], winner[key], 1e-12, key);
      }
      closeMatrix(result.prediction_weights.include!, winner.prediction_weights.include!, 0, "include");
      closeMatrix(result.prediction_weights.weights_excluded!, winner.prediction_weights.weights_excluded!, 1e-12, "weights_excluded");
      closeMatrix(result.solo_distribution.y_solo, winner.solo_distribution.y_solo, 1e-12, "y_solo");
      for (const key of Object.keys(winner.auxiliary!) as (keyof NonNullable<EngineResult["auxiliary"]>)[]) {
        closeAll(result.auxiliary![key], winner.auxiliary![key], 1e-12, `auxiliary.${key}`);
      }
      // The path is the PSR at every candidate.
      const candidates = (censor_type === "both" ? CENSORS : [censor_type]).flatMap((censor) => {
        const p = psr(c.data, c.theta, { threshold: THRESHOLDS, censor_type: censor });
        return p.yhat.map((yhat, t) => ({ censor, yhat, fit: p.fit[t], threshold: THRESHOLDS[t] }));
      });
      expect(path.censor_type).toEqual(candidates.map((x) => x.censor));
      expect(path.threshold).toEqual(candidates.map((x) => x.threshold));
      closeAll(
        path.yhat,
        candidates.map((x) => x.yhat),
        1e-12,
        "path yhat",
      );
      closeAll(
        path.fit,
        candidates.map((x) => x.fit),
        1e-12,
        "path fit",
      );
    });
  });
});

describe("censor operators", () => {
  it("lte at threshold t keeps the rows whose score is at most the t-percentile (the bottom share); gte the top", () => {
    const thresholdArb = fc.double({ min: 0, max: 1, noNaN: true });
    run(fc.tuple(caseArb(), thresholdArb, fc.constantFrom<CensorType>("relevance", "similarity")), 801, ([c, t, censor_type]) => {
      const thresholds = [t, 0.25, 0.5];
      for (const censor_operator of ["lte", "gte", "lt", "gt"] as CensorOperator[]) {
        const result = psr(c.data, c.theta, { threshold: thresholds, censor_type, censor_operator });
        const scores = censor_type === "relevance" ? result.insights.relevance : result.insights.similarity;
        // The tie rule of docs/ties.md: a score within the width of the cut is at it, and the cut snaps to a neighbour within the width.
        const width = CUT_TIE_TOLERANCE * Math.max(1, ...scores.map(Math.abs));
        thresholds.forEach((q, k) => {
          const cut = percentile(scores, q, width);
          close(result.auxiliary!.r_star[k], cut, 1e-12, `r_star ${censor_operator} ${q}`);
          const want = scores.map((s) =>
            censor_operator === "lte"
              ? s <= cut + width
              : censor_operator === "lt"
                ? s < cut - width
                : censor_operator === "gte"
                  ? s >= cut - width
                  : s > cut + width,
          );
          const include = column(result.prediction_weights.include!, k);
          expect(include, `${censor_operator} at ${q}`).toEqual(want.map((b) => (b ? 1 : 0)));
        });
      }
      // With distinct scores, lte at t keeps floor((N-1)t)+1 rows (the bottom share).
      const lte = psr(c.data, c.theta, { threshold: [0.5], censor_type, censor_operator: "lte" });
      expect(lte.auxiliary!.n[0]).toBe(Math.floor((c.N - 1) * 0.5) + 1);
    });
  });

  it("lte at threshold 1 keeps every row and equals OLS", () => {
    run(caseArb(), 802, ({ data, theta }) => {
      const result = psr(data, theta, { threshold: [1], censor_operator: "lte" });
      expect(result.auxiliary!.n[0]).toBe(data.rows);
      close(result.yhat[0], olsPrediction(data, theta), 1e-8, "yhat");
    });
  });
});

describe("diagnostic identities", () => {
  it("include sums to auxiliary.n, phi = n/N; agreement + outlier_influence = fit; y_solo averages to yhat", () => {
    run(fc.tuple(caseArb(), fc.constantFrom<CensorOperator>("gte", "lte", "gt", "lt")), 901, ([c, censor_operator]) => {
      for (const censor_type of CENSORS) {
        const thresholds = thresholdsFor(censor_operator);
        const result = psr(c.data, c.theta, { threshold: thresholds, censor_type, censor_operator });
        thresholds.forEach((q, t) => {
          const label = `${censor_type} ${censor_operator} t=${q}`;
          const n = result.auxiliary!.n[t];
          expect(sum(column(result.prediction_weights.include!, t)), `${label} include`).toBe(n);
          close(result.auxiliary!.phi[t], n / c.N, 1e-15, `${label} phi`);
          if (n < 2) return;
          close(result.agreement[t] + result.outlier_influence[t], result.fit[t], 1e-12, `${label} agreement + outlier`);
          const ySolo = column(result.solo_distribution.y_solo, t);
          close(sum(ySolo) / c.N, result.yhat[t], 1e-9, `${label} y_solo mean`);
          if (c.N - n >= 2) close(sum(column(result.prediction_weights.weights_excluded!, t)), 1, 1e-9, `${label} weights_excluded sum`);
        });
      }
      const mf = maxfit(c.data, c.theta, { threshold: thresholdsFor(censor_operator), censor_operator });
      close(mf.agreement[0] + mf.outlier_influence[0], mf.fit[0], 1e-12, "maxfit agreement + outlier");
      close(sum(column(mf.solo_distribution.y_solo, 0)) / c.N, mf.yhat[0], 1e-9, "maxfit y_solo mean");
      const g = grid(c.data, c.theta, { threshold: thresholdsFor(censor_operator), censor_operator });
      close(sum(column(g.solo_distribution.y_solo, 0)) / c.N, g.yhat[0], 1e-9, "grid y_solo mean");
    });
  });

  it("fit is the squared correlation of the weights with y", () => {
    run(caseArb(), 902, ({ data, theta }) => {
      const result = psr(data, theta, { threshold: THRESHOLDS });
      const y = Array.from(data.y);
      THRESHOLDS.forEach((q, t) => {
        const w = column(result.prediction_weights.weights, t);
        const mw = sum(w) / w.length;
        const my = sum(y) / y.length;
        let sxy = 0;
        let sxx = 0;
        let syy = 0;
        w.forEach((wi, i) => {
          sxy += (wi - mw) * (y[i] - my);
          sxx += (wi - mw) ** 2;
          syy += (y[i] - my) ** 2;
        });
        close(result.fit[t], (sxy * sxy) / (sxx * syy), 1e-9, `fit t=${q}`);
      });
    });
  });
});

// ---------------------------------------------------------------------------------------------
// Grid robustness
// ---------------------------------------------------------------------------------------------

describe("Grid robustness", () => {
  it("a constant y does not throw and gives yhat = that constant", () => {
    run(
      fc.tuple(caseArb(4, 40), fc.double({ min: -100, max: 100, noNaN: true })),
      1001,
      ([c, value]) => {
        const y = new Float64Array(c.N).fill(value);
        const result = grid({ ...c.data, y }, c.theta, { threshold: THRESHOLDS });
        expect(Number.isFinite(result.yhat[0])).toBe(true);
        close(result.yhat[0], value, 1e-9, "yhat");
        close(sum(column(result.prediction_weights.weights, 0)), 1, 1e-9, "weights sum");
      },
      30,
    );
  });

  it("adj_fit_multiplier log with K = 1 (every cell has weight 0) does not throw and gives a finite yhat (the mean of y)", () => {
    run(
      caseArb(1),
      1002,
      ({ data, theta }) => {
        const result = grid(data, theta, { threshold: THRESHOLDS, adj_fit_multiplier: "log" });
        expect(Number.isFinite(result.yhat[0])).toBe(true);
        close(result.yhat[0], sum(data.y) / data.rows, 1e-9, "yhat = ybar");
        close(sum(column(result.prediction_weights.weights, 0)), 1, 1e-9, "weights sum");
      },
      30,
    );
  });

  it("inv_method gaussian, cholesky and pseudoinverse give the same Grid on well-conditioned data (complete and with gaps)", () => {
    run(
      fc.tuple(caseArb(4, 40), fc.boolean()),
      1003,
      ([c, gaps]) => {
        let data = c.data;
        if (gaps) {
          const rand = randFor(c);
          const X = Float64Array.from(c.data.X);
          const holes = Math.min(3, c.N - c.K - 4);
          for (let h = 0; h < holes; h++) X[Math.floor(rand() * c.N) * c.K + Math.floor(rand() * c.K)] = NaN;
          data = { ...c.data, X };
        }
        const results = (["gaussian", "cholesky", "pseudoinverse"] as const).map((inv_method) => grid(data, c.theta, { threshold: THRESHOLDS, inv_method }));
        for (const other of results.slice(1)) {
          expectSameResult(other, results[0], 1e-8, "grid");
          closeAll(other.yhat_linear!, results[0].yhat_linear!, 1e-8, "yhat_linear");
        }
      },
      40,
    );
  });

  it("inv_method gaussian, cholesky and pseudoinverse give the same PSR on well-conditioned data", () => {
    run(caseArb(), 1004, ({ data, theta }) => {
      const results = (["gaussian", "cholesky", "pseudoinverse"] as const).map((inv_method) => psr(data, theta, { threshold: THRESHOLDS, inv_method }));
      for (const other of results.slice(1)) expectSameResult(other, results[0], 1e-8, "psr");
    });
  });

  it("the Grid composite equals the adjusted-fit-weighted average over every cell of a full enumeration", () => {
    run(
      caseArb(4, 30),
      1005,
      (c) => {
        const result = grid(c.data, c.theta, {
          threshold: THRESHOLDS,
          retain: ["yhat_cells", "adjusted_fit_cells", "combi_cells", "k_cells"],
        });
        const combi = result.grid_cells!.combi_cells!;
        expect(combi).toHaveLength(2 ** c.K - 1);
        expect(result.grid_cells!.k_cells).toEqual(combi.map((m) => sum(m)));
        let total = 0;
        let weighted = 0;
        let squares = 0;
        for (const censor of CENSORS) {
          const cells = result.grid_cells![censor]!;
          cells.yhat_cells!.forEach((row, q) =>
            row.forEach((yhat, t) => {
              const a = cells.adjusted_fit_cells![q][t];
              if (!(a > 0) || !Number.isFinite(yhat)) return;
              total += a;
              squares += a * a;
              weighted += a * yhat;
            }),
          );
        }
        close(result.yhat[0], weighted / total, 1e-9, "composite yhat");
        close(result.adjusted_fit[0], squares / total, 1e-9, "composite adjusted fit");
      },
      30,
    );
  });
});
