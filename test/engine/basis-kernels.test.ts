/**
 * The once-per-Grid WebAssembly passes (src/engine/kernels/basis.wat) give the very bits of their
 * JavaScript twins (`jsBasis`) on data holding ties, constant columns, zeros of both signs, NaN
 * and infinities; and the engine runs them where WebAssembly is there. (That basis-wasm.ts is
 * basis.wat assembled is checked with the other modules in row-kernels.test.ts.)
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { basisKernels, jsBasis, type BasisKernels } from "../../src/engine/kernels/basis.js";

const wasmBasis = basisKernels();

/** Doubles with ties and the awkward ones well represented. */
const double = fc.oneof(
  { weight: 6, arbitrary: fc.double({ min: -1e3, max: 1e3, noNaN: true }) },
  { weight: 3, arbitrary: fc.constantFrom(0, -0, 1, -1, 0.5, 2, 3) },
  { weight: 1, arbitrary: fc.double() },
);

/** Finite doubles with ties (most sums then differ when the order of operations does). */
const finite = fc.oneof(
  { weight: 6, arbitrary: fc.double({ min: -1e3, max: 1e3, noNaN: true }) },
  { weight: 2, arbitrary: fc.constantFrom(0, -0, 1, -1, 0.5, 2, 3) },
);

/** An n x cols matrix (row-major) of `value`s, some columns constant, some values NaN when `gaps`. */
const matrix = (gaps: boolean, value = double) =>
  fc
    .record({
      n: fc.integer({ min: 0, max: 24 }),
      cols: fc.integer({ min: 1, max: 7 }),
      constant: fc.array(fc.boolean(), { minLength: 7, maxLength: 7 }),
      values: fc.array(value, { minLength: 24 * 7, maxLength: 24 * 7 }),
      holes: fc.array(fc.integer({ min: 0, max: 24 * 7 - 1 }), { maxLength: gaps ? 12 : 0 }),
    })
    .map(({ n, cols, constant, values, holes }) => {
      const X = new Float64Array(n * cols);
      for (let i = 0; i < n; i++) for (let j = 0; j < cols; j++) X[i * cols + j] = constant[j] ? values[j] : values[i * cols + j];
      for (const h of holes) if (h < X.length) X[h] = NaN;
      return { n, cols, X };
    });

/** Some of the columns, ascending. */
const columnsOf = (cols: number, pick: boolean[]) => {
  const columns: number[] = [];
  for (let j = 0; j < cols; j++) if (pick[j]) columns.push(j);
  return columns.length > 0 ? columns : [cols - 1];
};

/** Equal number for number, with -0 and NaN told apart as Object.is does. */
function expectSameBits(js: ArrayLike<number>, wasm: ArrayLike<number>, what: string): void {
  expect(wasm.length, what).toBe(js.length);
  for (let i = 0; i < js.length; i++) if (!Object.is(js[i], wasm[i])) expect({ what, i, wasm: wasm[i] }).toEqual({ what, i, wasm: js[i] });
}

/** Runs `call` on both implementations with fresh outputs; returns each one's outputs. */
function both<T>(call: (k: BasisKernels) => T): [T, T] {
  return [call(jsBasis), call(wasmBasis)];
}

describe("the once-per-Grid WebAssembly passes give the bits of their JavaScript twins", () => {
  it("runs the WebAssembly here, the plain loops when asked", () => {
    expect(wasmBasis.name).toBe("wasm");
    expect(basisKernels("js")).toBe(jsBasis);
  });

  it("a call that needs more than the memory grows it (here 3 MB) and gives the same bits", () => {
    const n = 40_000;
    const X = Float64Array.from({ length: n * 8 }, (_, v) => ((v * 7919) % 1013) / 17 - 29);
    X[n * 8 - 3] = -Infinity;
    const [js, wasm] = both((k) => {
      const out = [new Float64Array(8), new Float64Array(8), new Float64Array(n * 8), new Float64Array(64)];
      k.standardize(X, n, 8, out[0], out[1], out[2], out[3]);
      return { out, infinite: k.firstInfinite(X) };
    });
    expect(wasm.infinite).toBe(n * 8 - 3);
    // The WebAssembly ran (its memory grew), not the plain loops in its place.
    expect((wasmBasis as unknown as { capacity: number }).capacity).toBeGreaterThanOrEqual(2 * 8 * 8 * n);
    for (let a = 0; a < 4; a++) expectSameBits(js.out[a], wasm.out[a], `output ${a}`);
  });

  it("hasNaN and firstInfinite", () => {
    fc.assert(
      fc.property(matrix(true), ({ X }) => {
        const [js, wasm] = both((k) => k.hasNaN(X));
        expect(wasm).toBe(js);
        expect(js).toBe(X.some((v) => v !== v));
        const [jsAt, wasmAt] = both((k) => k.firstInfinite(X));
        expect(wasmAt).toBe(jsAt);
        expect(jsAt).toBe(X.findIndex((v) => v === Infinity || v === -Infinity));
      }),
      { numRuns: 300 },
    );
  });

  it("standardize: means, scales, z and the correlations (constant columns scale 0)", () => {
    fc.assert(
      fc.property(fc.oneof(matrix(false, finite), matrix(false)), ({ n, cols, X }) => {
        const [js, wasm] = both((k) => {
          const out = [new Float64Array(cols), new Float64Array(cols), new Float64Array(n * cols), new Float64Array(cols * cols)];
          k.standardize(X, n, cols, out[0], out[1], out[2], out[3]);
          return out;
        });
        for (let a = 0; a < 4; a++) expectSameBits(js[a], wasm[a], ["mean", "scale", "z", "corr"][a]);
      }),
      { numRuns: 300 },
    );
  });

  it("usableRows, completeMoments, informativeness and relevance of a set of columns", () => {
    fc.assert(
      fc.property(
        fc.oneof(matrix(true, finite), matrix(true)),
        fc.array(fc.boolean(), { minLength: 7, maxLength: 7 }),
        fc.array(finite, { minLength: 49, maxLength: 49 }),
        fc.array(finite, { minLength: 8, maxLength: 8 }),
        ({ n, cols, X }, pick, inverseValues, more) => {
          const columns = columnsOf(cols, pick);
          const k = columns.length;
          const [js, wasm] = both((kernels) => {
            const usable = new Uint8Array(n);
            const count = kernels.usableRows(X, n, cols, columns, usable);
            const mean = new Float64Array(k);
            const cov = new Float64Array(k * k);
            const momentsCount = kernels.completeMoments(X, n, cols, columns, usable, mean, cov);
            // The inverse and direction are given (any values), the mean the moments' when they have one.
            const given = momentsCount >= 2 ? mean : Float64Array.from(more.slice(0, k));
            const inverse = Float64Array.from(inverseValues.slice(0, k * k));
            const infoX = new Float64Array(n);
            kernels.informativeness(X, n, cols, columns, usable, given, inverse, infoX);
            const relevance = new Float64Array(n);
            const similarity = new Float64Array(n);
            kernels.relevance(X, n, cols, columns, usable, given, Float64Array.from(more.slice(1, k + 1)), infoX, more[7], relevance, similarity);
            return { count, usable, momentsCount, mean: momentsCount >= 2 ? mean : [], cov: momentsCount >= 2 ? cov : [], infoX, relevance, similarity };
          });
          expect(wasm.count).toBe(js.count);
          expect(wasm.momentsCount).toBe(js.momentsCount);
          expect([...wasm.usable]).toEqual([...js.usable]);
          for (const key of ["mean", "cov", "infoX", "relevance", "similarity"] as const) expectSameBits(js[key], wasm[key], key);
        },
      ),
      { numRuns: 400 },
    );
  });

  it("insights: the sums over the cells, with and without each attribute", () => {
    const cells = fc.record({
      k: fc.integer({ min: 1, max: 6 }),
      combinations: fc.array(fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }), { minLength: 1, maxLength: 12 }),
      // Up to 200 cells, as many as that at times: runs of one combination longer than the 64
      // cells the WebAssembly pass takes at a time.
      cells: fc.array(fc.record({ q: fc.nat(), weight: fc.oneof(finite, double), yhat: finite, valid: fc.boolean() }), {
        maxLength: 200,
        size: "max",
      }),
      ybar: double,
      // A Grid's cells come a combination's at a time: such runs as well as scattered combinations.
      runs: fc.boolean(),
    });
    fc.assert(
      fc.property(cells, ({ k, combinations, cells, ybar, runs }) => {
        const Q = combinations.length;
        if (runs) cells.sort((a, b) => (a.q % Q) - (b.q % Q));
        const has = new Uint8Array(Q * k);
        const sizes = new Int32Array(Q);
        combinations.forEach((pick, q) => {
          const columns = columnsOf(k, pick);
          for (const j of columns) has[q * k + j] = 1;
          sizes[q] = columns.length;
        });
        const combination = Int32Array.from(cells, (c) => c.q % Q);
        const weight = Float64Array.from(cells, (c) => c.weight);
        const yhat = Float64Array.from(cells, (c) => c.yhat);
        const valid = Uint8Array.from(cells, (c) => Number(c.valid));
        const [js, wasm] = both((kernels) => {
          const out = new Float64Array(10 * k).fill(7);
          return { total: kernels.insights(combination, weight, yhat, valid, has, sizes, k, ybar, out), out };
        });
        expectSameBits([js.total], [wasm.total], "total");
        expectSameBits(js.out, wasm.out, "sums");
      }),
      { numRuns: 400 },
    );
  });

  it("mergeRows, compositeFit, cellTotals, soloVotes and soloMoments", () => {
    const rows = fc.record({
      n: fc.integer({ min: 0, max: 30 }),
      parts: fc.integer({ min: 0, max: 5 }),
      values: fc.array(fc.oneof(finite, double), { minLength: 8 * 30, maxLength: 8 * 30 }),
      flags: fc.array(fc.boolean(), { minLength: 8 * 30, maxLength: 8 * 30 }),
    });
    fc.assert(
      fc.property(rows, ({ n, parts, values, flags }) => {
        const column = (c: number) => Float64Array.from({ length: n }, (_, i) => values[c * 30 + i]);
        const flagsOf = (c: number) => Uint8Array.from({ length: n }, (_, i) => Number(flags[c * 30 + i]));
        const composites = Array.from({ length: parts }, (_, p) => column(p));
        const useds = Array.from({ length: parts }, (_, p) => flagsOf(p));
        const [js, wasm] = both((kernels) => {
          const composite = column(6);
          const used = flagsOf(6);
          kernels.mergeRows(composites, useds, composite, used);
          const fit = kernels.compositeFit(composite, column(7), used);
          const totals = new Float64Array(4);
          kernels.cellTotals(column(5), column(7), flagsOf(5), totals);
          const moments = new Float64Array(5);
          kernels.soloMoments(column(7), moments);
          const votes = new Float64Array(n);
          kernels.soloVotes(column(5), column(7), column(4), values[0], parts + 1, votes);
          return { composite, used, fit: [fit], totals, moments, votes };
        });
        for (const key of ["composite", "used", "fit", "totals", "moments", "votes"] as const) expectSameBits(js[key], wasm[key], key);
      }),
      { numRuns: 400 },
    );
  });
});
