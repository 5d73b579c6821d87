/**
 * Frames out: p.toFrame(), p.impactFrame(), e.toFrame() and toCSV() on predictions from the
 * embedded service; the input's row labels (a danfo index, or an `index` column of plain objects)
 * come back as the output's labels, as a danfo DataFrame's index (danfojs 1.1.2) or the first
 * column of plain column objects.
 */
import { spawnSync } from "node:child_process";
import { readFile, mkdtemp, rm } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as dfd from "danfojs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, disconnect, grid, psr, useDataFrames, type ExperimentPrediction } from "../../src/notebook/index.js";
import { frameCsv, outputFrame, sessionDataFrame, toRequest } from "../../src/frame/index.js";
import { NAMES, PEOPLE, quickstartFrame, quickstartRows, quickstartTheta } from "../notebook/helpers.js";

const quiet = { progress: "none" as const };
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "rbp-frames-"));
  await connect({ hosted: false, env: {}, envFile: false, local: { workers: 2 } });
});
afterAll(async () => {
  useDataFrames("auto");
  await disconnect();
  await rm(dir, { recursive: true, force: true });
});

describe("with danfojs 1.1.2", { timeout: 60_000 }, () => {
  it("p.toFrame() is a DataFrame indexed by the input's index, with the prediction's numbers", async () => {
    useDataFrames(dfd);
    const p = await grid(quickstartFrame(), { y: "Points", theta: quickstartTheta() }, {}, quiet);
    const df = p.toFrame() as dfd.DataFrame;
    expect(df).toBeInstanceOf(dfd.DataFrame);
    expect(df.index).toEqual(PEOPLE);
    expect(df.columns).toEqual(["outcome", "relevance", "similarity", "informativeness", "weight", "included"]);
    expect(df.column("weight").values).toEqual(p.weights);
    expect(df.column("relevance").values).toEqual(p.relevance);
    expect(df.column("outcome").values).toEqual(quickstartRows().map((r) => r.Points));
    // The round trip: the frame out, read back in, keeps its labels.
    expect(toRequest(df, { y: "weight", X: ["relevance"] }).rowLabels).toEqual(PEOPLE);
  });

  it("is found from the input frame's class when nobody said useDataFrames", async () => {
    useDataFrames("auto");
    // Reading a danfo frame (any call) is what makes danfo known to the session.
    const p = await grid(quickstartFrame(), { y: "Points" }, {}, quiet);
    expect(sessionDataFrame()).toBe(dfd.DataFrame);
    const impact = p.impactFrame() as dfd.DataFrame;
    expect(impact).toBeInstanceOf(dfd.DataFrame);
    expect(impact.index).toEqual(NAMES);
    expect(impact.column("impact_on_fit").values).toEqual(p.impact!.map((a) => a.impactOnFit));
  });

  it("e.toFrame() is indexed by the theta rows' labels", async () => {
    useDataFrames(dfd);
    const theta = new dfd.DataFrame(
      { Age: [30, 40], Experience: [5, 10], Height: [180, 170], Weight: [80, 70], Score: [5, 6] },
      { index: ["plan A", "plan B"] },
    );
    const e = (await psr(quickstartFrame(), { y: "Points", theta }, { threshold: [0, 0.5] }, quiet)) as unknown as ExperimentPrediction;
    const df = e.toFrame() as dfd.DataFrame;
    expect(df.index).toEqual(["plan A", "plan B"]);
    expect(df.column("yhat").values).toEqual(e.rows.map((p) => p.best.yhat));
    expect(df.column("threshold").values).toEqual(e.rows.map((p) => p.best.threshold));
  });
});

describe("with plain objects", { timeout: 60_000 }, () => {
  it("row objects with an index column come back as columns whose first is that index", async () => {
    useDataFrames(null);
    const rows = quickstartRows(); // { Name, Points, Age, ... }
    const p = await psr(rows, { y: "Points", index: "Name", theta: quickstartTheta() }, { threshold: 0 }, quiet);
    expect(p.rowLabels).toEqual(PEOPLE);
    const out = p.toFrame() as Record<string, unknown[]>;
    expect(Object.keys(out)[0]).toBe("Name");
    expect(out.Name).toEqual(PEOPLE);
    expect(out.weight).toEqual(p.weights);
    expect(out.included).toEqual(p.include);
    // And back in: the same labels.
    expect(toRequest(out as never, { y: "outcome", X: ["relevance", "weight"], index: "Name" }).rowLabels).toEqual(PEOPLE);
  });

  it("theta rows given as data with the index column are labelled by it", async () => {
    useDataFrames(null);
    const theta = [
      { Name: "Zoe", ...quickstartTheta() },
      { Name: "Yan", ...quickstartTheta(), Age: 40 },
    ];
    const e = (await psr(quickstartRows(), { y: "Points", index: "Name", theta }, { threshold: 0.5 }, quiet)) as ExperimentPrediction;
    expect(e.labels).toEqual(["Zoe", "Yan"]);
    const out = e.toFrame() as Record<string, unknown[]>;
    expect(out.Name).toEqual(["Zoe", "Yan"]);
    expect(out.yhat).toEqual(e.yhat);
  });

  it('as: "columns" gives plain objects even with danfo loaded; as: "danfo" without it is an error', () => {
    const frame = { indexName: "date", index: ["2015-01-01"], columns: ["y"], data: { y: [1.5] } };
    useDataFrames(dfd);
    expect(outputFrame(frame, { as: "columns" })).toEqual({ date: ["2015-01-01"], y: [1.5] });
    useDataFrames(null);
    expect(() => outputFrame(frame, { as: "danfo" })).toThrow(/danfo is not loaded/);
  });

  it("the index column is not an attribute, and a missing label is an error naming the row", () => {
    const rows = [
      { date: "d1", y: 1, x: 2 },
      { date: null, y: 2, x: 3 },
    ];
    expect(() => toRequest(rows, { y: "y", index: "date" })).toThrow(/no label at row 1/);
    expect(toRequest([{ date: "d1", y: 1, x: 2 }], { y: "y", index: "date" }).attributes).toEqual(["x"]);
    expect(() => toRequest(rows, { y: "y", index: "day" })).toThrow(/index column "day" is not in the data/);
  });
});

describe("toCSV", { timeout: 60_000 }, () => {
  it("writes the labels first, full precision, empty cells for missing values, quoted where needed", async () => {
    useDataFrames(null);
    const p = await psr(quickstartRows(), { y: "Points", index: "Name", theta: quickstartTheta() }, { threshold: 0.5 }, quiet);
    const path = await p.toCSV(join(dir, "obs.csv"));
    const lines = (await readFile(path, "utf8")).trim().split("\r\n");
    expect(lines[0]).toBe("Name,outcome,relevance,similarity,informativeness,weight,included");
    expect(lines).toHaveLength(PEOPLE.length + 1);
    const first = lines[1].split(",");
    expect(first[0]).toBe("Ann");
    expect(Number(first[5])).toBe(p.weights[0]);
    expect(frameCsv({ indexName: "k", index: ['a "b", c'], columns: ["v"], data: { v: [null] } })).toBe('k,v\r\n"a ""b"", c",\r\n');
  });
});

describe("toCSV and formula injection (OWASP: CSV injection)", { timeout: 60_000 }, () => {
  const HOSTILE = ['=HYPERLINK("http://x")', "+1+1", "-2+3", "@SUM(A1)", "\tcmd", "\r=1", "Cat", "-1.5", "+3e2"];

  it("a prediction's labels that a spreadsheet would run are written as text with a leading '; numbers are never altered", async () => {
    useDataFrames(null);
    const rows = quickstartRows().map((r, i) => ({ ...r, Name: HOSTILE[i] }));
    const p = await psr(rows, { y: "Points", index: "Name", theta: quickstartTheta() }, { threshold: 0.5 }, quiet);
    const path = await p.toCSV(join(dir, "hostile.csv"));
    const text = await readFile(path, "utf8");
    const lines = text.split("\r\n").slice(1, 8);
    const firstCells = [`"'=HYPERLINK(""http://x"")"`, "'+1+1", "'-2+3", "'@SUM(A1)", "'\tcmd", `"'\r=1"`, "Cat"];
    firstCells.forEach((cell, i) => expect(lines[i].startsWith(`${cell},`), `row ${i}: ${JSON.stringify(lines[i])}`).toBe(true));
    // The numbers as they are: negative relevances keep their sign.
    const first = text.split("\r\n")[2].split(",");
    expect(Number(first[2])).toBe(p.relevance![1]);
    expect(text).toMatch(/,-\d/);
  });

  it("text that is a plain decimal number, and every number, is left as it is", () => {
    const csv = frameCsv({ indexName: "k", index: ["-1.5", "+3e2", "-x"], columns: ["v", "=w"], data: { v: [-1.5, -2e-7, -0], "=w": ["-4", "=1", "-"] } });
    expect(csv).toBe("k,v,'=w\r\n-1.5,-1.5,-4\r\n+3e2,-2e-7,'=1\r\n'-x,0,'-\r\n");
  });
});

describe("finding danfo in a fresh Node process (the built package, as a tslab kernel loads it)", { timeout: 60_000 }, () => {
  const out = new URL("../../dist/frame/out.js", import.meta.url).href;
  const repo = fileURLToPath(new URL("../..", import.meta.url));
  const run = (script: string) => spawnSync(process.execPath, ["-e", script], { cwd: repo, encoding: "utf8" });
  const frame = `{ indexName: "date", index: ["2015-01-01", "2015-01-02"], columns: ["y"], data: { y: [1, null] } }`;

  it("a danfo a CommonJS cell required is found in the require cache: a DataFrame indexed by the labels", () => {
    const r = run(
      `const dfd = require("danfojs"); import(${JSON.stringify(out)}).then((m) => { const f = m.outputFrame(${frame}); console.log(JSON.stringify([f instanceof dfd.DataFrame, f.index])); });`,
    );
    expect(r.stderr).toBe("");
    expect(JSON.parse(r.stdout)).toEqual([true, ["2015-01-01", "2015-01-02"]]);
  });

  it("without danfo loaded, plain column objects (danfo is never loaded by the package)", () => {
    const r = run(
      `import(${JSON.stringify(out)}).then((m) => { const f = m.outputFrame(${frame}); const loaded = Object.keys(require.cache).some((k) => k.includes("danfojs")); console.log(JSON.stringify([f, loaded])); });`,
    );
    expect(r.stderr).toBe("");
    expect(JSON.parse(r.stdout)).toEqual([{ date: ["2015-01-01", "2015-01-02"], y: [1, null] }, false]);
  });
});
