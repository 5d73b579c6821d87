/** toRequest on danfojs DataFrames (danfojs-node has the same API; both are recognised by shape). */
import * as dfd from "danfojs";
import { describe, expect, it } from "vitest";
import { isDataFrameLike, isSeriesLike, toRequest } from "../../src/frame/index.js";
import { catchFrameError } from "./helpers.js";

/** A few rows shaped like the vega cars data: string Name, Year and Origin, missing values. */
function cars(): dfd.DataFrame {
  return new dfd.DataFrame(
    {
      Name: ["chevrolet chevelle malibu", "buick skylark 320", "citroen ds-21 pallas", "ford torino", "ford mustang", "saab 99e", "vw 1131 deluxe sedan"],
      Miles_per_Gallon: [18, 15, null, 17, NaN, 25, 26],
      Cylinders: [8, 8, 4, 8, 8, 4, 4],
      Displacement: [307, 350, 133, 302, 351, 104, 97],
      Horsepower: [130, 165, 115, 140, null, 95, NaN],
      Weight_in_lbs: [3504, 3693, 3090, 3449, 3850, 2375, 1835],
      Acceleration: [12, 11.5, 17.5, 10.5, 8.5, 17.5, 20.5],
      Year: ["1970-01-01", "1970-01-01", "1970-01-01", "1970-01-01", "1970-01-01", "1970-01-01", "1970-01-01"],
      Origin: ["USA", "USA", "Europe", "USA", "USA", "Europe", "Europe"],
    },
    { index: ["a", "b", "c", "d", "e", "f", "g"] },
  );
}

describe("danfo DataFrames", () => {
  it("are recognised by shape, and Series apart from them", () => {
    const df = cars();
    expect(isDataFrameLike(df)).toBe(true);
    expect(isSeriesLike(df)).toBe(false);
    const s = df.column("Horsepower");
    expect(isDataFrameLike(s)).toBe(false);
    expect(isSeriesLike(s)).toBe(true);
    expect(isDataFrameLike({ columns: ["a"], values: [[1]] })).toBe(false);
  });

  it("default X is every other numeric column; string columns are skipped with a note", () => {
    const r = toRequest(cars(), { y: "Miles_per_Gallon" });
    expect(r.outcome).toBe("Miles_per_Gallon");
    expect(r.attributes).toEqual(["Cylinders", "Displacement", "Horsepower", "Weight_in_lbs", "Acceleration"]);
    expect(r.notes).toContain("skipped columns that are not numeric: Name, Year, Origin");
  });

  it("drops rows with a missing outcome (null, NaN) and says how many", () => {
    const r = toRequest(cars(), { y: "Miles_per_Gallon" });
    expect(r.dropped).toBe(2);
    expect(r.notes).toContain("dropped 2 rows with no Miles_per_Gallon");
    expect(r.y).toEqual([18, 15, 17, 25, 26]);
    expect(r.rowLabels).toEqual(["a", "b", "d", "f", "g"]);
  });

  it("turns null and NaN in X into null", () => {
    const r = toRequest(cars(), { y: "Miles_per_Gallon", X: ["Horsepower", "Weight_in_lbs"] });
    expect(r.attributes).toEqual(["Horsepower", "Weight_in_lbs"]);
    expect(r.X).toEqual([
      [130, 3504],
      [165, 3693],
      [140, 3449],
      [95, 2375],
      [null, 1835],
    ]);
  });

  it("treats undefined in a frame as missing", () => {
    const df = new dfd.DataFrame({ y: [1, 2, 3, 4], a: [1, undefined, 3, 4], b: [2, 3, 5, 7] });
    const r = toRequest(df, { y: "y" });
    expect(r.X.map((row) => row[0])).toEqual([1, null, 3, 4]);
    expect(r.rowLabels).toEqual(["0", "1", "2", "3"]);
  });

  it("a requested non-numeric column is an error naming it", () => {
    const err = catchFrameError(() => toRequest(cars(), { y: "Miles_per_Gallon", X: ["Horsepower", "Origin"] }));
    expect(err.column).toBe("Origin");
    expect(err.message).toMatch(/attribute column "Origin" is not numeric: row a holds the string "USA"/);
  });

  it("a non-numeric outcome is an error naming it", () => {
    const err = catchFrameError(() => toRequest(cars(), { y: "Name" }));
    expect(err.column).toBe("Name");
    expect(err.message).toMatch(/outcome column "Name" is not numeric/);
  });

  it("an unknown column is an error listing the columns", () => {
    const err = catchFrameError(() => toRequest(cars(), { y: "Miles_per_Gallon", X: ["Horsepower", "Torque"] }));
    expect(err.column).toBe("Torque");
    expect(err.message).toMatch(/attribute column "Torque" is not in the data; the columns are "Name", "Miles_per_Gallon"/);
  });

  it('theta "last" is the last row kept, by name', () => {
    const r = toRequest(cars(), { y: "Miles_per_Gallon", X: ["Cylinders", "Displacement"], theta: "last" });
    expect(r.theta).toEqual([4, 97]);
    expect(r.thetaLabels).toEqual(["g"]);
    expect(r.X).toHaveLength(5); // the row stays in the data
  });

  it('theta "last" with a missing value is an error naming the row and column', () => {
    const err = catchFrameError(() => toRequest(cars(), { y: "Miles_per_Gallon", X: ["Horsepower"], theta: "last" }));
    expect(err.row).toBe("g");
    expect(err.column).toBe("Horsepower");
    expect(err.message).toMatch(/row g has no value for "Horsepower"/);
  });

  it("theta as row positions, including a row whose outcome is missing", () => {
    const r = toRequest(cars(), { y: "Miles_per_Gallon", X: ["Cylinders", "Displacement"], theta: [2, -1] });
    expect(r.theta).toEqual([
      [4, 133],
      [4, 97],
    ]);
    expect(r.thetaLabels).toEqual(["c", "g"]);
  });

  it("theta as a DataFrame of new circumstances, columns picked by name", () => {
    const next = new dfd.DataFrame({ Origin: ["USA", "Japan"], Displacement: [250, 120], Cylinders: [6, 4] }, { index: ["plan A", "plan B"] });
    const r = toRequest(cars(), { y: "Miles_per_Gallon", X: ["Cylinders", "Displacement"], theta: next });
    expect(r.theta).toEqual([
      [6, 250],
      [4, 120],
    ]);
    expect(r.thetaLabels).toEqual(["plan A", "plan B"]);
  });

  it("a one-row DataFrame or a Series of circumstances gives one theta row", () => {
    const one = new dfd.DataFrame([{ Cylinders: 6, Displacement: 250 }]);
    expect(toRequest(cars(), { y: "Miles_per_Gallon", X: ["Cylinders", "Displacement"], theta: one }).theta).toEqual([6, 250]);
    const s = new dfd.Series([250, 6], { index: ["Displacement", "Cylinders"] });
    expect(toRequest(cars(), { y: "Miles_per_Gallon", X: ["Cylinders", "Displacement"], theta: s }).theta).toEqual([6, 250]);
  });

  it("a theta frame without an attribute is an error naming it", () => {
    const next = new dfd.DataFrame({ Cylinders: [6] });
    const err = catchFrameError(() => toRequest(cars(), { y: "Miles_per_Gallon", X: ["Cylinders", "Displacement"], theta: next }));
    expect(err.column).toBe("Displacement");
    expect(err.message).toMatch(/theta has no column "Displacement"/);
  });

  it("a missing value in a theta frame is an error naming the row and column", () => {
    const next = new dfd.DataFrame({ Cylinders: [6, 4], Displacement: [250, null] }, { index: ["p", "q"] });
    const err = catchFrameError(() => toRequest(cars(), { y: "Miles_per_Gallon", X: ["Cylinders", "Displacement"], theta: next }));
    expect(err.row).toBe("q");
    expect(err.column).toBe("Displacement");
  });

  it("numbers held as strings (a CSV read without typing) are an error with a hint", () => {
    const df = new dfd.DataFrame({ mpg: ["18", "15", "17", "25"], hp: [130, 165, 140, 95] });
    const err = catchFrameError(() => toRequest(df, { y: "mpg" }));
    expect(err.column).toBe("mpg");
    expect(err.message).toMatch(/row 0 holds the string "18"; numbers given as strings are not converted/);
  });
});
