/**
 * encodeJson (service/encode.ts) writes plain data without a replacer, and arrays of numbers digit
 * by digit: its text must stay the replacer form's, byte for byte, for any value and any rounding.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  decodedBytes,
  decodedJson,
  decodedOutline,
  decodedTransfer,
  decodeResult,
  encodeJson,
  encodeResult,
  readDecoded,
  rounder,
} from "../../src/service/encode.js";

/** The reference: JSON.stringify with every number rounded by a replacer. */
function reference(value: unknown, decimals: number | null): string {
  const round = rounder(decimals);
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === "number" ? round(v) : v));
}

const number = fc.oneof(
  fc.double(),
  fc.double({ min: -1e3, max: 1e3 }),
  fc.double({ min: -1e-5, max: 1e-5 }),
  fc.double({ min: -1e10, max: 1e10 }),
  fc.integer(),
  fc.constantFrom(
    0,
    -0,
    0.5,
    -0.5,
    5e-7,
    -5e-7,
    4.9999995e-7,
    1e-6,
    999999.9999995,
    1e15,
    1e9 + 0.5,
    2 ** 53,
    1e21,
    123456789.1234565,
    2 ** 31,
    2 ** 40 + 0.25,
    -(2 ** 45) - 0.5,
    4294967296.000001,
    999999999999999,
    NaN,
    Infinity,
    -Infinity,
  ),
);
const value = fc.letrec((tie) => ({
  node: fc.oneof(
    { maxDepth: 4 },
    number,
    fc.string({ maxLength: 6 }),
    fc.constant(null),
    fc.constant(undefined),
    fc.boolean(),
    fc.array(number, { maxLength: 12 }),
    fc.array(fc.array(number, { maxLength: 3 }), { maxLength: 6 }),
    fc.array(tie("node"), { maxLength: 5 }),
    fc.dictionary(fc.string({ maxLength: 4 }), tie("node"), { maxKeys: 5 }),
  ),
})).node;
const decimals = fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 8 }));

describe("encodeJson", () => {
  it("writes the replacer form's text for any plain value and rounding", () => {
    fc.assert(
      fc.property(value, decimals, (v, d) => {
        expect(encodeJson(v, d)).toBe(reference(v, d));
      }),
      { numRuns: 3000 },
    );
  });

  it("writes arrays of numbers (and columns of them) as the replacer form does, value by value", () => {
    fc.assert(
      fc.property(fc.array(number, { minLength: 1, maxLength: 200 }), fc.integer({ min: 0, max: 6 }), (list, d) => {
        const v = { list, column: list.map((x) => [x]) };
        expect(encodeJson(v, d)).toBe(reference(v, d));
      }),
      { numRuns: 2000 },
    );
  });

  it("decodes to what JSON.parse reads from the text, through a transfer (a worker's post)", () => {
    expect(() => expect(0).toEqual(-0)).toThrow(); // the comparison below tells 0 from -0
    fc.assert(
      fc.property(value, fc.integer({ min: 0, max: 8 }), (v, d) => {
        const { json, decoded } = encodeResult(v, d, true);
        expect(json).toBe(reference(v, d));
        if (v === undefined) return;
        expect(decoded).toBeDefined();
        const posted = structuredClone(decoded, { transfer: decodedTransfer(decoded) });
        expect(readDecoded(posted!)).toEqual(JSON.parse(json));
      }),
      { numRuns: 3000 },
    );
    const column = Array.from({ length: 1000 }, (_, i) => [i % 9 === 0 ? -i / 7 : i / 3]);
    const big = { weights: column, list: column.map(([x]) => -x), mixed: [1.5, [2.25, NaN], -0, [], 3] };
    const { json, decoded } = encodeResult(big, 6, true);
    expect(decodedTransfer(decoded).length).toBe(5);
    expect(readDecoded(structuredClone(decoded)!)).toEqual(JSON.parse(json));
  });

  it("decodes without the text (decodeResult) to what JSON.parse reads from the text, with a bound on its length and its strings", () => {
    fc.assert(
      fc.property(value, fc.integer({ min: 0, max: 8 }), (v, d) => {
        const { json, decoded } = encodeResult(v, d, true);
        const alone = decodeResult(v, d);
        if (decoded === undefined) {
          expect(alone).toBeUndefined();
          return;
        }
        expect(alone).toBeDefined();
        const outline = decodedOutline(alone!);
        const posted = structuredClone(alone!, { transfer: decodedTransfer(alone) });
        expect(readDecoded(posted)).toEqual(JSON.parse(json));
        expect(outline.bytesAtMost).toBeGreaterThanOrEqual(json.length);
        // Every string of the text is one of the outline's (keys included).
        const strings = new Set(outline.strings);
        const walk = (x: unknown): void => {
          if (typeof x === "string") expect(strings.has(x)).toBe(true);
          else if (Array.isArray(x)) x.forEach(walk);
          else if (x !== null && typeof x === "object")
            for (const [key, member] of Object.entries(x)) {
              expect(strings.has(key)).toBe(true);
              walk(member);
            }
        };
        walk(JSON.parse(json));
      }),
      { numRuns: 3000 },
    );
    // Long arrays (decoded in one pass): numbers, rows, rows and numbers mixed, and with something else in them.
    const long = fc.oneof(
      fc.array(number, { minLength: 32, maxLength: 80 }),
      fc.array(fc.array(number, { maxLength: 3 }), { minLength: 32, maxLength: 60 }),
      fc.array(fc.oneof(number, fc.array(number, { maxLength: 2 })), { minLength: 32, maxLength: 60 }),
      fc.array(fc.oneof(number, fc.constant(null), fc.string({ maxLength: 2 })), { minLength: 32, maxLength: 40 }),
    );
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom("a", "b"), long), fc.integer({ min: 0, max: 8 }), (v, d) => {
        const json = encodeJson(v, d);
        expect(readDecoded(decodeResult(v, d)!)).toEqual(JSON.parse(json));
      }),
      { numRuns: 1000 },
    );
    const column = Array.from({ length: 1000 }, (_, i) => [i % 9 === 0 ? -i / 7 : i / 3]);
    const big = { weights: column, list: column.map(([x]) => -x), mixed: [1.5, [2.25, NaN], -0, [], 3], label: "a\u0001b" };
    const json = encodeJson(big, 6);
    expect(readDecoded(decodeResult(big, 6)!)).toEqual(JSON.parse(json));
    expect(decodedOutline(decodeResult(big, 6)!).bytesAtMost).toBeGreaterThanOrEqual(json.length);
    // The memory it holds counts its typed arrays (the embedded store's accounting of a deferred text).
    const held = decodeResult(big, 6)!;
    expect(decodedBytes(held)).toBeGreaterThanOrEqual(decodedTransfer(held).reduce((sum, buffer) => sum + buffer.byteLength, 0));
  });

  it("writes the text again from the decoded form (decodedJson), byte for byte, for any value and any rounding", () => {
    fc.assert(
      fc.property(value, decimals, (v, d) => {
        const decoded = decodeResult(v, d);
        if (decoded === undefined) return;
        // As the store keeps it: after the reader's transfer (the same buffers, moved).
        const posted = structuredClone(decoded, { transfer: decodedTransfer(decoded) });
        expect(decodedJson(posted, d)).toBe(reference(v, d));
      }),
      { numRuns: 4000 },
    );
    // Numbers whose rounded integer reaches 10^15 or 2^52 (written as the rounded double), and columns.
    const edges = [
      4503599622.370502,
      45035996223.70496,
      -4503599622370.521,
      1e9 + 0.1234565,
      4.5e9 + 0.3,
      1.2345678901234567e9,
      2 ** 52 / 1e6 + 0.5,
      999999999.9999995,
      -1e12 - 0.25,
      5e-7,
      -5e-7,
      NaN,
      1e300,
    ];
    for (let d = 0; d <= 6; d++) {
      const v = { list: edges, column: edges.map((x) => [x]), mixed: [1.5, [2.25, NaN], -0, [], 3], k: [3], s: "a\u0001b" };
      expect(decodedJson(decodeResult(v, d)!, d)).toBe(reference(v, d));
    }
  });

  it("hands what is not plain data to the replacer form (toJSON, typed arrays, holes, class instances)", () => {
    class Point {
      x = 1.23456789;
    }
    const holes = [1.5, , 2.25];
    const values = [
      { when: new Date(0), n: 1.23456789 },
      { t: Float64Array.of(1.23456789, NaN) },
      { holes },
      { p: new Point() },
      { f: () => 1, s: Symbol("s"), u: undefined, list: [undefined, () => 1, 0.1234567] },
      [[[[1.0000005]]]],
      { toJSON: 1.23456789, a: [2.5] },
      { own: Object.assign([1.23456789], { toJSON: () => "called" }), column: [Object.assign([2.5], { toJSON: () => 7 })] },
      { data: Object.assign([1.23456789], { toJSON: 3 }), column: [Object.assign([2.5], { toJSON: "no" })] },
    ];
    for (const v of values) for (const d of [null, 0, 3, 6]) expect(encodeJson(v, d)).toBe(reference(v, d));
  });

  it("refuses a cycle as JSON.stringify does", () => {
    const v: Record<string, unknown> = { a: [1.5] };
    v.self = v;
    expect(() => encodeJson(v, 6)).toThrow(TypeError);
  });

  it("writes a long column in one text (the buffer grows)", () => {
    const list = Array.from({ length: 50_000 }, (_, i) => (i % 7 === 0 ? -i / 3 : i / 7));
    const v = { list, column: list.map((x) => [x]) };
    expect(encodeJson(v, 6)).toBe(reference(v, 6));
  });
});
