import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { plotlyMinifiedSource, reportHtml, saveReport, type Reportable } from "../../src/display/index.js";
import { quickstartContext, quickstartExperiment, quickstartGrid, quickstartPsr } from "./fixtures.js";

const dir = mkdtempSync(join(tmpdir(), "rbp-report-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const grid: Reportable = {
  title: "Grid <on> the quickstart",
  result: quickstartGrid(),
  context: quickstartContext({ analysis: "grid" }),
  options: { threshold: [0, 0.2, 0.5, 0.8], censor_type: "both" },
  notes: ["dropped 1 row with no Points"],
};
const psr: Reportable = { title: "PSR", result: quickstartPsr(), context: quickstartContext() };
const experiment: Reportable = { title: "Experiment", result: quickstartExperiment(), context: quickstartContext({ thetaLabels: ["base", "Gus", "mid"] }) };

describe("reportHtml", () => {
  const html = reportHtml([grid, psr, experiment], { title: "Quickstart", date: new Date("2026-11-22T10:20:30Z") });

  it("is one page with plotly.js inlined once and no external script or stylesheet", () => {
    expect(html.startsWith("<!DOCTYPE html>")).toBe(true);
    expect(html.match(/data-rbp-plotly="/g)).toHaveLength(1);
    expect(html).not.toMatch(/<script[^>]*\ssrc=/);
    expect(html).not.toMatch(/<link[^>]*stylesheet/);
  });

  it("has a header with the date, the analyses and the predictions", () => {
    expect(html).toContain("<title>Quickstart</title>");
    expect(html).toContain("Generated 2026-11-22 10:20:30 UTC by rbp-notebook · Grid, PSR, MaxFit · 3 predictions");
    expect(html).toContain('<a href="#prediction-1">Grid &lt;on&gt; the quickstart</a>');
  });

  it("shows each prediction's options, notes, tables and charts", () => {
    expect(html).toContain("Note: dropped 1 row with no Points");
    expect(html).toContain("<td>censor_type</td><td>both</td>");
    expect(html).toContain("Grid prediction of Points");
    expect(html).toContain("PSR prediction of Points");
    expect(html).toContain("Observations (N = 7)");
    // Grid: impact, weights, outcome/relevance; PSR: thresholds, weights, outcome/relevance, explore; experiment: one.
    expect(html.match(/class="rbp-figure"/g)).toHaveLength(8);
    expect(html).toContain('data-rbp-figure="MaxFit: yhat and fit per theta row"');
    expect(html).toContain("<summary>base: yhat -19.0695</summary>");
    // Each figure's script draws without waiting (the page loads plotly.js first).
    expect(html.indexOf("data-rbp-plotly")).toBeLessThan(html.indexOf('class="rbp-figure"'));
  });

  it("one prediction: the H2 says what the section holds, not the H1 again; the Grid's n is explained", () => {
    const one = reportHtml({ title: "Quickstart: Grid on the 7 x 5 example", result: quickstartGrid(), context: quickstartContext({ analysis: "grid" }) });
    const headings = one.match(/<h[12]>[^<]*<\/h[12]>/g);
    expect(headings).toEqual([
      "<h1>Quickstart: Grid on the 7 x 5 example</h1>",
      "<h2>Grid prediction of Points: options, summary, charts and observations</h2>",
    ]);
    expect(one).toContain("<td>all 7</td>");
    expect(one).toContain("n: observations kept. A Grid composite keeps all of them");
  });

  it("refuses an empty list", () => {
    expect(() => reportHtml([])).toThrow(/nothing to report/);
  });
});

describe("where a report gets plotly.js", () => {
  it("inline by default: the page stands alone, about 2 MB", () => {
    const html = reportHtml(grid, { date: new Date(0) });
    expect(html.match(/data-rbp-plotly="/g)).toHaveLength(1);
    expect(html.length).toBeGreaterThan(1_500_000);
    expect(html.length).toBeLessThan(2_500_000);
    expect(html).toMatch(/plotly\.js \d+\.\d+\.\d+ inlined/);
  });

  it('"file": plotly.js written beside the report, the report small', async () => {
    const path = await saveReport(grid, join(dir, "linked", "grid.html"), { plotly: "file" });
    const html = readFileSync(path, "utf8");
    expect(html.length).toBeLessThan(300_000);
    const src = /<script type="text\/javascript" src="(plotly-[\d.]+\.min\.js)"/.exec(html);
    expect(src).not.toBeNull();
    expect(readFileSync(join(dir, "linked", src![1]), "utf8")).toBe(plotlyMinifiedSource());
    expect(html).not.toMatch(/data-rbp-plotly="/);
    expect(html).toContain(`from ${src![1]} beside this file`);
  });

  it("a URL: loaded from there, nothing written beside; a javascript: URL is refused", () => {
    const html = reportHtml(grid, { plotly: "https://cdn.plot.ly/plotly-3.7.0.min.js" });
    expect(html).toContain('<script type="text/javascript" src="https://cdn.plot.ly/plotly-3.7.0.min.js"');
    expect(html.length).toBeLessThan(300_000);
    expect(() => reportHtml(grid, { plotly: "javascript:alert(1)" })).toThrow(/"inline", "file" or a URL/);
    expect(() => reportHtml(grid, { plotly: "" })).toThrow(/"inline", "file" or a URL/);
  });
});

describe("saveReport", () => {
  it("writes one HTML file (folders created) and returns its absolute path", async () => {
    const path = await saveReport(grid, join(dir, "nested", "grid.html"));
    expect(path).toBe(join(dir, "nested", "grid.html"));
    const text = readFileSync(path, "utf8");
    expect(text).toContain("<title>Grid &lt;on&gt; the quickstart</title>");
    expect(text.match(/class="rbp-figure"/g)).toHaveLength(3);
  });
});
