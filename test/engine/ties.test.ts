/**
 * Ties at the censor's cut (docs/ties.md): the rows PSR, MaxFit and Grid keep agree with exact
 * rational arithmetic (./exact.ts) on data full of repeated values, for relevance and similarity,
 * percent and score units and every operator, and the published vectors still hold.
 */
import { describe, expect, it } from "vitest";
import { CUT_TIE_TOLERANCE } from "../../src/engine/choices.js";
import { datasetFromRows } from "../../src/engine/data.js";
import { grid, maxfit, psr } from "../../src/engine/index.js";
import type { CensorOperator, CensorType, CensorUnit, Objective } from "../../src/engine/options.js";
import { gold, goldCase } from "../gold.js";
import { exactCalibration, exactGrid, exactMaxFit, exactPercentile, exactPsr, exactScores, type ExactCalibration } from "./exact.js";

const OPERATORS: CensorOperator[] = ["gte", "gt", "lte", "lt"];
const CENSORS: CensorType[] = ["relevance", "similarity"];
const DEFAULT_THRESHOLDS = [0, 0.2, 0.5, 0.8];
const PERCENTS = [...DEFAULT_THRESHOLDS, 0.1, 0.25, 0.3, 0.6, 0.7, 0.9, 1];

interface Case {
  name: string;
  y: number[];
  X: number[][];
  theta: number[];
  /** Score-unit thresholds that some scores equal exactly. */
  scores?: number[];
}

/** Seeded small-integer data (few levels, so many ties), read as decimals through `scale` and `offset`. */
function tied(seed: number, N: number, K: number, levels: number, scale: number, offset: number): Case {
  let s = seed >>> 0;
  const next = (n: number) => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return Math.floor((s / 2 ** 32) * n);
  };
  const dec = (v: number) => Number((offset + scale * v).toFixed(6));
  const X = Array.from({ length: N }, () => Array.from({ length: K }, () => dec(next(levels))));
  const y = Array.from({ length: N }, () => next(20) / 2);
  const theta = Array.from({ length: K }, () => dec(next(levels + 1)));
  return { name: `tied seed ${seed} N=${N} K=${K} levels=${levels} scale=${scale}`, y, X, theta };
}

/** Every row has a twin (same attributes, another outcome). */
function twins(seed: number): Case {
  const base = tied(seed, 5, 2, 4, 0.1, 0.2);
  return { ...base, name: `twins seed ${seed}`, X: [...base.X, ...base.X], y: [...base.y, ...base.y.map((v) => v + 1.5)] };
}

/**
 * One attribute at 0.3 + 0.1 x {0, 1, 2}, mean 0.4 and variance 0.01: at theta 0.5 the relevance is
 * exactly -1, 0, 1 and the similarity -2, -0.5, 0, so score-unit thresholds at those values tie.
 */
const scoreTies: Case = {
  name: "scores at -2, -1, -0.5, 0, 1",
  y: [3, 1.5, 4, 1, 5.5],
  X: [[0.3], [0.3], [0.5], [0.5], [0.4]],
  theta: [0.5],
  scores: [-2, -1, -0.5, 0, 1, 0.5],
};

/** Every similarity ties: each row is 0.1 from theta. */
const allSimilarTied: Case = {
  name: "all similarity tied",
  y: [2, 7, 1, 8, 2.5, 6, 4],
  X: [[0.3], [0.5], [0.5], [0.3], [0.5], [0.3], [0.5]],
  theta: [0.4],
};

/** Theta at the attributes' mean: every relevance is 0, so every calibration is invalid in exact arithmetic. */
const thetaAtMean: Case = {
  name: "theta at the mean (all relevance tied at 0)",
  y: [1, 4, 2, 8, 5, 7, 3, 6, 2, 9],
  X: [
    [0.1, 1.3],
    [0.7, 1.1],
    [0.3, 0.9],
    [0.9, 1.7],
    [0.1, 0.3],
    [0.7, 1.3],
    [0.3, 0.7],
    [0.5, 1.9],
    [0.3, 1.1],
    [0.1, 1.7],
  ],
  theta: [0.4, 1.2],
};

const quickstart: Case = { name: "quickstart, theta [31, 3, 79, 55, 7]", y: gold.inputs.y, X: gold.inputs.X, theta: [31, 3, 79, 55, 7] };
const published: Case = { name: "quickstart, published theta", y: gold.inputs.y, X: gold.inputs.X, theta: gold.inputs.theta };

const CASES: Case[] = [
  quickstart,
  published,
  scoreTies,
  allSimilarTied,
  thetaAtMean,
  twins(3),
  twins(11),
  tied(1, 8, 1, 3, 0.1, 0.3),
  tied(2, 11, 2, 3, 0.1, 0.2),
  tied(5, 9, 2, 4, 0.37, 0),
  tied(7, 13, 3, 3, 1, 0),
  tied(9, 16, 3, 4, 0.1, 0.7),
];

const run = (c: Case) => ({ data: datasetFromRows(c.y, c.X), theta: Float64Array.from(c.theta) });
const columnOf = (m: Array<Array<number | null>>, t: number) => m.map((row) => row[t]);

/** yhat and the fits agree with the exact calibration (or both are invalid). */
function expectCalibration(label: string, exact: ExactCalibration, got: { n: number; yhat: number | null; fit: number | null; adjustedFit: number | null }) {
  expect(got.n, `${label} n`).toBe(exact.n);
  if (!exact.valid) {
    expect(got.yhat === null || Number.isNaN(got.yhat), `${label}: invalid in exact arithmetic, got yhat ${got.yhat}`).toBe(true);
    return;
  }
  for (const [key, want, have] of [
    ["yhat", exact.yhat, got.yhat],
    ["fit", exact.fit, got.fit],
    ["adjusted_fit", exact.adjustedFit, got.adjustedFit],
  ] as const) {
    expect(Math.abs((have as number) - want), `${label} ${key}: ${have} vs exact ${want}`).toBeLessThanOrEqual(1e-8 * Math.max(1, Math.abs(want)));
  }
}

describe("ties at the cut agree with exact arithmetic", () => {
  it("the quickstart default Grid at theta [31, 3, 79, 55, 7] is 4.969783 (the exact answer; rounding gave 4.970386)", () => {
    const { data, theta } = run(quickstart);
    const result = grid(data, theta, {});
    expect(Math.abs(result.yhat[0] - 4.969783)).toBeLessThan(1e-6);
    expect(Math.abs(result.yhat[0] - exactGrid(quickstart.y, quickstart.X, quickstart.theta, DEFAULT_THRESHOLDS).yhat)).toBeLessThan(1e-9);
  });

  it("the quickstart's tied single-attribute similarity cells keep what exact arithmetic keeps (all 7 at attribute index 1, 0.2)", () => {
    const { data, theta } = run(quickstart);
    const result = grid(data, theta, { retain: ["n_cells", "combi_cells"] });
    const combis = result.grid_cells!.combi_cells!;
    const n = result.grid_cells!.similarity!.n_cells!;
    const single = (j: number) => combis.findIndex((row) => row.every((bit, a) => bit === (a === j ? 1 : 0)));
    expect(n[single(1)][1]).toBe(7);
    for (let j = 0; j < 5; j++) {
      const scores = exactScores(quickstart.X, quickstart.theta, [j])!;
      DEFAULT_THRESHOLDS.forEach((threshold, t) => {
        const exact = exactCalibration(scores, quickstart.y, { censor: "similarity", threshold, unit: "percent", operator: "gte", attributes: 1 });
        expect(n[single(j)][t], `attribute ${j} at ${threshold}`).toBe(exact.n);
      });
    }
  });

  it("the data do tie at the cut: every default threshold's exact cut is a score two rows share, somewhere in the cases", () => {
    for (const threshold of DEFAULT_THRESHOLDS) {
      const hit = CASES.some((c) => {
        const scores = exactScores(
          c.X,
          c.theta,
          c.X[0].map((_, j) => j),
        );
        return (
          scores !== null &&
          CENSORS.some((censor) => {
            const cut = exactPercentile(scores[censor], threshold);
            return scores[censor].filter((s) => s.cmp(cut) === 0).length >= 2;
          })
        );
      });
      expect(hit, `a tie exactly at ${threshold}`).toBe(true);
    }
  });

  for (const c of CASES) {
    it(`PSR, ${c.name}: kept rows, cut, n and yhat for each censor, unit and operator`, () => {
      const { data, theta } = run(c);
      const units: [CensorUnit, number[]][] = [
        ["percent", PERCENTS],
        ["score", c.scores ?? [0, -0.5, 0.5, -1]],
      ];
      for (const [unit, thresholds] of units) {
        for (const censor of CENSORS) {
          for (const operator of OPERATORS) {
            const label = `${censor} ${unit} ${operator}`;
            const exact = exactPsr(c.y, c.X, c.theta, censor, thresholds, unit, operator);
            const result = psr(data, theta, { threshold: thresholds, censor_type: censor, censor_unit: unit, censor_operator: operator });
            thresholds.forEach((threshold, t) => {
              const at = `${label} at ${threshold}`;
              expect(columnOf(result.prediction_weights.include!, t), `${at} include`).toEqual(exact[t].kept.map((k) => (k ? 1 : 0)));
              const rStar = exact[t].rStar.toNumber();
              expect(Math.abs(result.auxiliary!.r_star[t] - rStar), `${at} r_star`).toBeLessThanOrEqual(1e-12 * Math.max(1, Math.abs(rStar)));
              if (unit === "score") expect(result.auxiliary!.r_star_percent[t], `${at} r_star_percent`).toBeCloseTo(exact[t].rStarPercent.toNumber(), 12);
              expectCalibration(at, exact[t], {
                n: result.auxiliary!.n[t],
                yhat: result.yhat[t],
                fit: result.fit[t],
                adjustedFit: result.adjusted_fit[t],
              });
            });
          }
        }
      }
    });

    it(`MaxFit, ${c.name}: the exact first maximum, for each objective and operator`, () => {
      const { data, theta } = run(c);
      for (const objective of ["fit", "adjusted_fit", "kfit"] as Objective[]) {
        for (const operator of OPERATORS) {
          const exact = exactMaxFit(c.y, c.X, c.theta, DEFAULT_THRESHOLDS, objective, "percent", operator);
          if (exact.selected < 0) {
            expect(() => maxfit(data, theta, { objective, censor_operator: operator })).toThrow(/No threshold retains/);
            continue;
          }
          const result = maxfit(data, theta, { objective, censor_operator: operator });
          expect(result.maxfit_index!.selected, `${objective} ${operator}`).toBe(exact.selected);
          const w = exact.candidates[exact.selected];
          expectCalibration(`${objective} ${operator}`, w, {
            n: result.auxiliary!.n[0],
            yhat: result.yhat[0],
            fit: result.fit[0],
            adjustedFit: result.adjusted_fit[0],
          });
        }
      }
    });

    it(`Grid, ${c.name}: every cell's n and the composite yhat, percent and score units`, () => {
      const { data, theta } = run(c);
      const units: [CensorUnit, number[]][] = [
        ["percent", DEFAULT_THRESHOLDS],
        ["score", c.scores ?? [0, -0.5]],
      ];
      for (const [unit, thresholds] of units) {
        for (const operator of ["gte", "lt"] as CensorOperator[]) {
          const label = `${unit} ${operator}`;
          const exact = exactGrid(c.y, c.X, c.theta, thresholds, unit, operator);
          const valid = exact.cells.some((cell) => cell.calibration?.valid && cell.calibration.fixed.adjusted_fit > 0n);
          const options = { threshold: thresholds, censor_unit: unit, censor_operator: operator, retain: ["n_cells", "combi_cells"] as never };
          if (!exact.cells.some((cell) => cell.calibration?.valid)) {
            expect(() => grid(data, theta, options), label).toThrow(/Every Grid cell is invalid/);
            continue;
          }
          const result = grid(data, theta, options);
          const cells = result.grid_cells!;
          for (const cell of exact.cells) {
            const q = cells.combi_cells!.findIndex((row) => row.every((bit, j) => bit === (cell.columns.includes(j) ? 1 : 0)));
            const n = cells[cell.censor]!.n_cells![q][cell.t];
            expect(n, `${label} ${cell.censor} [${cell.columns}] at ${thresholds[cell.t]}`).toBe(cell.calibration ? cell.calibration.n : null);
          }
          if (valid)
            expect(Math.abs(result.yhat[0] - exact.yhat), `${label} yhat ${result.yhat[0]} vs exact ${exact.yhat}`).toBeLessThanOrEqual(
              1e-9 * Math.max(1, Math.abs(exact.yhat)),
            );
        }
      }
    });
  }

  it("keeps the published vectors within 1e-6", () => {
    const { data, theta } = run(published);
    const g = goldCase("grid default");
    expect(Math.abs(grid(data, theta, g.options).yhat[0] - g.expect.yhat)).toBeLessThanOrEqual(1e-6);
    const p = goldCase("psr thresholds sweep");
    const result = psr(data, theta, p.options);
    (p.expect.yhat as number[]).forEach((v, t) => expect(Math.abs(result.yhat[t] - v)).toBeLessThanOrEqual(1e-6));
  });
});

describe("the tie tolerance sits between rounding and real gaps", () => {
  it("on seeded small-integer and decimal data, score rounding is far below CUT_TIE_TOLERANCE and distinct scores far above it", () => {
    let s = 12345;
    const next = (n: number) => {
      s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
      return Math.floor((s / 2 ** 32) * n);
    };
    let worstError = 0;
    let smallestGap = Infinity;
    for (let trial = 0; trial < 60; trial++) {
      const N = 5 + next(10);
      const K = 1 + next(4);
      const scale = [1, 0.1, 0.37][trial % 3];
      const dec = (v: number) => Number((0.3 + scale * v).toFixed(6));
      const X = Array.from({ length: N }, () => Array.from({ length: K }, () => dec(next(4))));
      const y = Array.from({ length: N }, () => next(10));
      const theta = Array.from({ length: K }, () => dec(next(5)));
      const exact = exactScores(
        X,
        theta,
        X[0].map((_, j) => j),
      );
      if (!exact) continue;
      let result;
      try {
        result = psr(datasetFromRows(y, X), Float64Array.from(theta), { threshold: [0] });
      } catch {
        continue; // singular in floating point too
      }
      for (const censor of CENSORS) {
        const e = exact[censor].map((v) => v.toNumber());
        const size = Math.max(1, ...e.map(Math.abs));
        const got = result.insights[censor];
        e.forEach((v, i) => (worstError = Math.max(worstError, Math.abs((got[i] as number) - v) / size)));
        for (let i = 0; i < N; i++) {
          for (let j = 0; j < i; j++) if (exact[censor][i].cmp(exact[censor][j]) !== 0) smallestGap = Math.min(smallestGap, Math.abs(e[i] - e[j]) / size);
        }
      }
    }
    expect(worstError).toBeLessThan(CUT_TIE_TOLERANCE / 1000);
    expect(smallestGap).toBeGreaterThan(CUT_TIE_TOLERANCE * 1000);
  });
});
