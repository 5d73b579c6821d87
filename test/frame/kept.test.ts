/** toKeptRequest: a notebook call's request keeps the caller's rows of X, with a fingerprint that tells when they change. */
import { describe, expect, it } from "vitest";
import { keptRequest, rowsChanged, toKeptRequest, toRequest } from "../../src/frame/index.js";
import { rowsPrint } from "../../src/frame/kept.js";

const rows = (): number[][] => [
  [1, 2],
  [3, 4],
  [5, 6.5],
];

describe("toKeptRequest", () => {
  it("keeps the caller's X and rows (toRequest copies them), with the same request otherwise", () => {
    const X = rows();
    const y = [1, 2, 3];
    const kept = toKeptRequest({ y, X });
    const copied = toRequest({ y, X });
    expect(kept.X).toBe(X);
    expect(copied.X).not.toBe(X);
    expect(copied.X[0]).not.toBe(X[0]);
    expect(kept).toEqual(copied);
    // y is the request's own: the Prediction's tables and charts read it.
    expect(kept.y).not.toBe(y);
  });

  it("copies rows it cannot keep (missing values, typed arrays) and keeps the others; a dropped row gives X its own array", () => {
    const X: (number | null)[][] = [
      [1, 2],
      [3, null],
      [5, 6],
    ];
    const typed = Float64Array.from([7, 8]);
    const r = toKeptRequest({ y: [1, 2, 3, null], X: [...X, typed as unknown as number[]] });
    expect(r.X).toHaveLength(3);
    expect(r.X[0]).toBe(X[0]);
    expect(r.X[1]).not.toBe(X[1]);
    expect(r.X[2]).toBe(X[2]);
    expect(r.rowLabels).toEqual(["0", "1", "2"]);
  });

  it("a request made from it carries its fingerprint: a change of any value of X after the call is seen, none before", () => {
    const X = rows();
    const frame = toKeptRequest({ y: [1, 2, 3], X });
    const sent = keptRequest(frame, { y: frame.y, X: frame.X });
    expect(rowsChanged(sent)).toBe(false);
    X[2][1] = 6.500000000000001;
    expect(rowsChanged(sent)).toBe(true);
    X[2][1] = 6.5;
    expect(rowsChanged(sent)).toBe(false);
    X.push([7, 8]);
    expect(rowsChanged(sent)).toBe(true);
    // A request copied by toRequest, or built by hand, has no fingerprint: never "changed".
    const copied = toRequest({ y: [1, 2, 3], X: rows() });
    expect(rowsChanged(keptRequest(copied, { X: copied.X }))).toBe(false);
  });

  it("the fingerprint taken as the frame reads X is rowsPrint of the X it keeps (rows dropped, missing values, copies)", () => {
    const typed = Float64Array.from([9, 10]);
    const X = [[1, 2], [3, NaN], [5, 6], [7, undefined], typed, [-0, 12]] as unknown as (number | null)[][];
    const frame = toKeptRequest({ y: [1, null, 3, 4, 5, 6], X });
    expect(frame.X).toEqual([
      [1, 2],
      [5, 6],
      [7, null],
      [9, 10],
      [-0, 12],
    ]);
    const sent = keptRequest(frame, { y: frame.y, X: frame.X });
    expect(rowsChanged(sent)).toBe(false);
    X[5][1] = 13;
    expect(rowsChanged(sent)).toBe(true);
    X[5][1] = 12;
    expect(rowsChanged(sent)).toBe(false);
    // A dropped row is not in the fingerprint.
    X[1][0] = 99;
    expect(rowsChanged(sent)).toBe(false);
  });

  it("the fingerprint tells null from 0, -0 from 0 and a moved value", () => {
    expect(rowsPrint([[0, 1]])).not.toBe(rowsPrint([[null, 1]]));
    expect(rowsPrint([[0, 1]])).not.toBe(rowsPrint([[-0, 1]]));
    expect(rowsPrint([[1, 2]])).not.toBe(rowsPrint([[2, 1]]));
    expect(rowsPrint([[1, 2], [3]])).not.toBe(rowsPrint([[1], [2, 3]]));
    expect(rowsPrint([[1, 2]])).toBe(rowsPrint([[1, 2]]));
    expect(rowsPrint([[1, 2]])).not.toBe(rowsPrint([[1, 2], []]));
  });
});
