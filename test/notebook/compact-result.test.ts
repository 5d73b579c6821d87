/**
 * A Prediction keeps its result compactly (src/notebook/compact-result.ts): the plain result made
 * again is the same value with the same JSON text, and a change to a plain result lasts only as
 * long as something holds it.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Result } from "../../src/api/result.js";
import { HeldColumn, readsColumns, typedColumnOf } from "../../src/api/columns.js";
import { fromOwnV3Columns, fromOwnV3Results } from "../../src/api/result.js";
import { CompactResult } from "../../src/notebook/compact-result.js";
import { decodeResult, readDecoded, readDecodedColumns, type Decoded } from "../../src/service/encode.js";
import { datasetFromRows, grid as engineGrid, maxfit as engineMaxfit, psr as enginePsr } from "../../src/engine/index.js";
import { connect, disconnect, grid, maxfit, psr, type AnyPrediction, type Prediction } from "../../src/notebook/index.js";

setFlagsFromString("--expose-gc");
const collect = runInNewContext("gc") as () => void;
/** A full collection after the current job (a WeakRef's target read in a job lives until it ends). */
const collected = () => new Promise<void>((resolve) => setImmediate(() => (collect(), resolve())));

function sample(n: number): Result {
  return {
    analysis: "psr",
    yhat: [1.5, -0],
    fit: [0.25, null],
    adjusted_fit: [0.5, 0.75],
    agreement: [1, 2],
    asymmetry: [0, 0],
    outlier_influence: [0, 0],
    k_fit: [0, 0],
    thresholds: [0, 0.5],
    weights: Array.from({ length: n }, (_, i) => [i === 3 ? -0 : i / 7, i === 5 ? null : -i * 1e-7]),
    include: Array.from({ length: n }, (_, i) => [i % 2, 1]),
    relevance: Array.from({ length: n }, (_, i) => (i === 7 ? null : Math.sqrt(i) * 1e300)),
    similarity: Array.from({ length: n }, (_, i) => -i),
    info_x: Array.from({ length: n }, (_, i) => (i === 0 ? -0 : 5e-324 * i)),
    solo_statistics: { sigma: [1], skewness: [0], kurtosis: [3], pearson_modality_index: [0.5], bimodal_index: [0.1] },
    warnings: ["x"],
  };
}

describe("CompactResult", () => {
  it("makes the same value again: deep-equal, the same JSON text, -0 and null kept", () => {
    const r = sample(100);
    const made = CompactResult.of(structuredClone(r)).result();
    expect(made).toStrictEqual(r);
    expect(JSON.stringify(made)).toBe(JSON.stringify(r));
    expect(Object.keys(made)).toEqual(Object.keys(r));
    expect(Object.is(made.weights[3][0], -0)).toBe(true);
    expect(Object.is(made.info_x![0], -0)).toBe(true);
    expect(made.relevance![7]).toBeNull();
    expect(made.weights[5][1]).toBeNull();
  });

  it("rows of one value (a Grid's weights): the same value and text, null and -0 kept", () => {
    const r = sample(80);
    r.weights = r.weights.map((row, i) => [i === 11 ? null : row[0]]);
    r.include = r.include!.map((row) => [row[0]]);
    const made = CompactResult.of(structuredClone(r)).result();
    expect(made).toStrictEqual(r);
    expect(JSON.stringify(made)).toBe(JSON.stringify(r));
    expect(Object.is(made.weights[3][0], -0)).toBe(true);
    expect(made.weights[11]).toEqual([null]);
  });

  it("keeps as given what it cannot hold compactly (NaN, ragged rows, short or non-plain arrays)", () => {
    const r = sample(40);
    r.similarity![2] = NaN;
    r.weights[9] = [1];
    const made = CompactResult.of(r).result();
    expect(Number.isNaN(made.similarity![2])).toBe(true);
    expect(made.weights[9]).toEqual([1]);
    expect(made).toStrictEqual(r);
  });

  it("reads the first value of each row and the number of rows without making the result", () => {
    const c = CompactResult.of(sample(50));
    expect(c.rows("weights")).toBe(50);
    expect(c.firstOfRows("weights")!.slice(0, 4)).toEqual([0, 1 / 7, 2 / 7, -0]);
    expect(c.firstOfRows("include")!.slice(0, 3)).toEqual([0, 1, 0]);
    expect(c.small("yhat")).toEqual([1.5, -0]);
  });

  it("a view (for tables and charts) makes a column when first read, once; it is the same value with the same JSON text", async () => {
    const r = sample(70);
    const c = CompactResult.of(structuredClone(r));
    const view = c.view();
    const made = (key: string) => Object.getOwnPropertyDescriptor(view, key)!.get === undefined;
    expect(made("weights")).toBe(false);
    const weights = view.weights;
    expect(view.weights).toBe(weights);
    expect(made("weights")).toBe(true);
    expect(made("similarity")).toBe(false);
    expect(c.view()).toBe(view);
    expect(Object.keys(view)).toEqual(Object.keys(r));
    expect(JSON.stringify(view)).toBe(JSON.stringify(r));
    expect(view).toStrictEqual(r);
    view.relevance = [1];
    expect(view.relevance).toEqual([1]);
    // While a plain result is held, the view is that result.
    const held = c.result();
    expect(c.view()).toBe(held);
  });

  it("the same plain result while it is held, a change to it seen", async () => {
    const c = CompactResult.of(sample(64));
    const held = c.result();
    expect(c.result()).toBe(held);
    held.yhat[0] = 42;
    await collected();
    expect(c.result()).toBe(held);
    expect(c.result().yhat[0]).toBe(42);
  });

  it("once nothing holds it, made again as computed: a change to it is gone", async () => {
    const c = CompactResult.of(sample(64));
    const change = () => {
      const r = c.result();
      r.yhat[0] = 42;
      r.relevance![1] = 42;
    };
    change();
    await collected();
    await collected();
    const again = c.result();
    expect(again.yhat[0]).toBe(1.5);
    expect(again.relevance![1]).toBe(1e300);
    expect(again).toStrictEqual(sample(64));
  });
});

describe("a result the embedded service read from its worker's typed arrays", () => {
  /** A result as the in-process lane reads it: the worker's decoded form, read into plain data (readDecoded). */
  function readBack(n: number): { plain: Record<string, unknown>; relevance: Float64Array; weights: Float64Array } {
    // An engine's result: NaN where the text says null.
    const r = JSON.parse(JSON.stringify(sample(n)), (_key, v: unknown) => (v === null ? NaN : v)) as Record<string, unknown>;
    r.weights = (r.weights as unknown[][]).map((row) => [row[0]]);
    const decoded = decodeResult(r, 6) as Record<string, unknown>;
    const relevance = decoded.relevance as Float64Array;
    const weights = (decoded.weights as Map<string, Float64Array>).get("values")!;
    return { plain: readDecoded(decoded as never) as Record<string, unknown>, relevance, weights };
  }

  it("gives its long columns' typed arrays to the compact form, which makes the same value and text", () => {
    const { plain, relevance, weights } = readBack(200);
    expect(typedColumnOf(plain.relevance as unknown[])?.values).toBe(relevance);
    expect(typedColumnOf(plain.weights as unknown[])).toMatchObject({ values: weights, width: 1, rows: 200 });
    expect((plain.relevance as unknown[])[7]).toBeNull();
    const made = CompactResult.of(plain as unknown as Result).result();
    expect(made).toStrictEqual(plain);
    expect(JSON.stringify(made)).toBe(JSON.stringify(plain));
  });

  it("a changed value, or a changed row, is read from the plain array, not from the typed one", () => {
    const { plain } = readBack(200);
    (plain.relevance as unknown[])[3] = 9;
    (plain.weights as unknown[][])[150] = [0.5, 1];
    expect(typedColumnOf(plain.relevance as unknown[])).toBeUndefined();
    expect(typedColumnOf(plain.weights as unknown[])).toBeUndefined();
    const made = CompactResult.of(plain as unknown as Result).result() as unknown as Record<string, unknown[]>;
    expect(made.relevance[3]).toBe(9);
    expect(made.weights[150]).toEqual([0.5, 1]);
    const { plain: other } = readBack(200);
    (other.similarity as unknown[]).push(1);
    (other.weights as unknown[][])[4][0] = null;
    expect(typedColumnOf(other.similarity as unknown[])).toBeUndefined();
    expect(typedColumnOf(other.weights as unknown[])).toBeUndefined();
    expect((CompactResult.of(other as unknown as Result).result() as unknown as Record<string, unknown[][]>).weights[4]).toEqual([null]);
  });
});

describe("a result read with its long columns held (the notebook's in-process path)", () => {
  function engineData(n: number) {
    const X = Array.from({ length: n }, (_, i) => [Math.sin(i), Math.cos(i * 3), (i % 7) - 3, i / n]);
    const y = X.map((r, i) => r[0] - 2 * r[1] + r[2] * r[3] + Math.sin(i * i));
    return { data: datasetFromRows(y, X), theta: Float64Array.from(X[n - 1]) };
  }
  /** The compact form the plain path gives and the one the held path gives, from one decoded result. */
  function bothPaths(decoded: Decoded) {
    const plain = CompactResult.of(fromOwnV3Results(readDecoded(decoded)));
    const columns = fromOwnV3Columns(readDecodedColumns(decoded)) as unknown as Record<string, unknown>;
    return { plain: plain.result(), held: CompactResult.of(columns as unknown as Result), columns };
  }

  for (const n of [200, 20]) {
    it(`Grid, MaxFit and PSR (N=${n}): the same result, deep-equal with the same JSON text`, () => {
      const { data, theta } = engineData(n);
      const results = [
        engineGrid(data, theta, { seed: 3 }),
        engineMaxfit(data, theta, {}),
        enginePsr(data, theta, { threshold: [0, 0.5] }),
        enginePsr(data, theta, { threshold: [0.2] }),
      ];
      for (const [at, result] of results.entries()) {
        for (const decimals of [6, null]) {
          const { plain, held, columns } = bothPaths(decodeResult(result, decimals)!);
          expect(held.result()).toStrictEqual(plain);
          expect(JSON.stringify(held.result())).toBe(JSON.stringify(plain));
          expect(JSON.stringify(held.view())).toBe(JSON.stringify(plain));
          expect(held.firstOfRows("weights")).toEqual(plain.weights.map((row) => row[0]));
          // Long columns are held (taken as they are), short ones plain; at full precision the decoded form keeps plain arrays.
          const long = n >= 32 && decimals !== null;
          expect(columns.relevance instanceof HeldColumn).toBe(long);
          expect(columns.weights instanceof HeldColumn).toBe(long);
          if (at > 0) expect(columns.include instanceof HeldColumn).toBe(long);
        }
      }
    });
  }

  it("null (NaN), -0 and huge values read as the plain path reads them; a null in include reads as 0 there, and here", () => {
    const n = 64;
    const r = JSON.parse(JSON.stringify(sample(n)), (_key, v: unknown) => (v === null ? NaN : v)) as Record<string, unknown>;
    // The v3 layout (what the lane reads).
    const v3 = {
      analysis: "psr",
      yhat: r.yhat,
      fit: r.fit,
      adjusted_fit: r.adjusted_fit,
      agreement: r.agreement,
      asymmetry: r.asymmetry,
      outlier_influence: r.outlier_influence,
      k_fit: r.k_fit,
      insights: { relevance: r.relevance, similarity: r.similarity, info_x: r.info_x, info_theta: [0.5] },
      prediction_weights: {
        weights: (r.weights as number[][]).map((row) => [row[0]]),
        include: (r.include as number[][]).map((row, i) => [i === 9 ? NaN : row[0]]),
      },
      warnings: [],
    };
    const { plain, held, columns } = bothPaths(decodeResult(v3, 6)!);
    expect(columns.include instanceof HeldColumn).toBe(true);
    expect(plain.include![9]).toEqual([0]);
    expect(held.result()).toStrictEqual(plain);
    expect(JSON.stringify(held.result())).toBe(JSON.stringify(plain));
    expect(Object.is(held.result().info_x![0], 0)).toBe(true);
    expect(held.result().relevance![7]).toBeNull();
  });

  it("rows of different widths, and a part of a larger buffer, are read as plain arrays", () => {
    const values = new Float64Array(100).map((_, i) => i / 3);
    const rows = new Map<string, Float64Array | Int32Array>([
      ["values", values],
      ["widths", Int32Array.from({ length: 40 }, (_, i) => (i === 39 ? 22 : 2))],
    ]);
    const decoded = { a: rows, b: new Float64Array(new ArrayBuffer(8 * 80), 8, 40) } as unknown as Decoded;
    const read = readDecodedColumns(decoded) as Record<string, unknown>;
    expect(Array.isArray(read.a) && Array.isArray(read.b)).toBe(true);
    expect(read).toStrictEqual(readDecoded(decoded));
  });
});

describe("Prediction.result", () => {
  let p: Prediction;
  let wire: Result;
  beforeAll(async () => {
    const connection = await connect({ hosted: false, env: {}, envFile: false, local: { workers: 2 } });
    const X = Array.from({ length: 300 }, (_, i) => [Math.sin(i), Math.cos(i * 3), (i % 7) - 3, i / 300]);
    const y = X.map((r, i) => r[0] - 2 * r[1] + r[2] * r[3] + Math.sin(i * i));
    p = await grid({ y, X }, {}, { seed: 3 }, { progress: "none" });
    // Read again: the service's stored text, parsed (the worker's decoded copy went to the Prediction).
    wire = await connection.client.wait(p.receipt);
  });
  afterAll(async () => {
    await disconnect();
  });

  it("is deep-equal to the result read from the service's text, with the same JSON text, and is held compactly", () => {
    expect(p.result).toStrictEqual(wire);
    expect(JSON.stringify(p.result)).toBe(JSON.stringify(wire));
    expect(p.observationCount).toBe(300);
    expect(p.weights).toEqual(wire.weights.map((row) => row[0]));
    expect(p.yhat).toBe(wire.yhat[0]);
  });

  it("MaxFit, PSR and an experiment's rows: deep-equal to the results read from the service's texts, with the same JSON text", async () => {
    const connection = await connect({ hosted: false, env: {}, envFile: false, local: { workers: 2 } });
    const X = Array.from({ length: 120 }, (_, i) => [Math.sin(i), Math.cos(i * 3), (i % 5) - 2]);
    const y = X.map((r, i) => r[0] - r[1] * r[2] + Math.cos(i * i));
    const calls: AnyPrediction[] = [
      await maxfit({ y, X }, { theta: 119 }, {}, { progress: "none" }),
      await psr({ y, X }, { theta: 3 }, { threshold: [0, 0.4] }, { progress: "none" }),
      await grid({ y, X }, { theta: [1, 2, 3] }, { max_iter: 50 }, { progress: "none" }),
    ];
    const singles = calls.flatMap((c) => ("rows" in c ? c.rows : [c]));
    expect(singles).toHaveLength(5);
    for (const one of singles) {
      const text = await connection.client.wait(one.receipt);
      expect(one.result).toStrictEqual(text);
      expect(JSON.stringify(one.result)).toBe(JSON.stringify(text));
    }
  });

  it("a wait marked by readsColumns answers held columns in process (the first read), and a plain one otherwise", async () => {
    const connection = await connect({ hosted: false, env: {}, envFile: false, local: { workers: 2 } });
    const X = Array.from({ length: 100 }, (_, i) => [Math.sin(i), Math.cos(i * 3), (i % 5) - 2]);
    const y = X.map((r, i) => r[0] - r[1] * r[2] + Math.cos(i * i));
    const receipt = await connection.client.submit("psr", { y, X, theta: X[0] });
    const held = (await connection.client.wait(receipt, readsColumns({}))) as unknown as Record<string, unknown>;
    expect(held.relevance).toBeInstanceOf(HeldColumn);
    const plain = await connection.client.wait(receipt, readsColumns({}));
    expect(Array.isArray(plain.relevance)).toBe(true);
    expect(CompactResult.of(held as unknown as Result).result()).toStrictEqual(plain);
    const other = await connection.client.submit("psr", { y, X, theta: X[1] });
    expect(Array.isArray((await connection.client.wait(other, {})).relevance)).toBe(true);
  });
});
