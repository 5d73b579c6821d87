/**
 * encodeJson writes the text of JSON.stringify with a rounding replacer, byte for byte: the
 * numbers it writes itself (0 to 6 decimals, below 2^26), every other number, and the structure's
 * rules (toJSON, left-out members, wrapper objects, cycles), against the replacer's text.
 */
import { describe, expect, it } from "vitest";
import { datasetFromRows, runAnalysis } from "../../src/engine/index.js";
import { encodeJson, rounder } from "../../src/service/encode.js";

/** What encodeJson must equal: JSON.stringify with the rounding replacer. */
function reference(value: unknown, decimals: number | null): string {
  const round = rounder(decimals);
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === "number" ? round(v) : v));
}

/** A seeded generator (Park-Miller), so that a failure can be replayed. */
function random(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 16807) % 2147483647) / 2147483647;
}

const DECIMALS: Array<number | null> = [0, 1, 2, 3, 4, 5, 6, 7, 10, 15, null];

describe("encodeJson", () => {
  it("writes every number as the rounding replacer does, at every magnitude and number of decimals", () => {
    const rnd = random(11);
    const values: number[] = [];
    for (let i = 0; i < 40_000; i++) {
      const magnitude = 10 ** Math.floor(rnd() * 30 - 14);
      values.push((rnd() - 0.5) * 2 * magnitude);
    }
    // Halfway cases, the edges of the digit path, integers, the smallest and largest doubles.
    for (let d = 0; d <= 7; d++) for (const k of [1, 5, 15, 25, 995, 12345]) values.push(k * 10 ** -(d + 1), -k * 10 ** -(d + 1), 0.5 * 10 ** -d);
    values.push(2 ** 26 - 1e-7, 2 ** 26, 2 ** 26 + 0.5, -(2 ** 26) + 0.25, 2 ** 31 - 1, 2 ** 31, -(2 ** 31), 2 ** 53, 2 ** 53 + 2, 1e21, 1e-7, -1e-7);
    values.push(0, -0, 5e-324, -5e-324, Number.MAX_VALUE, -Number.MAX_VALUE, NaN, Infinity, -Infinity, 0.1 + 0.2, 999999.9999995, 1.0000005);
    for (const decimals of DECIMALS) {
      expect(encodeJson(values, decimals)).toBe(reference(values, decimals));
      // One at a time too: a mismatch names its number.
      const bad = values.filter((v) => encodeJson(v, decimals) !== reference(v, decimals));
      expect(bad, `decimals ${decimals}`).toEqual([]);
    }
  });

  it("writes a PSR result as the rounding replacer does", () => {
    const rnd = random(3);
    const X = Array.from({ length: 300 }, () => Array.from({ length: 5 }, () => rnd() - 0.5));
    const y = X.map((r) => r.reduce((a, b) => a + b, 0) + rnd());
    const result = runAnalysis("psr", datasetFromRows(y.slice(0, 299), X.slice(0, 299)), Float64Array.from(X[299]), { threshold: [0, 0.5, 0.8] });
    for (const decimals of DECIMALS) expect(encodeJson(result, decimals)).toBe(reference(result, decimals));
  });

  it("follows JSON.stringify's rules for the structure", () => {
    const withToJSON = { toJSON: (key: string) => ({ key, value: 1.23456789 }) };
    const values: unknown[] = [
      { a: undefined, b: () => 1, c: Symbol("s"), d: null, e: true, f: false, g: "text", h: [undefined, () => 1, Symbol("t"), null] },
      [1.5, [2.25, [3.125, [4.0625]]], {}, [], "", { "": 0.1234567 }],
      // Lists of numbers inside lists (written at once), and lists that only start like one.
      [[0.1234567], [0.5, "x"], [], [NaN, -0, 1e30], [1.25, null], [2.5, [3.5]], Object.assign([1.5], { toJSON: () => "own" })],
      { date: new Date(Date.UTC(2026, 10, 26)), nested: { withToJSON }, list: [withToJSON], top: withToJSON },
      { typed: Float64Array.of(0.12345678, -2.5, NaN), ints: Int32Array.of(1, -2), map: new Map([["a", 1]]), set: new Set([1]) },
      { boxed: [Object(1.23456789), Object("s"), Object(false), Object(NaN)] },
      { escapes: 'quote " backslash \\ newline \n tab \t control \u0001 \u001f', unicode: "é, ≥, 漢字, 😀", lone: "\ud800 \udfff" },
      { 'key with "quotes" and é': 1, 2: "two", 1: "one" },
      { sparse: [1.1, , 3.3] },
      Object.assign(Object.create(null) as object, { string: "not a wrapper", n: 0.000001 }),
      Object.assign(Object.create({ inherited: 1 }) as object, { own: 2.5 }),
      1.23456789,
      "top",
      true,
      null,
      [NaN, -0, Infinity],
    ];
    for (const decimals of DECIMALS)
      for (const v of values) expect(encodeJson(v, decimals), JSON.stringify(reference(v, decimals))).toBe(reference(v, decimals));
    expect(encodeJson(undefined, 6)).toBe(reference(undefined, 6));
    expect(encodeJson(() => 1, 6)).toBe(reference(() => 1, 6));
  });

  it("refuses a cycle and a BigInt as JSON.stringify does, and is usable again after", () => {
    const cycle: Record<string, unknown> = { a: [1] };
    (cycle.a as unknown[]).push(cycle);
    expect(() => encodeJson(cycle, 6)).toThrow(TypeError);
    expect(() => encodeJson({ n: 1n }, 6)).toThrow(TypeError);
    // The same object twice is not a cycle.
    const shared = { x: 0.5 };
    expect(encodeJson({ a: shared, b: [shared, shared] }, 6)).toBe(reference({ a: shared, b: [shared, shared] }, 6));
  });

  it("encodes again from a toJSON while it writes (one writer each)", () => {
    const inner = { toJSON: () => encodeJson({ deep: 0.123456789 }, 3) };
    expect(encodeJson({ inner, after: 0.987654321 }, 6)).toBe(reference({ inner, after: 0.987654321 }, 6));
  });

  it("writes a result larger than its buffer", () => {
    const big = { rows: Array.from({ length: 300_000 }, (_, i) => [i / 7, -i / 3]), text: "é" };
    expect(encodeJson(big, 6)).toBe(reference(big, 6));
    expect(encodeJson({ small: 0.5 }, 6)).toBe('{"small":0.5}');
  });
});
