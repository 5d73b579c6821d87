/**
 * The walk's WebAssembly kernels (src/engine/kernels/walk.wat) give the very bits of their
 * JavaScript twins (`jsKernels`): kernel by kernel on arrays of odd and even lengths holding
 * ties, zeros of both signs, NaN and infinities, and walk by walk (every model of a Grid's
 * combinations, one theta and several, logistic). And the bytes the engine carries are the
 * assembly of walk.wat as it is now.
 */
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { assembleWalkKernels, MODULE_FILE, renderWalkModule } from "../../scripts/kernels.js";
import { datasetFromRows } from "../../src/engine/data.js";
import { jsKernels, WalkArena, type WalkKernels } from "../../src/engine/kernels/walk-kernels.js";
import { standardize, walkCombinationsMany, WalkLevels, withTheta, type WalkedModel } from "../../src/engine/walk.js";

describe("the assembled kernels", () => {
  it("src/engine/kernels/walk-wasm.ts is walk.wat assembled (npm run gen:kernels)", async () => {
    expect(readFileSync(MODULE_FILE, "utf8")).toBe(renderWalkModule(await assembleWalkKernels()));
  });

  it("Node runs them: an arena's kernels are the WebAssembly ones unless asked for the plain loops", () => {
    expect(new WalkArena(8).kernels.name).toBe("wasm");
    expect(new WalkArena(8, "js").kernels).toBe(jsKernels);
    expect(new WalkLevels(10, 3, 1).kernels.name).toBe("wasm");
  });
});

describe("WalkArena", () => {
  it("hands out zeroed, 16-byte aligned arrays that do not overlap, up to its capacity", () => {
    const arena = new WalkArena(WalkArena.doublesFor([3, 1, 4]));
    const arrays = [arena.array(3), arena.array(1), arena.array(4)];
    for (const a of arrays) {
      expect(a.byteOffset % 16).toBe(0);
      expect([...a].every((v) => Object.is(v, 0))).toBe(true);
      a.fill(7);
    }
    expect(arrays.map((a) => a.length)).toEqual([3, 1, 4]);
    expect(arrays.flatMap((a) => [...a]).every((v) => v === 7)).toBe(true);
    expect(() => arena.array(1)).toThrow(/holds 10 doubles; 12 asked/);
  });
});

/** Doubles with the awkward ones well represented. */
const double = fc.oneof(
  { weight: 6, arbitrary: fc.double({ min: -1e3, max: 1e3, noNaN: true }) },
  { weight: 2, arbitrary: fc.constantFrom(0, -0, 1, -1, 0.5) },
  { weight: 1, arbitrary: fc.double() },
);

/** Runs `call` with the same inputs on the JS kernels (plain arrays) and on the WebAssembly kernels (arena arrays); returns both sets of arrays after. */
function both(n: number, inputs: number[][], call: (k: WalkKernels, a: Float64Array[], n: number) => void): [number[][], number[][]] {
  const plain = inputs.map((values) => Float64Array.from(values.slice(0, n)));
  const arena = new WalkArena(WalkArena.doublesFor(inputs.map(() => Math.max(n, 4))));
  const inArena = inputs.map((values) => {
    const a = arena.array(Math.max(n, 4));
    a.set(values.slice(0, n));
    return a;
  });
  expect(arena.kernels.name).toBe("wasm");
  call(jsKernels, plain, n);
  call(arena.kernels, inArena, n);
  return [plain.map((a) => [...a]), inArena.map((a, k) => [...a].slice(0, k < plain.length ? plain[k].length : n))];
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

  it("subtract4, subtract2 and subtract1, into the source and into another array", () => {
    fc.assert(
      fc.property(arrays(6), scalars, length, fc.boolean(), (inputs, [l0, l1, l2, l3], n, inPlace) => {
        const dst = (a: Float64Array[]) => (inPlace ? a[1] : a[0]);
        expectSameBits(...both(n, inputs, (k, a, n) => k.subtract4(dst(a), a[1], a[2], a[3], a[4], a[5], l0, l1, l2, l3, n)));
        expectSameBits(...both(n, inputs, (k, a, n) => k.subtract2(dst(a), a[1], a[2], a[3], l0, l1, n)));
        expectSameBits(...both(n, inputs, (k, a, n) => k.subtract1(dst(a), a[1], a[2], l0, n)));
      }),
      { numRuns: 300 },
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
  // scores never hold -0 (walk.wat), and these inputs are made so.
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
        const withBounds = (call: (k: WalkKernels, a: Float64Array[], bounds: Float64Array, n: number) => void) => {
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
