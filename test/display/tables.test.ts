import { describe, expect, it } from "vitest";
import { formatNumber, observationTable, optionsTable, summaryTable, experimentTable } from "../../src/display/index.js";
import { quickstartContext, quickstartExperiment, quickstartGrid, quickstartMaxfit, quickstartPsr, quickstartPsrV2, syntheticPsr } from "./fixtures.js";

/** The rows of an HTML table as arrays of cell texts (header row first). */
function cells(html: string): string[][] {
  const rows = [...html.matchAll(/<tr[^>]*>(.*?)<\/tr>/g)].map((m) => [...m[1].matchAll(/<t[hd][^>]*>(.*?)<\/t[hd]>/g)].map((c) => c[1]));
  return rows;
}

describe("formatNumber", () => {
  it("six significant digits, integers as they are, exponents for extremes, a dash for undefined", () => {
    expect(formatNumber(3.285239701887985)).toBe("3.28524");
    expect(formatNumber(-19.06949113153879)).toBe("-19.0695");
    expect(formatNumber(5)).toBe("5");
    expect(formatNumber(0.5)).toBe("0.5");
    expect(formatNumber(0.0000123456)).toBe("1.235e-5");
    expect(formatNumber(null)).toBe("—");
    expect(formatNumber(NaN)).toBe("—");
  });
});

describe("summaryTable", () => {
  it("PSR: one row per threshold with censor, yhat, fit, adjusted fit, K and n", () => {
    const t = summaryTable(quickstartPsr(), quickstartContext());
    const rows = cells(t.html);
    expect(rows[0]).toEqual(["threshold", "censor", "yhat (Points)", "fit", "adjusted fit", "K", "n"]);
    expect(rows.slice(1)).toEqual([
      ["0", "relevance", "7.14517", "0.00330791", "0.0165395", "5", "7"],
      ["0.2", "relevance", "-12.6655", "0.122455", "1.46473", "5", expect.any(String)],
      ["0.5", "relevance", "-15.9469", "0.170095", "2.05164", "5", expect.any(String)],
      ["0.8", "relevance", "-19.0695", "0.183713", "2.11883", "5", "2"],
    ]);
    expect(t.html).toContain("PSR prediction of Points: N = 7 observations, K = 5 attributes (Age, Experience, Height, Weight, Score)");
    expect(t.html).toContain("linear regression prediction: 7.14517");
    expect(t.text).toContain("yhat (Points)");
    expect(t.text).toContain("-19.0695");
  });

  it("Grid: one composite row, the thresholds and censors evaluated, K, n = all, explained", () => {
    const rows = cells(summaryTable(quickstartGrid(), quickstartContext()).html);
    expect(rows[1]).toEqual(["grid of 0, 0.2, 0.5, 0.8", "relevance, similarity", "3.28524", "0.0876902", "1.05774", "5", "all 7"]);
  });

  it("MaxFit: the winner's threshold and censor", () => {
    const rows = cells(summaryTable(quickstartMaxfit(), quickstartContext()).html);
    expect(rows[1]).toEqual(["0.8", "relevance", "-19.0695", "0.183713", "2.11883", "5", "2"]);
  });

  it("a v2 result takes its thresholds and analysis from the context", () => {
    const v2 = quickstartPsrV2();
    expect(v2.thresholds).toBeUndefined();
    const without = cells(summaryTable(v2, quickstartContext()).html);
    expect(without[1][0]).toBe("—");
    const rows = cells(summaryTable(v2, quickstartContext({ thresholds: [0, 0.2, 0.5, 0.8], analysis: "psr" })).html);
    expect(rows.map((r) => r[0]).slice(1)).toEqual(["0", "0.2", "0.5", "0.8"]);
  });

  it("escapes names", () => {
    const t = summaryTable(quickstartGrid(), quickstartContext({ outcome: "<script>alert(1)</script>", attributes: ["a&b", "c", "d", "e", '"f"'] }));
    expect(t.html).not.toContain("<script>");
    expect(t.html).toContain("yhat (&lt;script&gt;alert(1)&lt;/script&gt;)");
    expect(t.html).toContain("a&amp;b");
    expect(t.html).toContain("&quot;f&quot;");
  });

  it("includes its CSS unless asked not to", () => {
    expect(summaryTable(quickstartGrid(), quickstartContext()).html.startsWith("<style>")).toBe(true);
    expect(summaryTable(quickstartGrid(), quickstartContext(), { style: false }).html).not.toContain("<style>");
  });
});

describe("observationTable", () => {
  it("relevance, similarity, informativeness, weight and include per observation, labelled by row", () => {
    const rows = cells(observationTable(quickstartMaxfit(), quickstartContext()).html);
    expect(rows[0]).toEqual(["observation", "Points", "relevance", "similarity", "informativeness", "weight (relevance t=0.8)", "include (relevance t=0.8)"]);
    expect(rows[1]).toEqual(["Ann", "18.8", "-3.70579", "-26.1206", "2.15959", "-0.667564", "no"]);
    expect(rows[2]).toEqual(["Ben", "2.3", "5.60611", "-18.1173", "4.77691", "1.54788", "yes"]);
    expect(rows).toHaveLength(8);
  });

  it("marks excluded rows when one calibration is shown", () => {
    const html = observationTable(quickstartMaxfit(), quickstartContext()).html;
    expect(html.match(/class="rbp-excluded"/g)).toHaveLength(5);
  });

  it("PSR: weight and include for every threshold", () => {
    const header = cells(observationTable(quickstartPsr(), quickstartContext()).html)[0];
    expect(header.filter((h) => h.startsWith("weight"))).toEqual(["weight (t=0)", "weight (t=0.2)", "weight (t=0.5)", "weight (t=0.8)"]);
    const one = cells(observationTable(quickstartPsr(), quickstartContext(), { calibration: 2 }).html)[0];
    expect(one.slice(-2)).toEqual(["weight (t=0.5)", "include (t=0.5)"]);
  });

  it("Grid: no include column", () => {
    const header = cells(observationTable(quickstartGrid(), quickstartContext()).html)[0];
    expect(header).toEqual(["observation", "Points", "relevance", "similarity", "informativeness", "weight"]);
  });

  it("truncates large N with a count of the rows left out", () => {
    const { result, context } = syntheticPsr(9050, 3);
    const t = observationTable(result, context, { maxRows: 50 });
    const rows = cells(t.html);
    expect(rows).toHaveLength(1 + 50 + 1);
    expect(t.html).toContain("… and 9,000 more rows");
    expect(t.html).toContain("Observations (N = 9,050)");
    expect(t.text).toContain("… and 9,000 more rows");
    expect(observationTable(result, context, { maxRows: 9049 }).html).toContain("… and 1 more row<");
    expect(observationTable(result, context, { maxRows: 10000 }).html).not.toContain("more row");
  });

  it("sorts by relevance when asked", () => {
    const rows = cells(observationTable(quickstartMaxfit(), quickstartContext(), { sort: "relevance" }).html);
    expect(rows.slice(1).map((r) => r[0])).toEqual(["Dan", "Ben", "Eve", "Fay", "Gus", "Ann", "Cat"]);
  });

  it("sorts by |weight| descending when asked, not by the signed weight; ties keep their order", () => {
    const result = quickstartGrid();
    const context = quickstartContext();
    const t = result.weights[0].length - 1;
    const w = result.weights.map((row) => row[t]!);
    const byMagnitude = w.map((_, i) => i).sort((a, b) => Math.abs(w[b]) - Math.abs(w[a]) || a - b);
    const bySigned = w.map((_, i) => i).sort((a, b) => w[b] - w[a] || a - b);
    // the fixture is one where the two orders differ (a negative weight outweighs a positive one)
    expect(byMagnitude).not.toEqual(bySigned);
    const table = observationTable(result, context, { sort: "weight" });
    const names = context.rowLabels!;
    expect(byMagnitude).toEqual([3, 2, 1, 0, 6, 4, 5]);
    expect(
      cells(table.html)
        .slice(1)
        .map((r) => r[0]),
    ).toEqual(byMagnitude.map((i) => names[i]));
    expect(table.html).toContain("by |weight| descending");
  });

  it("without y or labels: positions and no outcome column", () => {
    const rows = cells(observationTable(quickstartGrid(), { outcome: "Points", attributes: ["a", "b", "c", "d", "e"] }).html);
    expect(rows[0][1]).toBe("relevance");
    expect(rows[1][0]).toBe("0");
  });

  it("escapes row labels", () => {
    const labels = ["<b>x</b>", "b", "c", "d", "e", "f", "g"];
    const html = observationTable(quickstartGrid(), quickstartContext({ rowLabels: labels })).html;
    expect(html).toContain("&lt;b&gt;x&lt;/b&gt;");
    expect(html).not.toContain("<b>x</b>");
  });
});

describe("experimentTable and optionsTable", () => {
  it("one row per theta row", () => {
    const rows = cells(experimentTable(quickstartExperiment(), quickstartContext({ thetaLabels: ["base", "Gus", "mid"] })).html);
    expect(rows.map((r) => r[0])).toEqual(["theta", "base", "Gus", "mid"]);
    expect(rows[1][2]).toBe("-19.0695");
  });

  it("options as given", () => {
    const rows = cells(optionsTable({ threshold: [0, 0.5], censor_type: "both", unused: undefined }).html);
    expect(rows).toEqual([
      ["option", "value"],
      ["threshold", "[0,0.5]"],
      ["censor_type", "both"],
    ]);
    expect(optionsTable({}).html).toContain("the defaults");
  });
});
