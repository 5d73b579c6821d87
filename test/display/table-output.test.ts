/**
 * The tables' whole output, text and HTML, pinned as snapshots (test/display/__snapshots__): every
 * caption, header, cell, note and footer, for each analysis and the options that change them. A
 * change in what a user sees fails here and is reviewed in the snapshot's diff (vitest -u to accept).
 */
import { describe, expect, it } from "vitest";
import { experimentLabels, experimentTable, observationTable, optionsTable, summaryTable } from "../../src/display/tables.js";
import type { Result } from "../../src/api/result.js";
import { quickstartContext, quickstartExperiment, quickstartGrid, quickstartMaxfit, quickstartPsr, quickstartPsrV2 } from "./fixtures.js";

const plain = { style: false };

describe("summaryTable", () => {
  it.each([
    ["PSR", quickstartPsr],
    ["PSR v2", quickstartPsrV2],
    ["MaxFit", quickstartMaxfit],
    ["Grid", quickstartGrid],
  ])("%s: text and HTML", (_name, make) => {
    const t = summaryTable(make(), quickstartContext(), plain);
    expect(t.text).toMatchSnapshot();
    expect(t.html).toMatchSnapshot();
    expect(t.html).not.toContain("<style>");
    expect(summaryTable(make(), quickstartContext()).html.startsWith("<style>")).toBe(true);
  });

  it("without k, n, censors or thresholds; with notes and a title", () => {
    const r = quickstartPsr() as Result & Record<string, unknown>;
    const bare = { ...r, k: undefined, n: undefined, censor_type: undefined, thresholds: undefined, threshold: undefined };
    const t = summaryTable(bare as Result, quickstartContext({ thresholds: undefined }), plain);
    expect(t.text).toMatchSnapshot();
    const noted = { ...r, yhat_linear: 1.25, info_theta: 0.5, warnings: ["<careful>"] } as Result;
    const n = summaryTable(noted, quickstartContext(), { ...plain, title: "Mine" });
    expect(n.text).toMatchSnapshot();
    expect(n.html).toMatchSnapshot();
    const none = { ...r, n: undefined, yhat_linear: null, info_theta: null, warnings: [] } as unknown as Result;
    expect(summaryTable(none, quickstartContext(), plain).html).not.toContain("rbp-notes");
  });
});

describe("observationTable", () => {
  it("every calibration, one chosen, sorted, cut short: text and HTML", () => {
    const r = quickstartPsr();
    const c = quickstartContext();
    expect(observationTable(r, c, plain).text).toMatchSnapshot();
    const one = observationTable(r, c, { ...plain, calibration: 1, sort: "relevance", maxRows: 3 });
    expect(one.text).toMatchSnapshot();
    expect(one.html).toMatchSnapshot();
    expect(observationTable(quickstartGrid(), quickstartContext({ y: [1, 2] }), { ...plain, sort: "weight" }).text).toMatchSnapshot();
    expect(observationTable(r, c).html.startsWith("<style>")).toBe(true);
  });

  it("a calibration that is not one of 0..T-1 is refused", () => {
    const r = quickstartPsr();
    const c = quickstartContext();
    expect(() => observationTable(r, c, { calibration: 3 })).not.toThrow();
    expect(() => observationTable(r, c, { calibration: 0 })).not.toThrow();
    for (const calibration of [-1, 4, 1.5]) {
      expect(() => observationTable(r, c, { calibration })).toThrow(`observationTable: calibration ${calibration} is not one of 0..3`);
    }
  });
});

describe("experimentTable, experimentLabels, optionsTable", () => {
  it("an experiment: labels, default and chosen calibration, a title", () => {
    const results = quickstartExperiment();
    expect(experimentTable(results, quickstartContext(), plain).text).toMatchSnapshot();
    const chosen = experimentTable(results, quickstartContext({ thetaLabels: ["a", "b", "c"] }), { ...plain, calibration: 0, title: "Three" });
    expect(chosen.text).toMatchSnapshot();
    expect(chosen.html).toMatchSnapshot();
    expect(experimentTable(results, quickstartContext()).html.startsWith("<style>")).toBe(true);
    expect(experimentTable([], quickstartContext(), plain).text).toBe(
      "Prediction of Points for 0 circumstances\ntheta  threshold  yhat (Points)  fit  adjusted fit  n\n-----  ---------  -------------  ---  ------------  -",
    );
    const grids = experimentTable([quickstartGrid(), quickstartGrid()], quickstartContext(), plain);
    expect(grids.text).toMatchSnapshot();
  });

  it("labels: the context's when they match the count, else theta 1..M", () => {
    expect(experimentLabels(2, quickstartContext({ thetaLabels: ["x", "y"] }))).toEqual(["x", "y"]);
    expect(experimentLabels(3, quickstartContext({ thetaLabels: ["x", "y"] }))).toEqual(["theta 1", "theta 2", "theta 3"]);
    expect(experimentLabels(2, quickstartContext())).toEqual(["theta 1", "theta 2"]);
  });

  it("options: a row each (strings as they are, the rest as JSON), or a line saying the defaults", () => {
    const t = optionsTable({ censor_type: "both", threshold: [0, 0.5], gone: undefined }, "Settings", false);
    expect(t.text).toBe("Settings\noption         value\n-----------  -------\ncensor_type     both\nthreshold    [0,0.5]");
    expect(t.html).toMatchSnapshot();
    expect(optionsTable({ a: 1 }).html.startsWith("<style>")).toBe(true);
    expect(optionsTable({ a: 1 }).text.split("\n")[0]).toBe("Options");
    expect(optionsTable({}, "Settings")).toEqual({ html: '<p class="rbp-notes">Settings: the defaults</p>', text: "Settings: the defaults" });
    expect(optionsTable({ x: undefined }).text).toBe("Options: the defaults");
  });
});
