import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { percentiles } from "../../src/engine/percentile.js";

/** numpy's default percentile, by a full sort. */
function reference(values: number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const h = (sorted.length - 1) * fraction;
  const lo = Math.floor(h);
  return lo + 1 < sorted.length ? sorted[lo] + (h - lo) * (sorted[lo + 1] - sorted[lo]) : sorted[lo];
}

describe("percentiles", () => {
  it("matches numpy's linear rule on known values", () => {
    const out = new Float64Array(4);
    percentiles([3, 1, 4, 1, 5, 9, 2, 6], 8, [0, 0.2, 0.5, 1], new Float64Array(8), out);
    // numpy.percentile([3,1,4,1,5,9,2,6], [0,20,50,100]) = [1, 1.4, 3.5, 9]
    expect(Array.from(out)).toEqual([1, 1.4, 3.5, 9].map((v) => expect.closeTo(v, 12)));
  });

  it("agrees with a full sort for any data, ties and fractions", () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.integer({ min: -5, max: 5 }), fc.double({ min: -1e6, max: 1e6, noNaN: true })), { minLength: 1, maxLength: 300 }),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 6 }),
        (values, fractions) => {
          const out = new Float64Array(fractions.length);
          percentiles(values, values.length, fractions, new Float64Array(values.length), out);
          fractions.forEach((f, t) => expect(out[t]).toBeCloseTo(reference(values, f), 6));
        },
      ),
      { seed: 7, numRuns: 400 },
    );
  });

  it("leaves its input untouched and handles a constant column and a lone outlier", () => {
    const values = Float64Array.from({ length: 1000 }, (_, i) => (i * 7919) % 1000);
    const copy = values.slice();
    const out = new Float64Array(3);
    percentiles(values, 1000, [0.8, 0.2, 0.5], new Float64Array(1000), out);
    expect(Array.from(out)).toEqual([799.2, 199.8, 499.5].map((v) => expect.closeTo(v, 9)));
    expect(values).toEqual(copy);
    percentiles(new Float64Array(5).fill(3), 5, [0, 0.5, 1], new Float64Array(5), out);
    expect(Array.from(out)).toEqual([3, 3, 3]);
    // One huge value squeezes everything else into the first bin.
    const skewed = [...Array.from({ length: 99 }, (_, i) => i / 100), 1e12];
    percentiles(skewed, 100, [0.5, 0.99, 1], new Float64Array(100), out);
    expect(Array.from(out)).toEqual([reference(skewed, 0.5), reference(skewed, 0.99), 1e12].map((v) => expect.closeTo(v, 9)));
  });
});
