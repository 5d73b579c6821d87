import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { planCombinations, type CombinationOptions } from "../../src/engine/combinations.js";
import { InvalidInputError } from "../../src/engine/errors.js";
import { createRandom, randomInt, xoshiro128ss } from "../../src/engine/random.js";

function opts(given: Partial<CombinationOptions> = {}): CombinationOptions {
  return {
    min_k: undefined,
    max_k: undefined,
    allowed_k: undefined,
    required_attributes: undefined,
    attribute_groups: undefined,
    attribute_combi: undefined,
    max_iter: 1000,
    seed: 42,
    ...given,
  };
}

function binom(n: number, r: number): number {
  let c = 1;
  for (let i = 1; i <= r; i++) c = (c * (n - r + i)) / i;
  return Math.round(c);
}

function mask(k: number, on: number[]): number[] {
  const row = new Array<number>(k).fill(0);
  for (const j of on) row[j] = 1;
  return row;
}

/** Trie order: elementwise lexicographic, a prefix before its extensions. */
function trieCompare(a: number[], b: number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

/** Independent oracle: every subset checked against the constraints directly. */
function admits(k: number, o: CombinationOptions, combo: number[]): boolean {
  if (combo.length === 0) return false;
  const on = new Set(combo);
  const size = combo.length;
  if (o.allowed_k !== undefined) {
    if (!o.allowed_k.includes(size)) return false;
  } else if (size < (o.min_k ?? 1) || size > (o.max_k ?? k)) return false;
  if (o.required_attributes?.some((b, j) => b === 1 && !on.has(j))) return false;
  for (const row of o.attribute_groups ?? []) {
    const cols = row.flatMap((b, j) => (b === 1 ? [j] : []));
    if (cols.length < 2) continue;
    const inside = cols.filter((j) => on.has(j)).length;
    if (inside !== 0 && inside !== cols.length) return false;
  }
  // Required attribute inside a group: the group check above forces the rest of the group on.
  return true;
}

function bruteForce(k: number, o: CombinationOptions): number[][] {
  const out: number[][] = [];
  for (let m = 1; m < 1 << k; m++) {
    const combo: number[] = [];
    for (let j = 0; j < k; j++) if (m & (1 << j)) combo.push(j);
    if (admits(k, o, combo)) out.push(combo);
  }
  return out.sort(trieCompare);
}

function isTrieSorted(list: number[][]): boolean {
  for (let i = 1; i < list.length; i++) if (trieCompare(list[i - 1], list[i]) >= 0) return false;
  return true;
}

function expectSampledValid(k: number, o: CombinationOptions, combos: number[][]): void {
  expect(combos).toHaveLength(o.max_iter);
  expect(new Set(combos.map((c) => c.join(","))).size).toBe(combos.length);
  for (const c of combos) {
    expect(c.every((j, i) => Number.isInteger(j) && j >= 0 && j < k && (i === 0 || c[i - 1] < j))).toBe(true);
    expect(admits(k, o, c)).toBe(true);
  }
  expect(isTrieSorted(combos)).toBe(true);
}

/** An error thrown by fn, for inspection. */
function thrown(fn: () => unknown): InvalidInputError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidInputError);
    return e as InvalidInputError;
  }
  throw new Error("expected an InvalidInputError");
}

describe("random", () => {
  it("reproduces the xoshiro128** reference stream seeded by SplitMix32", () => {
    // Values from the C reference implementation (uint32 arithmetic), same seeding.
    const next = xoshiro128ss(42);
    expect([next(), next(), next(), next(), next()]).toEqual([660444221, 3652823732, 77672526, 910233633, 2297337756]);
    const zero = xoshiro128ss(0);
    expect([zero(), zero()]).toEqual([1789933344, 44971166]);
    const top = xoshiro128ss(4294967295);
    for (let i = 0; i < 1005; i++) top();
    expect(top()).toBe(2417636423);
  });

  it("gives floats in [0,1), deterministic per seed and different across seeds", () => {
    const a = createRandom(7);
    const b = createRandom(7);
    const c = createRandom(8);
    const xs = Array.from({ length: 2000 }, () => a());
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
    expect(Array.from({ length: 2000 }, () => b())).toEqual(xs);
    expect(Array.from({ length: 2000 }, () => c())).not.toEqual(xs);
    const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
    expect(Math.abs(mean - 0.5)).toBeLessThan(0.03);
  });

  it("randomInt covers 0..n-1 evenly", () => {
    const rand = createRandom(123);
    const counts = new Array<number>(6).fill(0);
    for (let i = 0; i < 6000; i++) counts[randomInt(rand, 6)]++;
    for (const n of counts) expect(Math.abs(n - 1000)).toBeLessThan(150);
    expect(() => randomInt(rand, 0)).toThrow(RangeError);
  });
});

describe("planCombinations: enumeration", () => {
  it("K=5 by default gives all 31 subsets in trie order", () => {
    const plan = planCombinations(5, opts());
    expect(plan.admissible).toBe(31);
    expect(plan.sampled).toBe(false);
    expect(plan.combinations).toHaveLength(31);
    expect(plan.combinations.slice(0, 6)).toEqual([[0], [0, 1], [0, 1, 2], [0, 1, 2, 3], [0, 1, 2, 3, 4], [0, 1, 2, 4]]);
    expect(plan.combinations[30]).toEqual([4]);
    expect(plan.combinations).toEqual(bruteForce(5, opts()));
  });

  it("min_k/max_k bands count binomial sums", () => {
    for (const [lo, hi] of [
      [2, 4],
      [3, 3],
      [1, 1],
      [6, 6],
    ]) {
      const plan = planCombinations(6, opts({ min_k: lo, max_k: hi }));
      let expected = 0;
      for (let s = lo; s <= hi; s++) expected += binom(6, s);
      expect(plan.admissible).toBe(expected);
      expect(plan.combinations).toHaveLength(expected);
      expect(plan.combinations.every((c) => c.length >= lo && c.length <= hi)).toBe(true);
      expect(plan.combinations).toEqual(bruteForce(6, opts({ min_k: lo, max_k: hi })));
    }
    expect(planCombinations(6, opts({ min_k: 5 })).admissible).toBe(binom(6, 5) + 1);
    expect(planCombinations(6, opts({ max_k: 2 })).admissible).toBe(6 + 15);
  });

  it("allowed_k [1,3] gives C(5,1)+C(5,3)", () => {
    const plan = planCombinations(5, opts({ allowed_k: [1, 3] }));
    expect(plan.admissible).toBe(5 + 10);
    expect(plan.combinations.map((c) => c.length).sort()).toEqual([...new Array(5).fill(1), ...new Array(10).fill(3)]);
    expect(plan.combinations).toEqual(bruteForce(5, opts({ allowed_k: [1, 3] })));
  });

  it("a required attribute is in every combination; 2^(K-1) of them", () => {
    const o = opts({ required_attributes: mask(5, [2]) });
    const plan = planCombinations(5, o);
    expect(plan.admissible).toBe(16);
    expect(plan.combinations).toHaveLength(16);
    expect(plan.combinations.every((c) => c.includes(2))).toBe(true);
    expect(plan.combinations[0]).toEqual([0, 1, 2]);
    expect(plan.combinations).toContainEqual([2]);
    expect(plan.combinations).toEqual(bruteForce(5, o));
    // With min_k 2 the lone [2] drops out: 2^(K-1) - 1.
    const banded = planCombinations(5, opts({ required_attributes: mask(5, [2]), min_k: 2 }));
    expect(banded.admissible).toBe(15);
    expect(banded.combinations).not.toContainEqual([2]);
    // Two required attributes: 2^(K-2).
    expect(planCombinations(5, opts({ required_attributes: mask(5, [0, 4]) })).admissible).toBe(8);
  });

  it("attribute groups switch on and off together; a single-1 row is ignored", () => {
    const o = opts({ attribute_groups: [mask(5, [1, 3]), mask(5, [4])] });
    const plan = planCombinations(5, o);
    // Units: {0}, {1,3}, {2}, {4} -> 2^4 - 1 subsets.
    expect(plan.admissible).toBe(15);
    for (const c of plan.combinations) expect(c.includes(1)).toBe(c.includes(3));
    expect(plan.combinations).toContainEqual([4]);
    expect(plan.combinations).toContainEqual([1, 3]);
    expect(plan.combinations).not.toContainEqual([1]);
    expect(plan.combinations).toEqual(bruteForce(5, o));
    // Sizes count columns, not units: with max_k 2 the pair {1,3} still fits, but not {0,1,3}.
    const small = planCombinations(5, opts({ attribute_groups: [mask(5, [1, 3])], max_k: 2 }));
    expect(small.combinations).toContainEqual([1, 3]);
    expect(small.combinations).not.toContainEqual([0, 1, 3]);
    expect(small.admissible).toBe(3 + 3 + 1); // three singles, three pairs of singles, the group
  });

  it("a required attribute inside a group forces the whole group on", () => {
    const o = opts({ required_attributes: mask(6, [1]), attribute_groups: [mask(6, [1, 2, 5])] });
    const plan = planCombinations(6, o);
    expect(plan.admissible).toBe(8); // free: {0}, {3}, {4}
    expect(plan.combinations[0]).toEqual([0, 1, 2, 3, 4, 5]);
    expect(plan.combinations).toContainEqual([1, 2, 5]);
    for (const c of plan.combinations) expect([1, 2, 5].every((j) => c.includes(j))).toBe(true);
    expect(plan.combinations).toEqual(bruteForce(6, o));
  });

  it("matches brute force over mixed constraints", () => {
    const k = 9;
    const cases: CombinationOptions[] = [
      opts({ attribute_groups: [mask(k, [0, 8]), mask(k, [2, 3, 4])], min_k: 3, max_k: 6 }),
      opts({ attribute_groups: [mask(k, [5, 1])], required_attributes: mask(k, [7]), allowed_k: [2, 4, 9] }),
      opts({ required_attributes: mask(k, [3, 6]), attribute_groups: [mask(k, [6, 7]), mask(k, [0])], max_k: 5 }),
    ];
    for (const o of cases) {
      const expected = bruteForce(k, o);
      const plan = planCombinations(k, o);
      expect(plan.sampled).toBe(false);
      expect(plan.admissible).toBe(expected.length);
      expect(plan.combinations).toEqual(expected);
    }
  });

  it("enumerates everything when the count equals max_iter", () => {
    const plan = planCombinations(6, opts({ max_iter: 63 }));
    expect(plan.sampled).toBe(false);
    expect(plan.combinations).toEqual(bruteForce(6, opts()));
  });
});

describe("planCombinations: random constraints against brute force", () => {
  // K <= 8, disjoint groups (some single-1 rows), a required mask, sizes as a band or a list, and a
  // max_iter that sometimes forces sampling. Fixed fast-check seed, so the run is deterministic.
  const constraints = fc
    .integer({ min: 1, max: 8 })
    .chain((k) =>
      fc.record({
        k: fc.constant(k),
        groupOf: fc.array(fc.integer({ min: -1, max: 2 }), { minLength: k, maxLength: k }),
        required: fc.array(fc.integer({ min: 0, max: 5 }), { minLength: k, maxLength: k }),
        sizes: fc.oneof(
          fc.constant({}),
          fc.record({ allowed_k: fc.uniqueArray(fc.integer({ min: 1, max: k }), { minLength: 1, maxLength: k }) }),
          fc.record({ min_k: fc.integer({ min: 1, max: k }) }),
          fc.record({ max_k: fc.integer({ min: 1, max: k }) }),
          fc.tuple(fc.integer({ min: 1, max: k }), fc.integer({ min: 1, max: k })).map(([a, b]) => ({ min_k: Math.min(a, b), max_k: Math.max(a, b) })),
        ),
        maxIter: fc.oneof(fc.constant(1000), fc.integer({ min: 1, max: 40 })),
        seed: fc.integer({ min: 0, max: 2 ** 32 - 1 }),
      }),
    )
    .map(({ k, groupOf, required, sizes, maxIter, seed }) => {
      const groups = [0, 1, 2].map((g) => groupOf.map((x) => (x === g ? 1 : 0))).filter((row) => row.includes(1));
      const o = opts({
        ...sizes,
        attribute_groups: groups.length > 0 ? groups : undefined,
        required_attributes: required.some((b) => b === 0) ? required.map((b) => (b === 0 ? 1 : 0)) : undefined,
        max_iter: maxIter,
        seed,
      });
      return { k, o };
    });

  it("enumerates, samples or refuses exactly as the constraints say", () => {
    let sampled = 0;
    let refused = 0;
    fc.assert(
      fc.property(constraints, ({ k, o }) => {
        const expected = bruteForce(k, o);
        if (expected.length === 0) {
          const e = thrown(() => planCombinations(k, o));
          expect(e.field).toBe("options");
          refused++;
          return;
        }
        const plan = planCombinations(k, o);
        expect(plan.admissible).toBe(expected.length);
        if (expected.length <= o.max_iter) {
          expect(plan.sampled).toBe(false);
          expect(plan.combinations).toEqual(expected);
        } else {
          sampled++;
          expect(plan.sampled).toBe(true);
          expectSampledValid(k, o, plan.combinations);
        }
      }),
      { seed: 20250101, numRuns: 600 },
    );
    // The generator reaches all three outcomes.
    expect(sampled).toBeGreaterThan(20);
    expect(refused).toBeGreaterThan(20);
  });
});

describe("planCombinations: attribute_combi", () => {
  it("returns exactly the given rows in order, duplicates kept, max_iter ignored", () => {
    const combi = [mask(4, [3]), mask(4, [0, 2]), mask(4, [0, 1, 2, 3]), mask(4, [0, 2])];
    const plan = planCombinations(4, opts({ attribute_combi: combi, max_iter: 2, min_k: 2 }));
    expect(plan).toEqual({ combinations: [[3], [0, 2], [0, 1, 2, 3], [0, 2]], admissible: 4, sampled: false });
  });
});

describe("planCombinations: sampling", () => {
  it("K=14 with max_iter 1000 draws 1000 distinct admissible combinations, seeded", () => {
    const o = opts({ max_iter: 1000, seed: 42 });
    const plan = planCombinations(14, o);
    expect(plan.sampled).toBe(true);
    expect(plan.admissible).toBe(16383);
    expectSampledValid(14, o, plan.combinations);
    expect(planCombinations(14, opts({ max_iter: 1000, seed: 42 }))).toEqual(plan);
    const other = planCombinations(14, opts({ max_iter: 1000, seed: 43 }));
    expectSampledValid(14, o, other.combinations);
    expect(other.combinations).not.toEqual(plan.combinations);
  });

  it("respects required attributes, groups and sizes with K=16", () => {
    const k = 16;
    const o = opts({
      required_attributes: mask(k, [0, 12]),
      attribute_groups: [mask(k, [3, 7, 11]), mask(k, [5]), mask(k, [12, 14])],
      min_k: 5,
      max_k: 9,
      max_iter: 300,
      seed: 9,
    });
    const plan = planCombinations(k, o);
    expect(plan.sampled).toBe(true);
    expect(plan.admissible).toBe(bruteForce(k, o).length);
    expectSampledValid(k, o, plan.combinations);
    for (const c of plan.combinations) {
      expect(c).toContain(0);
      expect(c).toContain(14);
    }
    // Both the group and its absence occur.
    expect(plan.combinations.some((c) => c.includes(7))).toBe(true);
    expect(plan.combinations.some((c) => !c.includes(7))).toBe(true);
  });

  it("the dense path (admissible <= 2 max_iter) also gives a valid seeded subset", () => {
    const o = opts({ min_k: 4, max_k: 4, max_iter: 50, seed: 3 });
    const plan = planCombinations(8, o);
    expect(plan.admissible).toBe(70);
    expect(plan.sampled).toBe(true);
    expectSampledValid(8, o, plan.combinations);
    expect(planCombinations(8, o)).toEqual(plan);
    expect(planCombinations(8, { ...o, seed: 4 }).combinations).not.toEqual(plan.combinations);
  });

  it("reports Infinity beyond MAX_SAFE_INTEGER and still samples", () => {
    const o = opts({ max_iter: 20, seed: 5 });
    const plan = planCombinations(60, o);
    expect(plan.admissible).toBe(Infinity);
    expect(plan.sampled).toBe(true);
    expectSampledValid(60, o, plan.combinations);
    const exact = planCombinations(50, o);
    expect(exact.admissible).toBe(2 ** 50 - 1);
  });

  // Subset frequencies over many fixed seeds: each of the A admissible subsets is kept with
  // probability M/A per run, so counts over S runs are Binomial(S, M/A). The chi-square statistic
  // has mean about A - 1; the bound is loose (mean + ~8 sd), and the seeds are fixed, so no flake.
  function subsetChiSquare(k: number, o: Omit<CombinationOptions, "seed">, runs: number): { stat: number; cells: number } {
    const all = bruteForce(k, { ...o, seed: 0 });
    const counts = new Map(all.map((c) => [c.join(","), 0]));
    for (let seed = 1; seed <= runs; seed++) {
      for (const c of planCombinations(k, { ...o, seed }).combinations) {
        const key = c.join(",");
        expect(counts.has(key)).toBe(true);
        counts.set(key, counts.get(key)! + 1);
      }
    }
    const p = o.max_iter / all.length;
    const mean = runs * p;
    const variance = runs * p * (1 - p);
    let stat = 0;
    for (const n of counts.values()) stat += (n - mean) ** 2 / variance;
    return { stat, cells: all.length };
  }

  it("draws subsets uniformly (rejection path)", () => {
    const { stat, cells } = subsetChiSquare(10, opts({ min_k: 5, max_k: 5, max_iter: 100 }), 200);
    expect(cells).toBe(252);
    expect(stat).toBeLessThan(cells + 8 * Math.sqrt(2 * cells));
  });

  it("draws subsets uniformly (dense path)", () => {
    const { stat, cells } = subsetChiSquare(8, opts({ min_k: 4, max_k: 4, max_iter: 50 }), 200);
    expect(cells).toBe(70);
    expect(stat).toBeLessThan(cells + 8 * Math.sqrt(2 * cells));
  });

  it("draws subsets uniformly under groups and required attributes", () => {
    const k = 9;
    const o = opts({ attribute_groups: [mask(k, [1, 4, 6]), mask(k, [2, 8])], required_attributes: mask(k, [0]), max_iter: 12 });
    const { stat, cells } = subsetChiSquare(k, o, 300);
    expect(cells).toBe(32); // free units {1,4,6}, {2,8}, {3}, {5}, {7}: 2^5
    expect(stat).toBeLessThan(cells + 8 * Math.sqrt(2 * cells));
  });

  it("chooses sizes in proportion to their counts", () => {
    const k = 12;
    const sizes = new Array<number>(k + 1).fill(0);
    const runs = 20;
    for (let seed = 100; seed < 100 + runs; seed++) {
      for (const c of planCombinations(k, opts({ max_iter: 200, seed })).combinations) sizes[c.length]++;
    }
    const total = runs * 200;
    let stat = 0;
    for (let s = 1; s <= k; s++) {
      const expected = (total * binom(k, s)) / (2 ** k - 1);
      stat += (sizes[s] - expected) ** 2 / expected;
    }
    // 11 degrees of freedom: mean 11, sd ~4.7.
    expect(stat).toBeLessThan(60);
  });
});

describe("planCombinations: impossible constraints", () => {
  it("required attributes beyond max_k", () => {
    const e = thrown(() => planCombinations(6, opts({ required_attributes: mask(6, [0, 1, 2, 3]), max_k: 3 })));
    expect(e.field).toBe("options");
    expect(e.message).toContain("required_attributes switch on 4 attributes but max_k is 3");
  });

  it("a required attribute whose group overflows allowed_k", () => {
    const e = thrown(() => planCombinations(5, opts({ required_attributes: mask(5, [1]), attribute_groups: [mask(5, [0, 1, 2])], allowed_k: [1, 2] })));
    expect(e.field).toBe("options");
    expect(e.message).toMatch(/required_attributes switch on 3 attributes \(with their attribute_groups\) but the largest allowed_k is 2/);
  });

  it("groups that make every allowed size unreachable", () => {
    const e = thrown(() => planCombinations(4, opts({ attribute_groups: [mask(4, [0, 1]), mask(4, [2, 3])], allowed_k: [1, 3] })));
    expect(e.field).toBe("options");
    expect(e.message).toContain("attribute_groups only allow combinations of 2, 4 attributes but allowed_k is [1, 3]");
  });
});
