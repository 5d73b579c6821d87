/**
 * The WebAssembly kernels (src/engine/kernels/rows.wat) give the very bits of their JavaScript
 * twins (`jsKernels`): kernel by kernel on arrays of odd and even lengths holding ties, zeros of
 * both signs, NaN and infinities, and walk by walk (every model of a Grid's combinations, one
 * theta and several, logistic, each model's percentiles). And the bytes the engine carries are
 * the assembly of rows.wat as it is now.
 */
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { assemble, fromRoot, render, WAT_MODULES } from "../../scripts/kernels.js";
import { ArenaPasses, outcomeStats } from "../../src/engine/calibrate.js";
import { CUT_TIE_TOLERANCE } from "../../src/engine/choices.js";
import { tieWidth } from "../../src/engine/cut.js";
import { datasetFromRows } from "../../src/engine/data.js";
import { addToBucket, jsKernels, JOINT_SUMS, RowArena, type RowKernels } from "../../src/engine/kernels/rows.js";
import { HistogramPair, percentilesOfTwo } from "../../src/engine/percentile.js";
import { prepareGrid } from "../../src/engine/grid.js";
import { evaluateRange, GridWorkspace, rangeEvaluator } from "../../src/engine/grid-cells.js";
import { standardize, walkCombinations, walkCombinationsMany, WalkLevels, WALKS_BEFORE_RESIDUALS, withTheta, type WalkedModel } from "../../src/engine/walk.js";

describe("the assembled kernels", () => {
  for (const module of WAT_MODULES) {
    it(`${module.out} is ${module.wat} assembled (npm run gen:kernels)`, async () => {
      expect(readFileSync(fromRoot(module.out), "utf8")).toBe(render(module, await assemble(module)));
    });
  }

  it("Node runs them: an arena's kernels are the WebAssembly ones unless asked for the plain loops", () => {
    expect(new RowArena(8).kernels.name).toBe("wasm");
    expect(new RowArena(8, "js").kernels).toBe(jsKernels);
    expect(new WalkLevels(10, 3, 1).kernels.name).toBe("wasm");
    // The walk's first-theta pass then runs from the levels' frame (rows.wat extendLevel): the walks below hold it to the plain loops.
    expect(new WalkLevels(10, 3, 2).extendLevel).toBeTypeOf("function");
    expect(new WalkLevels(10, 3, 1, "js").extendLevel).toBeUndefined();
    // A visited level and its cells in one call: one theta, WebAssembly kernels.
    expect(new WalkLevels(10, 3, 1).extendCalibrate).toBeDefined();
    expect(new WalkLevels(10, 3, 2).extendCalibrate).toBeUndefined();
    expect(new WalkLevels(10, 3, 1, "js").extendCalibrate).toBeUndefined();
  });
});

describe("RowArena", () => {
  it("hands out zeroed, 16-byte aligned arrays that do not overlap, up to its capacity", () => {
    const arena = new RowArena(RowArena.bytesFor({ doubles: [3, 1, 4], ints: [3] }));
    const arrays = [arena.array(3), arena.array(1), arena.array(4), arena.int32(3)];
    for (const a of arrays) {
      expect(a.byteOffset % 16).toBe(0);
      expect([...a].every((v) => Object.is(v, 0))).toBe(true);
      a.fill(7);
    }
    expect(arrays.map((a) => a.length)).toEqual([3, 1, 4, 3]);
    expect(arrays.flatMap((a) => [...a]).every((v) => v === 7)).toBe(true);
    expect(() => arena.array(1)).toThrow(/holds 96 bytes; 112 asked/);
  });

  it("the WebAssembly kernels refuse arrays of another memory, too short, or (u) not one table", () => {
    const arena = new RowArena(RowArena.bytesFor({ doubles: [4, 4, 4, 4, 4, 3] }));
    const [dst, u0, u1, gap, u2] = arena.arrays(5, 4);
    gap.fill(1);
    const L = arena.array(3);
    expect(() => arena.kernels.subtractLevel(dst, dst, [u0, u1, u2], L, 0, 3, 4)).toThrow(/not one table/);
    expect(() => arena.kernels.subtractLevel(dst, dst, [u0, u1, gap], L, 0, 3, 4)).not.toThrow();
    expect(() => arena.kernels.subtractLevel(dst, dst, [u0, u1, gap], Float64Array.of(1, 1, 1), 0, 3, 4)).toThrow(/not one of their arena's/);
    // A view of the arena's memory that the arena did not hand out is refused as well.
    const view = new Float64Array(L.buffer, L.byteOffset, L.length);
    expect(() => arena.kernels.subtractLevel(dst, dst, [u0, u1, gap], view, 0, 3, 4)).toThrow(/not one of their arena's/);
    expect(arena.holds(L) && !arena.holds(view) && !arena.holds(L.subarray(1))).toBe(true);
    expect(() => arena.kernels.subtractLevel(dst, dst, [u0, u1, gap], L, 0, 3, 5)).toThrow(/an array of 4 given to the WebAssembly kernels for 5 rows/);
    expect(() => arena.kernels.subtractLevel(dst, dst, [u0, u1, gap], L, 1, 3, 4)).toThrow(/an array of 3 given to the WebAssembly kernels for 4 rows/);
  });
});

/** Doubles with the awkward ones well represented. */
const double = fc.oneof(
  { weight: 6, arbitrary: fc.double({ min: -1e3, max: 1e3, noNaN: true }) },
  { weight: 2, arbitrary: fc.constantFrom(0, -0, 1, -1, 0.5) },
  { weight: 1, arbitrary: fc.double() },
);

/** Runs `call` with the same inputs on the JS kernels (plain arrays) and on the WebAssembly kernels (one arena table); returns both sets of arrays after. */
function both(n: number, inputs: number[][], call: (k: RowKernels, a: Float64Array[], n: number) => void): [number[][], number[][]] {
  // At least 12 long: room for a factor's row of up to 11 and for the 4 bounds.
  const length = Math.max(n, 12);
  const plain = inputs.map((values) => {
    const a = new Float64Array(length);
    a.set(values.slice(0, length));
    return a;
  });
  const arena = new RowArena(RowArena.bytesFor({ doubles: inputs.map(() => length) }));
  const inArena = arena.arrays(inputs.length, length);
  inArena.forEach((a, k) => a.set(plain[k]));
  expect(arena.kernels.name).toBe("wasm");
  call(jsKernels, plain, n);
  call(arena.kernels, inArena, n);
  return [plain.map((a) => [...a]), inArena.map((a) => [...a])];
}

/** Equal number for number, with -0 and NaN told apart as Object.is does. */
function expectSameBits(a: number[][], b: number[][]): void {
  expect(b.length).toBe(a.length);
  for (let k = 0; k < a.length; k++) {
    expect(b[k].length).toBe(a[k].length);
    for (let i = 0; i < a[k].length; i++)
      if (!Object.is(a[k][i], b[k][i])) expect({ array: k, row: i, wasm: b[k][i] }).toEqual({ array: k, row: i, wasm: a[k][i] });
  }
}

describe("each WebAssembly kernel gives the bits of its JavaScript twin", () => {
  const arrays = (count: number) => fc.array(fc.array(double, { minLength: 40, maxLength: 40 }), { minLength: count, maxLength: count });
  const length = fc.integer({ min: 0, max: 40 });
  const scalars = fc.array(double, { minLength: 4, maxLength: 4 });

  it("subtractLevel at every depth from 0 to 11, from z into u_d (the rows past n untouched)", () => {
    fc.assert(
      fc.property(arrays(14), fc.array(double, { minLength: 11, maxLength: 11 }), length, fc.integer({ min: 0, max: 11 }), (inputs, l, n, d) => {
        // a[0] is z, a[1] is u_d, a[2..] the u table (the WebAssembly kernel reads u as one table: a[2] + m strides).
        // The factor (from its second value: row 1) is an arena array too (the walk's L is): the last input.
        const withRow = [...inputs.slice(0, 13), [NaN, ...l]];
        expectSameBits(...both(n, withRow, (k, a, n) => k.subtractLevel(a[1], a[0], a.slice(2, 13), a[13], 1, d, n)));
      }),
      { numRuns: 400 },
    );
  });

  it("scaleFirst and extendRelevance", () => {
    fc.assert(
      fc.property(arrays(5), scalars, length, (inputs, [inv, vd], n) => {
        expectSameBits(...both(n, inputs, (k, a, n) => k.scaleFirst(a[0], inv, vd, a[1], a[2], a[3], a[4], n)));
        expectSameBits(...both(n, inputs, (k, a, n) => k.extendRelevance(a[0], vd, a[1], a[2], n)));
      }),
      { numRuns: 300 },
    );
  });

  // The bounds' minimum and maximum equal the loop's on any input without both zeros: the walk's
  // scores never hold -0 (rows.wat), and these inputs are made so.
  const scores = fc.array(
    fc.array(
      double.map((v) => (Object.is(v, -0) ? 0 : v)),
      { minLength: 40, maxLength: 40 },
    ),
    { minLength: 7, maxLength: 7 },
  );

  it("finishFirst, finishOther and finishLevel, with their bounds", () => {
    fc.assert(
      fc.property(scores, scalars, length, (inputs, [inv, vd, half], n) => {
        const withBounds = (call: (k: RowKernels, a: Float64Array[], bounds: Float64Array, n: number) => void) => {
          const [plain, wasm] = both(n, [...inputs, [1, 2, 3, 4]], (k, a, n) => call(k, a, a[a.length - 1], n));
          expectSameBits(plain, wasm);
        };
        withBounds((k, a, bounds, n) => k.finishFirst(a[0], inv, vd, half, a[1], a[2], a[3], a[4], a[5], bounds, n));
        withBounds((k, a, bounds, n) => k.finishOther(a[0], vd, half, a[1], a[2], a[3], a[4], bounds, n));
        withBounds((k, a, bounds, n) => k.finishLevel(a[0], a[1], half, a[2], bounds, n));
      }),
      { numRuns: 300 },
    );
  });

  it("subtractScaleFirst and subtractFinishFirst: subtractLevel into u_d, then scaleFirst or finishFirst on it", () => {
    const tables = fc.array(
      fc.array(
        double.map((v) => (Object.is(v, -0) ? 0 : v)),
        { minLength: 40, maxLength: 40 },
      ),
      { minLength: 19, maxLength: 19 },
    );
    fc.assert(
      fc.property(
        tables,
        fc.array(double, { minLength: 11, maxLength: 11 }),
        scalars,
        length,
        fc.integer({ min: 0, max: 11 }),
        (inputs, l, [inv, vd, half], n, d) => {
          // a[0] z, a[1] u_d, a[2..13) the u table, a[13] the factor (its row 1), a[14..18) relPrev, relNext, infoPrev, infoNext, a[18] sim, a[19] the bounds.
          const withRow = [...inputs.slice(0, 13), [NaN, ...l], ...inputs.slice(13, 18), [1, 2, 3, 4]];
          expectSameBits(
            ...both(n, withRow, (k, a, n) => k.subtractScaleFirst(a[1], a[0], a.slice(2, 13), a[13], 1, d, inv, vd, a[14], a[15], a[16], a[17], n)),
          );
          expectSameBits(
            ...both(n, withRow, (k, a, n) =>
              k.subtractFinishFirst(a[1], a[0], a.slice(2, 13), a[13], 1, d, inv, vd, half, a[14], a[15], a[16], a[17], a[18], a[19], n),
            ),
          );
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("bucketsTwo buckets and sums as its JavaScript twin", () => {
  it("for 0 to 4 cuts, both signs, ties with the cuts, on 0 to 60 rows; the totals every row's", () => {
    const value = fc.oneof(
      fc.integer({ min: -8, max: 8 }).map((v) => v / 4),
      fc.double({ min: -3, max: 3, noNaN: true }),
    );
    fc.assert(
      fc.property(
        fc.array(fc.tuple(value, value, value), { minLength: 0, maxLength: 60 }),
        fc.array(
          fc.integer({ min: -8, max: 8 }).map((v) => v / 4),
          { minLength: 4, maxLength: 4 },
        ),
        fc.array(
          fc.integer({ min: -8, max: 8 }).map((v) => v / 4),
          { minLength: 4, maxLength: 4 },
        ),
        fc.integer({ min: 0, max: 4 }),
        fc.constantFrom(1, -1),
        (rows, cutsR, cutsS, T, sign) => {
          const n = rows.length;
          const run = (choice: "wasm" | "js") => {
            const arena = new RowArena(RowArena.bytesFor({ doubles: [n, n, n, 30, 30, JOINT_SUMS, 3], bytes: [n, n] }), choice);
            const [relevance, similarity, y] = arena.arrays(3, n);
            rows.forEach(([r, s, v], i) => {
              relevance[i] = r;
              similarity[i] = s;
              y[i] = v;
            });
            const [sumsR, sumsS, joint, totals] = [arena.array(30), arena.array(30), arena.array(JOINT_SUMS), arena.array(3)];
            const [bucketsR, bucketsS] = [arena.uint8(n), arena.uint8(n)];
            // Left from an earlier call: the kernel clears the joint buckets itself.
            joint.fill(7);
            const atLeast = (cuts: number[]) => Float64Array.from(cuts.slice(0, T).sort((a, b) => a - b));
            arena.kernels.bucketsTwo(
              relevance,
              similarity,
              y,
              0.25,
              sign,
              atLeast(cutsR),
              atLeast(cutsS),
              T,
              bucketsR,
              bucketsS,
              sumsR,
              sumsS,
              joint,
              totals,
              n,
            );
            expect(arena.kernels.name).toBe(choice);
            return [[...bucketsR], [...bucketsS], [...sumsR], [...sumsS], [...totals]];
          };
          const js = run("js");
          expectSameBits(js, run("wasm"));
          // Each censor's bucket sums are its rows' (in another order than the rows'): the counts exactly, the rest within rounding.
          const [bucketsR, bucketsS, sumsR, sumsS] = js;
          for (const [buckets, sums] of [
            [bucketsR, sumsR],
            [bucketsS, sumsS],
          ]) {
            const expected = new Float64Array(30);
            rows.forEach(([r, , v], i) => {
              const dy = v - 0.25;
              addToBucket(expected, buckets[i], r, r * r, r * dy, r * dy * dy, r * dy * (r * dy));
            });
            for (let k = 0; k < 6 * (T + 1); k++) {
              if (k % 6 === 0) expect(sums[k]).toBe(expected[k]);
              else expect(Math.abs(sums[k] - expected[k])).toBeLessThanOrEqual(1e-12 * Math.max(1, n * 100));
            }
          }
          // The totals are every row's (added bucket by bucket): sum r, sum r^2, sum r dy within rounding.
          const expected = [0, 0, 0];
          rows.forEach(([r, , v]) => {
            expected[0] += r;
            expected[1] += r * r;
            expected[2] += r * (v - 0.25);
          });
          expected.forEach((e, k) => expect(Math.abs(js[4][k] - e)).toBeLessThanOrEqual(1e-12 * Math.max(1, n * 100)));
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("addWeightsTwo adds as its JavaScript twin", () => {
  it("on 0 to 41 rows, NaN rows left as they are, buckets 0 to 4", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.oneof(double, fc.constant(NaN)), fc.integer({ min: 0, max: 4 }), fc.integer({ min: 0, max: 4 }), double), { maxLength: 41 }),
        fc.array(double, { minLength: 12, maxLength: 12 }),
        (rows, [baseA, baseB, ...slopes]) => {
          const n = rows.length;
          const run = (choice: "wasm" | "js") => {
            const arena = new RowArena(RowArena.bytesFor({ doubles: [n, n, 256, 256], bytes: [n, n] }), choice);
            const [relevance, target] = arena.arrays(2, n);
            const [slopesA, slopesB] = [arena.array(256), arena.array(256)];
            const [bucketsA, bucketsB] = [arena.uint8(n), arena.uint8(n)];
            slopesA.set(slopes.slice(0, 5));
            slopesB.set(slopes.slice(5, 10));
            rows.forEach(([r, a, b, t], i) => {
              relevance[i] = r;
              bucketsA[i] = a;
              bucketsB[i] = b;
              target[i] = t;
            });
            arena.kernels.addWeightsTwo(relevance, bucketsA, slopesA, baseA, bucketsB, slopesB, baseB, target, n);
            expect(arena.kernels.name).toBe(choice);
            return [[...target]];
          };
          expectSameBits(run("js"), run("wasm"));
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("ArenaPasses composites", () => {
  it("a slot claimed by one range and taken by another refuses the first one's release", () => {
    const arena = new RowArena(ArenaPasses.bytesFor(4, 1));
    const passes = new ArenaPasses(arena, 4, 1);
    const [first, second] = [{}, {}];
    const composite = passes.claimComposite(0, first, Float64Array.of(1, 2, 3, 4));
    composite[0] += 1;
    expect(passes.claimComposite(0, first, new Float64Array(4))).toBe(composite);
    const out = new Float64Array(4);
    passes.releaseComposite(0, first, out);
    expect([...out]).toEqual([2, 2, 3, 4]);
    passes.claimComposite(0, first, new Float64Array(4));
    passes.claimComposite(0, second, new Float64Array(4));
    expect(() => passes.releaseComposite(0, first, out)).toThrow(/taken by another range/);
  });
});

describe("histogramTwo counts as its JavaScript twin", () => {
  it("on values with ties, both zeros, at the ends of their range, for 0 to 300 rows; and the percentiles that follow", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: -40, max: 40 }), fc.integer({ min: -5, max: 5 })), { minLength: 0, maxLength: 300 }),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 4 }),
        (pairs, fractions) => {
          const n = pairs.length;
          const arena = new RowArena(RowArena.bytesFor({ doubles: [n, n] }) + HistogramPair.bytesFor(n));
          const [a, b] = arena.arrays(2, n);
          pairs.forEach(([x, w], i) => {
            a[i] = x === 0 ? (i % 2 ? -0 : 0) : x / 8;
            b[i] = w * 1e-3;
          });
          const pair = new HistogramPair(arena, n);
          expect(pair.kernels.name).toBe("wasm");
          const range = (v: Float64Array) => [Math.min(...v), Math.max(...v)];
          const [minA, maxA] = range(a);
          const [minB, maxB] = range(b);
          const run = (p?: HistogramPair) => {
            const out = [new Float64Array(fractions.length), new Float64Array(fractions.length)];
            percentilesOfTwo(a, b, n, fractions, new Float64Array(n), new Float64Array(n), out[0], out[1], minA, maxA, 0, minB, maxB, 0, p);
            const counted = p
              ? [p.first, p.second].flatMap((h) => [...h.table.slice(0, 2 * h.bins).filter((_, k) => k % 2 === 1), ...h.previous.slice(0, n)])
              : [];
            return { out: out.map((o) => [...o]), counted };
          };
          if (n === 0 || !(maxA - minA > 0) || !(maxB - minB > 0)) return;
          const wasm = run(pair);
          const plain = run(new HistogramPair(null, n));
          expect(wasm.out).toEqual(plain.out);
          expect(wasm.counted).toEqual(plain.counted);
          expect(wasm.out).toEqual(run().out);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("values reaching an infinity, or a range too narrow for a finite scale, are counted without a trap, as the plain loop counts them", () => {
    const arena = new RowArena(RowArena.bytesFor({ doubles: [4, 4] }) + HistogramPair.bytesFor(4));
    const [a, b] = arena.arrays(2, 4);
    const pair = new HistogramPair(arena, 4);
    const cases: [number[], number[]][] = [
      [
        [1, 2, Infinity, 3],
        [4, 3, 2, 1],
      ],
      [
        [0, 5e-324, 0, 5e-324],
        [3, 0, 1, 2],
      ],
      [
        [0, 1, 2, 3],
        [-Infinity, 0, 1, 2],
      ],
    ];
    for (const [x, w] of cases) {
      a.set(x);
      b.set(w);
      const run = (p: HistogramPair) => {
        const out = [new Float64Array(2), new Float64Array(2)];
        percentilesOfTwo(
          a,
          b,
          4,
          [0.25, 0.5],
          new Float64Array(4),
          new Float64Array(4),
          out[0],
          out[1],
          Math.min(...x),
          Math.max(...x),
          0,
          Math.min(...w),
          Math.max(...w),
          0,
          p,
        );
        return out.map((o) => [...o]);
      };
      expect(run(pair)).toEqual(run(new HistogramPair(null, 4)));
    }
  });

  it("an arena's pair refuses more values than it was made for", () => {
    const arena = new RowArena(RowArena.bytesFor({ doubles: [8, 8] }) + HistogramPair.bytesFor(4));
    const [a, b] = arena.arrays(2, 8);
    a.set([1, 2, 3, 4, 5, 6, 7, 8]);
    b.set([8, 7, 6, 5, 4, 3, 2, 1]);
    const out = [new Float64Array(1), new Float64Array(1)];
    expect(() =>
      percentilesOfTwo(a, b, 8, [0.5], new Float64Array(8), new Float64Array(8), out[0], out[1], 1, 8, 0, 1, 8, 0, new HistogramPair(arena, 4)),
    ).toThrow(/at most 4 values; 8 given/);
  });
});

describe("selectTwo selects as the plain histograms", () => {
  it("opens as many bins as the plain histogram: a bin a value up to 2,048 values, then one per four, up to 4,096", () => {
    for (const n of [2, 15, 16, 17, 1000, 2047, 2048, 2049, 8191, 8192, 8195, 9000, 16384, 16388, 20000]) {
      const arena = new RowArena(RowArena.bytesFor({ doubles: [n, n, 8] }) + HistogramPair.bytesFor(n));
      const [a, b] = arena.arrays(2, n);
      for (let i = 0; i < n; i++) [a[i], b[i]] = [Math.sin(i), Math.cos(3 * i)];
      const pair = new HistogramPair(arena, n);
      const f = arena.array(3);
      f.set([0.2, 0.5, 0.8]);
      expect(pair.kernels.selectTwo!(a, -1, 1, 0, pair.first.header!, b, -1, 1, 0, pair.second.header!, f, 3, n)).toBe(1);
      const plain = new HistogramPair(null, n);
      percentilesOfTwo(a, b, n, [0.2, 0.5, 0.8], new Float64Array(n), new Float64Array(n), new Float64Array(3), new Float64Array(3), -1, 1, 0, -1, 1, 0, plain);
      expect([pair.first.bins, pair.second.bins]).toEqual([plain.first.bins, plain.second.bins]);
      expect(pair.first.bins).toBe(Math.min(4096, Math.max(16, n <= 2048 ? n : Math.max(2048, n >> 2))));
    }
  });
  it("with tie widths, wanted bins sorted as the plain insertion sort (up to 24 values) or the typed arrays' (25 to 256, both zeros among them), or left to the plain sort (more than 256), and fractions outside [0, 1] left to the plain path", () => {
    const outcomes = new Set<number>();
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.double({ min: -100, max: 100, noNaN: true }), fc.integer({ min: -3, max: 3 })), { minLength: 2, maxLength: 400, size: "max" }),
        fc.array(fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), fc.constantFrom(0, 1, 0.5, 0.2, 0.8)), { minLength: 1, maxLength: 6 }),
        fc.constantFrom(0, 1e-9, 1e-3, 0.5),
        fc.boolean(),
        (pairs, fractions, width, outside) => {
          const n = pairs.length;
          const arena = new RowArena(RowArena.bytesFor({ doubles: [n, n, 8] }) + HistogramPair.bytesFor(n));
          const [a, b] = arena.arrays(2, n);
          // a: spread values (a few exact ties); b: heavy ties (a handful of values, both zeros), so large bins.
          pairs.forEach(([x, w], i) => {
            a[i] = i % 7 === 0 ? 1.25 : x;
            b[i] = w === 0 ? (i % 2 ? -0 : 0) : w * 0.1;
          });
          const given = outside ? [...fractions, 1.5] : fractions;
          const range = (v: Float64Array) => [Math.min(...v), Math.max(...v)];
          const [minA, maxA] = range(a);
          const [minB, maxB] = range(b);
          if (!(maxA - minA > width) || !(maxB - minB > width)) return;
          const pair = new HistogramPair(arena, n);
          const run = (p: HistogramPair) => {
            const out = [new Float64Array(given.length), new Float64Array(given.length)];
            percentilesOfTwo(a, b, n, given, new Float64Array(n), new Float64Array(n), out[0], out[1], minA, maxA, width, minB, maxB, width, p);
            return out.map((o) => [...o]);
          };
          if (!outside) expect(run(pair)).toEqual(run(new HistogramPair(null, n)));
          // The kernel itself: which way it went, and the same cuts when it finished them.
          const f = arena.array(given.length);
          f.set(given);
          const [first, second] = [pair.first, pair.second];
          const done = pair.kernels.selectTwo!(a, minA, maxA, width, first.header!, b, minB, maxB, width, second.header!, f, given.length, n);
          outcomes.add(done);
          expect(outside ? [0] : [1, 2]).toContain(done);
          if (done === 1) {
            const plain = run(new HistogramPair(null, n));
            expect([[...first.out.slice(0, given.length)], [...second.out.slice(0, given.length)]]).toEqual(plain);
          }
        },
      ),
      { numRuns: 300 },
    );
    expect([...outcomes].sort()).toEqual([0, 1, 2]);
  });
});

/** Seeded data with ties (few distinct values per attribute). */
function data(seed: number, N: number, K: number) {
  let s = seed >>> 0;
  const next = () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
  const X = Array.from({ length: N }, () => Array.from({ length: K }, () => Math.floor(next() * 6) / 4 + next() * 1e-3));
  const y = X.map((row) => +(row[0] - row[K - 1] + next() > 0.4));
  const thetas = Array.from({ length: 3 }, () => Float64Array.from({ length: K }, () => Math.floor(next() * 6) / 4));
  return { dataset: datasetFromRows(y, X), thetas };
}

/** Every subset of K columns but the empty one, as ascending lists. */
function everyCombination(K: number): number[][] {
  const out: number[][] = [];
  for (let mask = 1; mask < 1 << K; mask++) out.push(Array.from({ length: K }, (_, j) => j).filter((j) => mask & (1 << j)));
  return out;
}

describe("a walk gives the same models on either kernels", () => {
  for (const [N, K] of [
    [7, 3],
    [40, 5],
    [201, 7],
  ]) {
    it(`N=${N}, K=${K}: every combination, three thetas at once, logistic`, () => {
      const { dataset, thetas } = data(N * 31 + K, N, K);
      const shared = standardize(dataset, thetas[0]);
      const thetaZs = thetas.map((theta) => withTheta(shared, theta).thetaZ);
      const combinations = everyCombination(K);
      const indices = combinations.map((_, q) => q);
      const models = (choice: "wasm" | "js") => {
        const levels = new WalkLevels(N, K, thetas.length, choice);
        expect(levels.kernels.name).toBe(choice);
        const out: unknown[] = [];
        const copy = (index: number, t: number, m: WalkedModel) =>
          out.push([index, t, [...m.relevance], [...m.similarity], [...m.infoX], [...m.bounds!], m.infoTheta, m.positivesDistance]);
        walkCombinationsMany(shared, thetaZs, dataset.y, combinations, indices, true, copy, (index) => out.push([index, "singular"]), levels);
        return out;
      };
      const [plain, wasm] = [models("js"), models("wasm")];
      expect(plain.length).toBe(combinations.length * thetas.length);
      // toEqual tells -0 from 0 and matches NaN with NaN.
      expect(wasm).toEqual(plain);
    });
  }
});

describe("a walk from the first levels' residuals gives the plain walk's bits", () => {
  it("N=83, K=12: 300 sampled combinations in chunks of 64 (tries of the most held column first), a constant column and a sum of two, one theta", () => {
    const [N, K] = [83, 12];
    const { dataset, thetas } = data(11, N, K);
    const X = dataset.X;
    for (let i = 0; i < N; i++) {
      X[i * K + 5] = X[i * K + 1] + X[i * K + 2];
      X[i * K + 9] = 2;
    }
    const shared = standardize(dataset, thetas[0]);
    let seed = 3;
    const next = () => (seed = (seed * 16807) % 2147483647);
    const combinations: number[][] = [];
    const seen = new Set<number>();
    while (combinations.length < 300) {
      const mask = next() % (1 << K);
      if (mask === 0 || seen.has(mask)) continue;
      seen.add(mask);
      combinations.push(Array.from({ length: K }, (_, j) => j).filter((j) => mask & (1 << j)));
    }
    combinations.sort((a, b) => {
      for (let m = 0; m < Math.min(a.length, b.length); m++) if (a[m] !== b[m]) return a[m] - b[m];
      return a.length - b.length;
    });
    // A thread's first walks keep no residuals (WALKS_BEFORE_RESIDUALS): walk that many first.
    const warm = new WalkLevels(N, K, 1, "wasm");
    for (let w = 0; w <= WALKS_BEFORE_RESIDUALS; w++)
      walkCombinationsMany(
        shared,
        [shared.thetaZ],
        dataset.y,
        [[0, 1]],
        [0],
        false,
        () => {},
        () => {},
        warm,
      );
    const walk = (choice: "wasm" | "js") => {
      const levels = new WalkLevels(N, K, 1, choice);
      if (choice === "wasm") expect(levels.residualDepth).toBe(3);
      const out: unknown[] = [];
      for (let from = 0; from < combinations.length; from += 64) {
        const indices = combinations.map((_, q) => q).slice(from, from + 64);
        walkCombinationsMany(
          shared,
          [shared.thetaZ],
          dataset.y,
          combinations,
          indices,
          false,
          (index, _, m) => out.push([index, [...m.relevance], [...m.similarity], [...m.infoX], [...m.bounds], m.infoTheta]),
          (index) => out.push([index, "singular"]),
          levels,
        );
      }
      return out;
    };
    const [plain, wasm] = [walk("js"), walk("wasm")];
    expect(plain.filter((entry) => (entry as unknown[])[1] !== "singular").length).toBeGreaterThan(50);
    expect(wasm).toEqual(plain);
  });
});

describe("extendLevel (the factor's row, v_d and the level's pass in one call) gives the plain walk's bits", () => {
  for (const M of [1, 2]) {
    it(`singular and near-singular combinations (a sum of two columns, a near copy, a constant column), ${M} theta(s), the factor and v as the plain loops leave them`, () => {
      const N = 61;
      const K = 7;
      const { dataset, thetas } = data(5, N, K);
      const X = dataset.X; // row-major
      // Column 3 = column 0 + column 1; column 4 = column 2 plus a tiny bump on one row; column 6 constant.
      for (let i = 0; i < N; i++) {
        X[i * K + 3] = X[i * K] + X[i * K + 1];
        X[i * K + 4] = X[i * K + 2] + (i === 7 ? 1e-7 : 0);
        X[i * K + 6] = 0.5;
      }
      const shared = standardize(dataset, thetas[0]);
      const thetaZs = thetas.slice(0, M).map((theta) => withTheta(shared, theta).thetaZ);
      const combinations = everyCombination(K);
      // Not in trie order (the walk sorts them): deeper paths left and re-entered.
      const indices = combinations.map((_, q) => q).reverse();
      const walk = (choice: "wasm" | "js") => {
        const levels = new WalkLevels(N, K, M, choice);
        const out: unknown[] = [];
        const copy = (index: number, t: number, m: WalkedModel) => {
          const depth = combinations[index].length;
          out.push([
            index,
            t,
            [...m.relevance],
            [...m.similarity],
            [...m.infoX],
            [...m.bounds],
            m.infoTheta,
            [...levels.L.subarray(0, depth * K)],
            [...levels.v[t].subarray(0, depth)],
          ]);
        };
        walkCombinationsMany(shared, thetaZs, dataset.y, combinations, indices, false, copy, (index) => out.push([index, "singular", [...levels.L]]), levels);
        return out;
      };
      const [plain, wasm] = [walk("js"), walk("wasm")];
      expect(plain.filter((entry) => (entry as unknown[])[1] === "singular").length).toBeGreaterThan(combinations.length / 2);
      expect(plain.filter((entry) => (entry as unknown[])[1] !== "singular").length).toBeGreaterThan(10 * M);
      expect(wasm).toEqual(plain);
    });
  }
});

describe("extendCalibrateTwo (a visited level and its cells in one call) gives the cells made at the visit", () => {
  it("its tie width is cut.ts tieWidth, on any bounds (NaN, infinities, both zeros)", () => {
    const kernels = new RowArena(RowArena.bytesFor({ doubles: [1] })).kernels;
    fc.assert(
      fc.property(double, double, (min, max) => {
        expect(Object.is(kernels.tieWidth!(CUT_TIE_TOLERANCE, min, max), tieWidth(min, max))).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it("on tied integer data and on the walks' data, percent and score units, every operator: the same partials as the cells made at the visit and the plain loops, most of them made in the walk", () => {
    const sets = [data(21, 151, 5), data(22, 80, 6)];
    // Tied integer data: many rows share a score, cuts fall on ties.
    let seed = 9;
    const next = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
    const Xt = Array.from({ length: 120 }, () => Array.from({ length: 5 }, () => Math.floor(next() * 4)));
    sets.push({
      dataset: datasetFromRows(
        Xt.map((row) => row[0] + Math.floor(next() * 3)),
        Xt,
      ),
      thetas: [Float64Array.of(1, 2, 0, 3, 1)],
    });
    const options = [
      {},
      { censor_operator: "gt" },
      { threshold: [-0.5, 0, 0.25], censor_unit: "score", censor_operator: "lte" },
      { threshold: [0.5], adj_fit_multiplier: "log" },
    ];
    let inWalk = 0;
    for (const { dataset, thetas } of sets)
      for (const given of options) {
        const prepared = prepareGrid(dataset, thetas[0], given as Parameters<typeof prepareGrid>[2]);
        const { task } = prepared;
        const outcome = outcomeStats(task.data.y, new Float64Array(task.data.rows));
        const run = (choice: "wasm" | "js", fused: boolean) =>
          prepared.chunks.map(([from, to]) => {
            const levels = new WalkLevels(task.data.rows, task.data.cols, 1, choice);
            const evaluator = rangeEvaluator(task, from, to, new GridWorkspace(choice));
            const indices = Array.from({ length: to - from }, (_, q) => from + q);
            expect(fused ? evaluator.prepareWalk(levels, outcome) : false).toBe(fused);
            const visit = (index: number, model: WalkedModel) => {
              if (fused && model.calibrated) inWalk++;
              evaluator.evaluate(index, model, outcome);
            };
            walkCombinations(task.shared!, task.data.y, task.combinations, indices, false, visit, evaluator.singular, levels);
            levels.calibrating = false;
            return evaluator.finish();
          });
        const plain = run("js", false);
        expect(run("wasm", false)).toEqual(plain);
        expect(run("wasm", true)).toEqual(plain);
      }
    expect(inWalk).toBeGreaterThan(sets.length * options.length * 20);
  });
});

describe("a walk in one kernel call (rows.wat walkPaths) gives the partials of the walk visit by visit", () => {
  it("every combination of K = 7 and a duplicate in one range (past the plan's 64 paths), a column that is the sum of two, a constant column, tied data, a duplicate combination, with and without residuals: the plain loops' partials, most cells made in the kernel, the rest given to visit and singular", () => {
    // Column 3 = column 0 + column 1 (singular combinations), column 6 constant (scale 0).
    const odd = data(5, 61, 7);
    for (let i = 0; i < 61; i++) {
      odd.dataset.X[i * 7 + 3] = odd.dataset.X[i * 7] + odd.dataset.X[i * 7 + 1];
      odd.dataset.X[i * 7 + 6] = 0.5;
    }
    // Tied integer data: cuts fall on ties, which the kernel leaves to the caller's calibration.
    let seed = 3;
    const next = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
    const Xt = Array.from({ length: 90 }, () => Array.from({ length: 7 }, () => Math.floor(next() * 3)));
    const tied = {
      dataset: datasetFromRows(
        Xt.map((row) => row[0] + Math.floor(next() * 2)),
        Xt,
      ),
      thetas: [Float64Array.of(1, 2, 0, 1, 1, 0, 2)],
    };
    const counts = { kernel: 0, visit: 0, singular: 0 };
    for (const { dataset, thetas } of [odd, tied, data(23, 80, 7)]) {
      const prepared = prepareGrid(dataset, thetas[0], {}).task;
      // A duplicate (in a copy: a plan is kept for the next Grid): its level is the one before it, its cells the caller's.
      const task = { ...prepared, combinations: [...prepared.combinations, [...prepared.combinations[40]]] };
      const Q = task.combinations.length;
      expect(Q).toBeGreaterThan(64);
      const outcome = outcomeStats(task.data.y, new Float64Array(task.data.rows));
      const indices = Array.from({ length: Q }, (_, q) => q);
      const run = (choice: "wasm" | "js", inKernel: boolean, levels = new WalkLevels(task.data.rows, 7, 1, choice)) => {
        const evaluator = rangeEvaluator(task, 0, Q, new GridWorkspace(choice));
        expect(evaluator.prepareWalk(levels, outcome)).toBe(choice === "wasm");
        const visit = (index: number, model: WalkedModel) => {
          if (inKernel) counts.visit++;
          evaluator.evaluate(index, model, outcome);
        };
        const singular = (index: number) => {
          if (inKernel) counts.singular++;
          evaluator.singular(index);
        };
        const cells = (block: Parameters<typeof evaluator.cells>[0], count: number) => {
          counts.kernel += count;
          evaluator.cells(block, count);
        };
        walkCombinations(task.shared!, task.data.y, task.combinations, indices, false, visit, singular, levels, inKernel ? cells : undefined);
        levels.calibrating = false;
        return evaluator.finish();
      };
      const plain = run("js", false);
      expect(run("wasm", false)).toEqual(plain);
      expect(run("wasm", true)).toEqual(plain);
      // Then with the residuals of the first levels (a thread keeps them after WALKS_BEFORE_RESIDUALS walks).
      const levels = new WalkLevels(task.data.rows, 7, 1, "wasm");
      for (let w = 0; w <= WALKS_BEFORE_RESIDUALS; w++) run("wasm", true, levels);
      expect(levels.residualDepth).toBeGreaterThan(0);
      expect(run("wasm", true, levels)).toEqual(plain);
    }
    expect(counts.kernel).toBeGreaterThan(5000);
    expect(counts.visit).toBeGreaterThan(30);
    expect(counts.singular).toBeGreaterThan(1000);
  });
});

describe("a Grid gives the same cells on either kernels as with no arena", () => {
  it("every chunk of the default Grid, of one with six thresholds and retained cells, and of others (operators, score units, multipliers, one to three thresholds), N=301, K=6, two data sets in turn on the thread's levels, as the models calibrated without an arena give", () => {
    const options = [
      {},
      { threshold: [0, 0.1, 0.25, 0.5, 0.75, 0.9], retain: ["yhat_cells", "n_cells"] },
      { threshold: [0.3], censor_operator: "lt", adj_fit_multiplier: "log" },
      { threshold: [0.8, 0, 0.5], censor_operator: "gt", adj_fit_multiplier: "K" },
      { threshold: [-0.5, 0, 0.25], censor_unit: "score", censor_operator: "lte" },
    ];
    const grids = [7, 8].flatMap((seed) => {
      const { dataset, thetas } = data(seed, 301, 6);
      return options.map((given) => prepareGrid(dataset, thetas[1], given as Parameters<typeof prepareGrid>[2]));
    });
    const cells = (choice: "wasm" | "js", fresh: boolean) =>
      grids.map((prepared) => {
        const workspace = new GridWorkspace(choice);
        if (fresh) workspace.walk = new WalkLevels(301, 6, 1, choice);
        return prepared.chunks.map(([from, to]) => evaluateRange(prepared.task, from, to, workspace));
      });
    // The reference: each walked model calibrated without any arena (no passes: the plain loops, the composite added up in the partial itself).
    const plain = grids.map((prepared) => {
      const { task } = prepared;
      const outcome = outcomeStats(task.data.y, new Float64Array(task.data.rows));
      return prepared.chunks.map(([from, to]) => {
        const evaluator = rangeEvaluator(task, from, to, new GridWorkspace("js"));
        const indices = Array.from({ length: to - from }, (_, q) => from + q);
        const visit = (index: number, model: WalkedModel) => evaluator.evaluate(index, { ...model, passes: undefined }, outcome);
        walkCombinations(task.shared!, task.data.y, task.combinations, indices, false, visit, evaluator.singular, new WalkLevels(301, 6, 1, "js"));
        return evaluator.finish();
      });
    });
    // The WebAssembly Grids one after another on the thread's levels, then the plain loops on fresh levels for each.
    const wasm = cells("wasm", false);
    expect(wasm.flat().some((p) => p.cellWeight.some((w) => w > 0))).toBe(true);
    expect(wasm).toEqual(plain);
    expect(cells("js", true)).toEqual(plain);
  });
});

describe("WalkLevels.forThread", () => {
  it("gives the same levels for the same sizes and kernels, and other levels otherwise", () => {
    const a = WalkLevels.forThread(50, 4, 1);
    expect(WalkLevels.forThread(50, 4, 1)).toBe(a);
    expect(WalkLevels.forThread(50, 4, 1, "js")).not.toBe(a);
    expect(WalkLevels.forThread(51, 4, 1)).not.toBe(a);
  });

  it("a walk on levels another walk used (other data, other y, same sizes) gives what fresh levels give", () => {
    const first = data(11, 60, 5);
    const second = data(12, 60, 5);
    const combinations = everyCombination(5);
    const indices = combinations.map((_, q) => q);
    const models = (d: ReturnType<typeof data>, levels: WalkLevels) => {
      const shared = standardize(d.dataset, d.thetas[0]);
      const out: unknown[] = [];
      walkCombinationsMany(
        shared,
        [shared.thetaZ],
        d.dataset.y,
        combinations,
        indices,
        true,
        (index, _, m) => out.push([index, [...m.relevance], [...m.similarity], [...m.bounds], m.positivesDistance]),
        (index) => out.push(index),
        levels,
      );
      return out;
    };
    const reused = WalkLevels.forThread(60, 5, 1);
    models(first, reused);
    expect(WalkLevels.forThread(60, 5, 1)).toBe(reused);
    expect(models(second, reused)).toEqual(models(second, new WalkLevels(60, 5, 1)));
  });
});
