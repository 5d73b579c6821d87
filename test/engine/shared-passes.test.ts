/**
 * The Grid's shared passes give the very numbers of the passes they replace: calibrateBoth is
 * calibrate for relevance then similarity (the same buckets, counts, validity and cuts; the other
 * numbers within rounding, since calibrateBoth adds each censor's bucket sums from the two
 * censors' joint buckets, docs/methodology.md), addWeightsOfTwo is addWeights twice, percentilesOfTwo
 * is percentiles twice, and a walk that skips the similarity of levels it only passes through
 * gives each visited combination the model a walk to that combination alone gives. Compared
 * exactly (Object.is on every number), on seeded data with many ties, for every operator, both
 * units and one to five thresholds.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  addWeights,
  addWeightsOfTwo,
  calibrate,
  calibrateBoth,
  CalibrationScratch,
  outcomeStats,
  type Calibration,
  type CensorSettings,
  type FitSettings,
} from "../../src/engine/calibrate.js";
import { datasetFromRows } from "../../src/engine/data.js";
import type { CensorOperator } from "../../src/engine/options.js";
import { percentiles, percentilesOfTwo } from "../../src/engine/percentile.js";
import { standardize, trieOrder, walkCombinations, WalkLevels, type WalkedModel } from "../../src/engine/walk.js";

const OPERATORS: CensorOperator[] = ["gte", "gt", "lte", "lt"];

/** Seeded data: `levels` distinct values per attribute (few levels: many tied scores). */
function data(seed: number, N: number, K: number, levels: number) {
  let s = seed >>> 0;
  const next = () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
  const X = Array.from({ length: N }, () => Array.from({ length: K }, () => Math.floor(next() * levels) / 4 + next() * 1e-3 * +(levels > 50)));
  const y = X.map((row) => row[0] - row[K - 1] + next());
  const theta = Float64Array.from({ length: K }, () => Math.floor(next() * levels) / 4);
  return { dataset: datasetFromRows(y, X), theta };
}

/** Within rounding of each other: the same where exact (booleans, counts, cuts, NaN), else within 1e-9 of the larger magnitude (at least 1). */
function expectCloseCalibrations(got: readonly Calibration[], want: readonly Calibration[]) {
  expect(got.length).toBe(want.length);
  got.forEach((calibration, q) => {
    for (const key of Object.keys(want[q]) as (keyof Calibration)[]) {
      const [a, b] = [calibration[key], want[q][key]];
      if (typeof a !== "number" || typeof b !== "number" || Object.is(a, b) || ["n", "threshold", "rStar", "rStarPercent"].includes(key)) {
        expect([key, a]).toEqual([key, b]);
      } else {
        expect(Math.abs(a - b), key).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(a), Math.abs(b)));
      }
    }
  });
}

/** A copy of a walked model (the walk reuses its arrays). */
function snapshot(model: WalkedModel) {
  return {
    relevance: Array.from(model.relevance),
    similarity: Array.from(model.similarity),
    bounds: Array.from(model.bounds),
    infoX: Array.from(model.infoX),
    infoTheta: model.infoTheta,
    positivesDistance: model.positivesDistance,
  };
}

/**
 * Walks `combinations` (all of them, or each alone along the path the walk of all gives it,
 * `trieOrder`) and returns a copy of every visited model, by index.
 */
function walked(dataset: ReturnType<typeof data>["dataset"], theta: Float64Array, combinations: number[][], alone: boolean) {
  const shared = standardize(dataset, theta);
  const out = new Map<number, ReturnType<typeof snapshot>>();
  const levels = new WalkLevels(dataset.rows, dataset.cols, 1);
  const visit = (index: number, model: WalkedModel) => out.set(index, snapshot(model));
  const indices = combinations.map((_, q) => q);
  if (alone) {
    const { order, paths } = trieOrder(combinations, indices);
    order.forEach((q, o) => {
      const path = [...paths[o]];
      walkCombinations(
        shared,
        dataset.y,
        [path],
        [0],
        true,
        (_, model) => visit(q, model),
        () => out.set(q, null!),
        levels,
      );
    });
  } else walkCombinations(shared, dataset.y, combinations, indices, true, visit, (q) => out.set(q, null!), levels);
  return out;
}

describe("shared passes", () => {
  it("calibrateBoth gives calibrate's buckets, counts and cuts exactly and its calibrations within rounding; addWeightsOfTwo gives addWeights, censor after censor, within rounding (it adds both censors' slopes first)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1e6 }),
        fc.integer({ min: 8, max: 120 }),
        fc.constantFrom(2, 3, 6, 1000),
        fc.constantFrom(...OPERATORS),
        fc.constantFrom<"percent" | "score">("percent", "score"),
        fc.array(fc.constantFrom(0, 0.1, 0.2, 0.25, 0.5, 0.8, 1), { minLength: 1, maxLength: 5 }),
        (seed, N, levels, operator, unit, fractions) => {
          const K = 4;
          const { dataset, theta } = data(seed, N, K, levels);
          const shared = standardize(dataset, theta);
          const thresholds = unit === "percent" ? fractions : fractions.map((f) => 4 * f - 2);
          const settings: CensorSettings = { thresholds, unit, operator };
          const fit: FitSettings = { multiplier: "K", attributes: 3, logistic: false };
          const T = thresholds.length;
          const outcome = outcomeStats(dataset.y, new Float64Array(N));
          walkCombinations(
            shared,
            dataset.y,
            [[0, 1, 3]],
            [0],
            false,
            (_, model) => {
              const [r1, s1] = [new CalibrationScratch(N, T), new CalibrationScratch(N, T)];
              const [byRelevance, bySimilarity] = calibrateBoth(model, dataset.y, outcome, settings, fit, r1, s1);
              const r2 = new CalibrationScratch(N, T);
              const s2 = new CalibrationScratch(N, T);
              const relevance = calibrate(model, dataset.y, outcome, "relevance", settings, fit, r2);
              const similarity = calibrate(model, dataset.y, outcome, "similarity", settings, fit, s2);
              expectCloseCalibrations(byRelevance.calibrations, relevance.calibrations);
              expectCloseCalibrations(bySimilarity.calibrations, similarity.calibrations);
              expect(byRelevance.buckets).toEqual(relevance.buckets);
              expect(bySimilarity.buckets).toEqual(similarity.buckets);

              const factorsA = Float64Array.from({ length: T }, (_, t) => (t % 2 ? 0 : 0.3 + t));
              const factorsB = Float64Array.from({ length: T }, (_, t) => 1.7 - 0.2 * t);
              const fused = Float64Array.from({ length: N }, (_, i) => i / 7);
              const apart = fused.slice();
              addWeightsOfTwo(model, byRelevance, factorsA, r1, bySimilarity, factorsB, s1, fused);
              addWeights(model, byRelevance, factorsA, apart, r1);
              addWeights(model, bySimilarity, factorsB, apart, s1);
              fused.forEach((v, i) => {
                if (Number.isNaN(v) || Number.isNaN(apart[i])) expect(v).toBe(apart[i]);
                else expect(Math.abs(v - apart[i])).toBeLessThanOrEqual(1e-12 * (1 + Math.abs(apart[i])));
              });
            },
            () => {},
          );
        },
      ),
      { seed: 15, numRuns: 150 },
    );
  });

  it("percentilesOfTwo gives exactly two calls of percentiles", () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.integer({ min: -4, max: 4 }), fc.double({ min: -1e3, max: 1e3, noNaN: true })), { minLength: 2, maxLength: 400 }),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 6 }),
        fc.constantFrom(0, 1e-9, 0.5),
        (values, fractions, width) => {
          const n = values.length;
          const a = Float64Array.from(values);
          const b = Float64Array.from(values, (v, i) => (i % 3 === 0 ? -v : v * v) / 3);
          const extremes = (x: Float64Array) => [Math.min(...x), Math.max(...x)];
          const [minA, maxA] = extremes(a);
          const [minB, maxB] = extremes(b);
          const [outA, outB, soloA, soloB] = [0, 0, 0, 0].map(() => new Float64Array(fractions.length));
          percentilesOfTwo(a, b, n, fractions, new Float64Array(n), new Float64Array(n), outA, outB, minA, maxA, width, minB, maxB, width);
          percentiles(a, n, fractions, new Float64Array(n), soloA, minA, maxA, width);
          percentiles(b, n, fractions, new Float64Array(n), soloB, minB, maxB, width);
          expect(outA).toEqual(soloA);
          expect(outB).toEqual(soloB);
        },
      ),
      { seed: 16, numRuns: 300 },
    );
  });

  it("trieOrder visits every listed combination once, along its own columns, on no more levels than ascending order", () => {
    fc.assert(
      fc.property(fc.array(fc.uniqueArray(fc.integer({ min: 0, max: 13 }), { minLength: 1, maxLength: 14 }), { minLength: 1, maxLength: 70 }), (sets) => {
        const combinations = sets.map((set) => [...set].sort((a, b) => a - b));
        const indices = combinations.map((_, q) => q);
        const { order, paths } = trieOrder(combinations, indices);
        expect([...order].sort((a, b) => a - b)).toEqual(indices);
        order.forEach((q, o) => expect([...paths[o]].sort((a, b) => a - b)).toEqual(combinations[q]));
        const levels = (lists: readonly (readonly number[])[]) => {
          let count = 0;
          lists.forEach((list, o) => {
            let common = 0;
            while (o > 0 && common < list.length && list[common] === lists[o - 1][common]) common++;
            count += list.length - common;
          });
          return count;
        };
        const ascending = [...combinations].sort((a, b) => {
          for (let d = 0; d < Math.min(a.length, b.length); d++) if (a[d] !== b[d]) return a[d] - b[d];
          return a.length - b.length;
        });
        expect(levels(paths)).toBeLessThanOrEqual(levels(ascending));
        // The same answer again (kept for runs of a plan's indices).
        expect(trieOrder(combinations, indices)).toEqual({ order, paths });
      }),
      { seed: 17, numRuns: 200 },
    );
  });

  it("a walk through prefixes it does not visit gives each combination the model it gets walked alone", () => {
    const { dataset, theta } = data(7, 90, 7, 5);
    // Sampled-like: most prefixes are not themselves visited; a duplicate, and a prefix listed after its extension.
    const combinations = [
      [0, 2, 4, 6],
      [0, 2, 5],
      [1, 3, 4, 5, 6],
      [0, 2, 4, 5, 6],
      [1, 2],
      [0, 1, 2, 3, 4, 5, 6],
      [0, 2, 4, 6],
      [1, 3, 4],
    ];
    const together = walked(dataset, theta, combinations, false);
    const alone = walked(dataset, theta, combinations, true);
    expect(together.size).toBe(combinations.length);
    // The walk of all takes its columns in another order than ascending here (a trie of 14 levels, against 19).
    expect(trieOrder(combinations, [0, 1, 2, 3, 4, 5, 6, 7]).paths.some((path) => path.some((j, d) => d > 0 && j < path[d - 1]))).toBe(true);
    for (const [q, model] of alone) expect(together.get(q), `combination ${combinations[q].join(",")}`).toEqual(model);
    // And each visited model's similarity and bounds are those of its own relevance and informativeness (none left from another level).
    for (const [q, model] of together) {
      const similarity = model.relevance.map((r, i) => r - 0.5 * model.infoX[i] - 0.5 * model.infoTheta);
      expect(model.similarity, `combination ${combinations[q].join(",")}`).toEqual(similarity);
      const bounds = [Math.min(...model.relevance), Math.max(...model.relevance), Math.min(...similarity), Math.max(...similarity)];
      expect(model.bounds).toEqual(bounds);
    }
  });
});
