/** saveReport from predictions (one, an experiment, a list, and hand-built Reportables), and Prediction.report(path). */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, disconnect, grid, isExperiment, psr, saveReport, type ExperimentPrediction, type Prediction } from "../../src/notebook/index.js";
import { NAMES, quickstartFrame, quickstartRows, quickstartTheta } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "rbp-report-"));
let g: Prediction;
let p: Prediction;
let e: ExperimentPrediction;

beforeAll(async () => {
  await connect({ hosted: false, env: {}, envFile: false, local: { workers: 2 } });
  const rows: Array<Record<string, unknown>> = quickstartRows();
  rows.push({ Name: "Hal", Points: null, Age: 1, Experience: 1, Height: 1, Weight: 1, Score: 1 });
  g = await grid(rows, { y: "Points", theta: quickstartTheta(), title: "Quickstart <Grid>" }, { seed: 7 }, { progress: "none" });
  p = await psr(quickstartFrame(), { y: "Points", theta: quickstartTheta() }, { threshold: [0, 0.5, 0.8] }, { progress: "none" });
  const x = await psr(quickstartFrame(), { y: "Points", theta: [1, 3] }, {}, { progress: "none" });
  if (!isExperiment(x)) throw new Error("expected an experiment");
  e = x;
});
afterAll(async () => {
  await disconnect();
});

function sections(html: string): number {
  return (html.match(/<section class="rbp-section"/g) ?? []).length;
}

describe("saveReport", () => {
  it("one prediction: a self-contained page with its options, notes, tables and charts", async () => {
    const path = await saveReport(g, join(dir, "nested", "grid.html"));
    expect(path).toBe(join(dir, "nested", "grid.html"));
    const html = readFileSync(path, "utf8");
    expect(html.startsWith("<!DOCTYPE html>")).toBe(true);
    expect(html).toContain("<title>Quickstart &lt;Grid&gt;</title>");
    expect(sections(html)).toBe(1);
    expect(html).toContain("data-rbp-plotly"); // plotly.js inlined: no network needed
    expect(html).not.toMatch(/<script[^>]+src=/);
    expect(html).toContain("Note: dropped 1 row with no Points");
    expect(html).toContain("<td>seed</td><td>7</td>");
    for (const name of NAMES) expect(html).toContain(name);
    expect(html.match(/class="rbp-figure"/g)).toHaveLength(3);
  });

  it("a list of predictions and an experiment: one section each, with a table of contents", async () => {
    const path = await saveReport([g, p, e], join(dir, "all.html"));
    const html = readFileSync(path, "utf8");
    expect(sections(html)).toBe(3);
    expect(html).toContain("<nav>");
    expect(html).toContain("Grid, PSR");
    expect(html).toContain("PSR of Points for 2 circumstances");
    expect(html).toContain("<details><summary>Ben");
    expect((html.match(/data-rbp-plotly/g) ?? []).length).toBe(1);
  });

  it("Prediction.report(path) and hand-built Reportables", async () => {
    const path = await p.report(join(dir, "psr.html"));
    expect(readFileSync(path, "utf8")).toContain("PSR: yhat and fit across thresholds");
    const mixed = await saveReport([p.toReportable(), e], join(dir, "mixed.html"));
    expect(sections(readFileSync(mixed, "utf8"))).toBe(2);
  });

  it("a plain-arrays call keeps the caller's X: X changed after the call makes its report an error (code data), not a report of other data", async () => {
    const X = [
      [1, 2],
      [2, 1],
      [3, 5],
      [4, 2],
      [5, 7],
      [6, 3],
      [7, 8],
    ];
    const y = [3, 4, 8, 7, 12, 10, 15];
    const q = await psr({ y, X }, { theta: "last" }, { threshold: 0 }, { progress: "none" });
    expect(q.request?.X).toBe(X);
    await q.report(join(dir, "kept.html"));
    X[3][0] = 40;
    const failure = await q.report(join(dir, "changed.html")).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toMatchObject({ name: "PredictionError", code: "data", field: "X" });
    expect(String((failure as Error).message)).toContain("X was changed after the call");
    await expect(saveReport([p, q], join(dir, "changed2.html"))).rejects.toThrow(/X was changed after the call/);
    // As it was: the report is written again.
    X[3][0] = 4;
    expect(readFileSync(await q.report(join(dir, "kept2.html")), "utf8")).toContain("<!DOCTYPE html>");
  });
});
