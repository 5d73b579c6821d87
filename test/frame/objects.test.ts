/** toRequest on row objects, column objects and plain arrays. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FrameError, readTable, toRequest } from "../../src/frame/index.js";
import { catchFrameError } from "./helpers.js";

const rows = [
  { Name: "chevrolet chevelle malibu", Miles_per_Gallon: 18, Cylinders: 8, Horsepower: 130, Origin: "USA" },
  { Name: "buick skylark 320", Miles_per_Gallon: 15, Cylinders: 8, Horsepower: 165, Origin: "USA" },
  { Name: "citroen ds-21 pallas", Miles_per_Gallon: null, Cylinders: 4, Horsepower: 115, Origin: "Europe" },
  // keys in another order, one absent (Horsepower): a missing value
  { Origin: "USA", Cylinders: 8, Miles_per_Gallon: 17, Name: "ford torino" },
  { Name: "ford mustang", Miles_per_Gallon: undefined, Cylinders: 8, Horsepower: 140, Origin: "USA" },
  { Name: "saab 99e", Miles_per_Gallon: 25, Cylinders: 4, Horsepower: NaN, Origin: "Europe" },
  { Name: "vw 1131 deluxe sedan", Miles_per_Gallon: 26, Cylinders: 4, Horsepower: 46, Origin: "Europe" },
];

describe("row objects", () => {
  it("columns in order of first appearance; default X skips the string columns", () => {
    const r = toRequest(rows, { y: "Miles_per_Gallon" });
    expect(r.attributes).toEqual(["Cylinders", "Horsepower"]);
    expect(r.notes).toEqual(["skipped columns that are not numeric: Name, Origin", "dropped 2 rows with no Miles_per_Gallon"]);
  });

  it("null, NaN, undefined and absent keys are missing; rows keep their input positions as labels", () => {
    const r = toRequest(rows, { y: "Miles_per_Gallon" });
    expect(r.dropped).toBe(2);
    expect(r.y).toEqual([18, 15, 17, 25, 26]);
    expect(r.X).toEqual([
      [8, 130],
      [8, 165],
      [8, null],
      [4, null],
      [4, 46],
    ]);
    expect(r.rowLabels).toEqual(["0", "1", "3", "5", "6"]);
  });

  it("one dropped row is said in the singular", () => {
    const r = toRequest(rows.slice(0, 4), { y: "Miles_per_Gallon" });
    expect(r.notes).toContain("dropped 1 row with no Miles_per_Gallon");
  });

  it("a requested string column is an error naming it and the row", () => {
    const err = catchFrameError(() => toRequest(rows, { y: "Miles_per_Gallon", X: ["Cylinders", "Name"] }));
    expect(err.column).toBe("Name");
    expect(err.row).toBe("0");
    expect(err.message).toContain('attribute column "Name" is not numeric');
  });

  it("a column that is numeric except for one string cell is an error naming the row", () => {
    const bad = rows.map((r, i) => (i === 5 ? { ...r, Horsepower: "n/a" } : r));
    const err = catchFrameError(() => toRequest(bad, { y: "Miles_per_Gallon", X: ["Horsepower"] }));
    expect(err.message).toMatch(/"Horsepower" is not numeric: row 5 holds the string "n\/a"/);
    // In the default X such a column is skipped, with a note.
    expect(toRequest(bad, { y: "Miles_per_Gallon" }).notes[0]).toBe("skipped columns that are not numeric: Name, Horsepower, Origin");
  });

  it("booleans and infinities are errors", () => {
    expect(catchFrameError(() => toRequest([{ y: 1, a: true }], { y: "y", X: ["a"] })).message).toMatch(/holds boolean true/);
    const inf = catchFrameError(() =>
      toRequest(
        [
          { y: 1, a: 2 },
          { y: 2, a: Infinity },
        ],
        { y: "y", X: ["a"] },
      ),
    );
    expect(inf.message).toMatch(/"a" is not finite: row 1 holds number Infinity/);
  });

  it("a row that is not an object is an error", () => {
    expect(() => toRequest([{ y: 1 }, 5 as never], { y: "y" })).toThrow(/row 1 is number 5, expected an object/);
  });

  it("the outcome must be named, exist and not be an attribute", () => {
    expect(() => toRequest(rows, {})).toThrow(/name the outcome column, for example \{ y: "Name" \}/);
    expect(() => toRequest(rows, { y: "mpg" })).toThrow(/outcome column "mpg" is not in the data/);
    expect(() => toRequest(rows, { y: "Miles_per_Gallon", X: ["Miles_per_Gallon"] })).toThrow(/is the outcome and cannot also be an attribute/);
    expect(() => toRequest(rows, { y: "Miles_per_Gallon", X: ["Cylinders", "Cylinders"] })).toThrow(/names "Cylinders" twice/);
    expect(() => toRequest(rows, { y: "Miles_per_Gallon", X: [] })).toThrow(/X names no column/);
  });

  it("a single column name is accepted for X", () => {
    expect(toRequest(rows, { y: "Miles_per_Gallon", X: "Cylinders" }).attributes).toEqual(["Cylinders"]);
  });

  it("no numeric attribute at all is an error", () => {
    expect(() => toRequest([{ y: 1, s: "a" }], { y: "y" })).toThrow(/no numeric attribute column besides the outcome "y"/);
  });

  it("a wholly missing column is left out of the default X with a note", () => {
    const r = toRequest(
      [
        { y: 1, a: 1, b: null },
        { y: 2, a: 3, b: undefined },
      ],
      { y: "y" },
    );
    expect(r.attributes).toEqual(["a"]);
    expect(r.notes).toContain("skipped a column with no values: b");
  });
});

describe("column objects", () => {
  const cols = {
    mpg: [18, 15, null, 17, 25, 26],
    cyl: new Float64Array([8, 8, 4, 8, 4, 4]),
    hp: [130, 165, 115, NaN, 95, undefined],
    origin: ["USA", "USA", "Europe", "USA", "Europe", "Europe"],
  };

  it("reads arrays and typed arrays by name", () => {
    const r = toRequest(cols, { y: "mpg" });
    expect(r.attributes).toEqual(["cyl", "hp"]);
    expect(r.X).toEqual([
      [8, 130],
      [8, 165],
      [8, null],
      [4, 95],
      [4, null],
    ]);
    expect(r.dropped).toBe(1);
    expect(r.rowLabels).toEqual(["0", "1", "3", "4", "5"]);
  });

  it("columns of different lengths are an error naming the column", () => {
    const err = catchFrameError(() => toRequest({ y: [1, 2, 3], a: [1, 2] }, { y: "y" }));
    expect(err.column).toBe("a");
    expect(err.message).toMatch(/column "a" has 2 values but column "y" has 3/);
  });

  it("a non-numeric requested column is an error naming it", () => {
    expect(catchFrameError(() => toRequest(cols, { y: "mpg", X: ["origin"] })).column).toBe("origin");
  });

  it("other inputs are an error saying what is accepted", () => {
    expect(() => toRequest(42 as never, { y: "y" })).toThrow(
      /expected a danfo DataFrame, an array of row objects, an object of columns or \{ y, X \} arrays, got number 42/,
    );
    expect(() => toRequest({ a: 1 } as never, { y: "y" })).toThrow(FrameError);
  });
});

describe("plain arrays", () => {
  const y = [18.8, 2.3, 3.0, null, 15.2, 20.9, 4.0];
  const X = [
    [25, 2, 76],
    [29, 1, 78],
    [32, 2, 77],
    [30, 5, 82],
    [24, null, 69],
    [25, NaN, 79],
    [35, 3, 80],
  ];

  it("default names x1..xK and y; every column of X is used", () => {
    const r = toRequest({ y, X });
    expect(r.outcome).toBe("y");
    expect(r.attributes).toEqual(["x1", "x2", "x3"]);
    expect(r.dropped).toBe(1);
    expect(r.X[3]).toEqual([24, null, 69]);
    expect(r.X[4]).toEqual([25, null, 79]);
    expect(r.rowLabels).toEqual(["0", "1", "2", "4", "5", "6"]);
  });

  it("carries the names given, and X can pick some of them", () => {
    const r = toRequest(
      { y, X, names: ["Age", "Rank", "Height"], outcome: "Points", rowLabels: ["a", "b", "c", "d", "e", "f", "g"] },
      { X: ["Height", "Age"], theta: "last" },
    );
    expect(r.outcome).toBe("Points");
    expect(r.attributes).toEqual(["Height", "Age"]);
    expect(r.X[0]).toEqual([76, 25]);
    expect(r.theta).toEqual([80, 35]);
    expect(r.thetaLabels).toEqual(["g"]);
    expect(r.notes).toEqual(["dropped 1 row with no Points"]);
  });

  it("shape errors name what is wrong", () => {
    expect(() => toRequest({ y: [1, 2], X: [[1], [2], [3]] })).toThrow(/y has 2 values but X has 3 rows/);
    expect(() => toRequest({ y: [1, 2], X: [[1, 2], [3]] })).toThrow(/X row 1 has 1 values but the first row has 2/);
    expect(() => toRequest({ y: [1, 2], X: [[1], [2]], names: ["a", "b"] })).toThrow(/names has 2 entries but X has 1 columns/);
    expect(() => toRequest({ y: [1, 2], X: [[1], [2]], names: ["y"] })).toThrow(/"y" is used twice/);
    expect(() => toRequest({ y: [1, 2], X: [[1], [2]], outcome: "Points" }, { y: "mpg" })).toThrow(
      /spec.y is "mpg" but the arrays name their outcome "Points"/,
    );
  });

  it("a string in X is an error naming the column", () => {
    const err = catchFrameError(() => toRequest({ y: [1, 2, 3], X: [[1], ["2" as never], [3]], names: ["Age"] }));
    expect(err.column).toBe("Age");
    expect(err.row).toBe("1");
  });

  it("read row by row (every column, theta last or none), the request is the table path's, errors too", () => {
    const cell = fc.oneof(
      { weight: 6, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
      { weight: 2, arbitrary: fc.integer() },
      fc.constantFrom(null, undefined, NaN, -0, Infinity, "2", true),
    );
    const input = fc.integer({ min: 1, max: 4 }).chain((k) =>
      fc.record({
        y: fc.array(cell, { minLength: 1, maxLength: 8 }),
        rowsOf: fc.func(fc.array(cell, { minLength: k, maxLength: k })),
        names: fc.option(fc.constant(Array.from({ length: k }, (_, j) => `a${j}`)), { nil: undefined }),
        theta: fc.constantFrom(undefined, "last" as const),
      }),
    );
    const outcome = (f: () => unknown) => {
      try {
        return { value: f() };
      } catch (e) {
        return { error: e instanceof FrameError ? { message: e.message, column: e.column, row: e.row } : String(e) };
      }
    };
    fc.assert(
      fc.property(input, ({ y, rowsOf, names, theta }) => {
        const X = y.map((_, i) => rowsOf(i) as never[]);
        const data = { y: y as never[], X, ...(names !== undefined ? { names } : {}) };
        const attributes = names ?? X[0].map((_, j) => `x${j + 1}`);
        const spec = theta !== undefined ? { theta } : {};
        expect(outcome(() => toRequest(data, spec))).toEqual(outcome(() => toRequest(data, { ...spec, X: attributes })));
      }),
      { numRuns: 500 },
    );
  });

  it("reads as a table with the outcome first", () => {
    const t = readTable({ y: [1, 2], X: [[3], [4]], names: ["a"] });
    expect(t.table.columns).toEqual(["y", "a"]);
    expect(t.table.kind).toBe("arrays");
  });
});

describe("theta", () => {
  const data = [
    { y: 1, a: 10, b: 100 },
    { y: 2, a: 20, b: 200 },
    { y: null, a: 30, b: 300 },
    { y: 4, a: 40, b: null },
    { y: null, a: 50, b: 500 },
  ];

  it("absent: no theta in the request", () => {
    const r = toRequest(data, { y: "y" });
    expect(r.theta).toBeUndefined();
    expect(r.thetaLabels).toBeUndefined();
  });

  it('"last" is the last row kept (the Grid default), even when later rows were dropped', () => {
    const err = catchFrameError(() => toRequest(data, { y: "y", theta: "last" }));
    expect(err.message).toBe('theta "last", row 3 has no value for "b"; every circumstance needs a number');
    expect(toRequest(data, { y: "y", X: ["a"], theta: "last" }).theta).toEqual([40]);
  });

  it("a position gives one row, a list gives rows; negative positions count from the end", () => {
    expect(toRequest(data, { y: "y", theta: 1 }).theta).toEqual([20, 200]);
    const r = toRequest(data, { y: "y", theta: [0, -1] });
    expect(r.theta).toEqual([
      [10, 100],
      [50, 500],
    ]);
    expect(r.thetaLabels).toEqual(["0", "4"]);
    expect(() => toRequest(data, { y: "y", theta: 5 })).toThrow(/row position 5 is not a row of the data \(0 to 4/);
    expect(() => toRequest(data, { y: "y", theta: 1.5 })).toThrow(/row position 1.5/);
  });

  it("one row object, several row objects or a column object of new circumstances", () => {
    expect(toRequest(data, { y: "y", theta: { b: 250, a: 25, other: "ignored" } }).theta).toEqual([25, 250]);
    const r = toRequest(data, {
      y: "y",
      theta: [
        { a: 1, b: 2 },
        { a: 3, b: 4 },
      ],
    });
    expect(r.theta).toEqual([
      [1, 2],
      [3, 4],
    ]);
    expect(r.thetaLabels).toEqual(["0", "1"]);
    expect(toRequest(data, { y: "y", theta: { a: [1, 3], b: [2, 4] } }).theta).toEqual([
      [1, 2],
      [3, 4],
    ]);
  });

  it("a missing column, a missing value or a string in theta is an error naming it", () => {
    const noB = catchFrameError(() => toRequest(data, { y: "y", theta: { a: 1 } }));
    expect(noB.column).toBe("b");
    expect(noB.message).toMatch(/theta has no column "b"; the circumstances need every attribute \(a, b\)/);
    const nan = catchFrameError(() =>
      toRequest(data, {
        y: "y",
        theta: [
          { a: 1, b: 2 },
          { a: NaN, b: 2 },
        ],
      }),
    );
    expect(nan.row).toBe("1");
    expect(nan.column).toBe("a");
    const str = catchFrameError(() => toRequest(data, { y: "y", theta: { a: "1", b: 2 } }));
    expect(str.message).toMatch(/theta row 0, column "a" holds the string "1"; expected a finite number/);
    expect(() => toRequest(data, { y: "y", theta: "first" as never })).toThrow(/theta: expected "last", row positions or data/);
    expect(() => toRequest(data, { y: "y", theta: [] })).toThrow(/theta: the list is empty/);
  });
});

describe("index: a column that labels the rows", () => {
  const days = [
    { date: "2015-01-01", t: 5, w: 1, next: 6 },
    { date: "2015-01-02", t: 6, w: 2, next: 4 },
    { date: "2015-01-03", t: 4, w: 1, next: 7 },
  ];

  it("labels the data's rows and theta's rows by its values, and is never an attribute", () => {
    const r = toRequest(days, {
      y: "next",
      theta: [
        { date: "2015-02-01", t: 3, w: 2 },
        { date: "2015-02-02", t: 4, w: 1 },
      ],
      index: "date",
    });
    expect(r.rowLabels).toEqual(["2015-01-01", "2015-01-02", "2015-01-03"]);
    expect(r.thetaLabels).toEqual(["2015-02-01", "2015-02-02"]);
    expect(r.attributes).toEqual(["t", "w"]);
    expect(r.notes).toEqual([]);
    // One row object of theta keeps its own label.
    expect(toRequest(days, { y: "next", theta: { date: "2015-03-01", t: 1, w: 1 }, index: "date" }).thetaLabels).toEqual(["2015-03-01"]);
  });

  it("without index, positions (and a note on the skipped text column)", () => {
    const r = toRequest(days, {
      y: "next",
      theta: [
        { t: 3, w: 2 },
        { t: 4, w: 1 },
      ],
    });
    expect(r.rowLabels).toEqual(["0", "1", "2"]);
    expect(r.thetaLabels).toEqual(["0", "1"]);
    expect(r.notes.join(" ")).toMatch(/not numeric: date/);
  });

  it("an index column that is missing, or also an attribute, is refused by name", () => {
    expect(catchFrameError(() => toRequest(days, { y: "next", index: "day" })).message).toMatch(/index column "day" is not in the data/);
    expect(catchFrameError(() => toRequest(days, { y: "next", X: ["t", "date"], index: "date" })).message).toMatch(
      /"date" is the index \(the row labels\) and cannot also be an attribute/,
    );
  });
});
