import { describe, expect, it } from "vitest";
import {
  experimentFigure,
  figureTitle,
  impactFigure,
  outcomeVsRelevanceFigure,
  resultFigures,
  thresholdFigure,
  traceTypes,
  weightsFigure,
  type Figure,
} from "../../src/display/index.js";
import {
  QUICKSTART_ATTRIBUTES,
  QUICKSTART_LABELS,
  quickstartContext,
  quickstartExperiment,
  quickstartGrid,
  quickstartMaxfit,
  quickstartPsr,
  quickstartPsrV2,
  syntheticPsr,
} from "./fixtures.js";

/** A figure survives JSON unchanged: no NaN, no undefined, no typed arrays. */
function expectJsonSafe(f: Figure): void {
  expect(JSON.parse(JSON.stringify(f))).toStrictEqual(f);
}

const big = syntheticPsr(2500, 3);

describe("weightsFigure", () => {
  it("Grid: one bar series over the observations by label", () => {
    const f = weightsFigure(quickstartGrid(), quickstartContext());
    expect(traceTypes(f)).toEqual(["bar"]);
    expect(f.data[0].x).toEqual(QUICKSTART_LABELS);
    expect((f.data[0].y as number[])[3]).toBeCloseTo(1.1719289715149142, 12);
    expect((f.layout.xaxis as { type: string }).type).toBe("category");
    expect(figureTitle(f)).toBe("Grid: weight of each observation");
    expectJsonSafe(f);
  });

  it("PSR: one panel per threshold (small multiples on one observation axis), named by it", () => {
    const f = weightsFigure(quickstartPsr(), quickstartContext());
    expect(f.data.map((d) => d.name)).toEqual(["t=0", "t=0.2", "t=0.5", "t=0.8"]);
    expect(f.data.map((d) => d.yaxis)).toEqual(["y", "y2", "y3", "y4"]);
    expect(f.data.every((d) => d.xaxis === "x")).toBe(true);
    expect((f.layout.annotations as Array<{ text: string }>).map((a) => a.text)).toEqual([
      "weights, t=0",
      "weights, t=0.2",
      "weights, t=0.5",
      "weights, t=0.8",
    ]);
    // Panels do not overlap, top to bottom.
    const domains = ["yaxis", "yaxis2", "yaxis3", "yaxis4"].map((k) => (f.layout[k] as { domain: number[] }).domain);
    for (let i = 1; i < domains.length; i++) expect(domains[i][1]).toBeLessThan(domains[i - 1][0]);
    expect(f.layout.showlegend).toBe(false);
    expect(weightsFigure(quickstartPsr(), quickstartContext(), { calibration: 3 }).data.map((d) => d.name)).toEqual(["t=0.8"]);
    expect(() => weightsFigure(quickstartPsr(), quickstartContext(), { calibration: 4 })).toThrow(/calibration 4 is not one of 0..3/);
  });

  it("WebGL markers above the threshold, SVG markers below it", () => {
    const f = weightsFigure(big.result, big.context);
    expect(traceTypes(f)).toEqual(["scattergl", "scattergl", "scattergl", "scattergl"]);
    expect((f.data[0].x as number[]).slice(0, 3)).toEqual([0, 1, 2]);
    expect(traceTypes(weightsFigure(big.result, big.context, { webglThreshold: 10_000 }))).toEqual(["scatter", "scatter", "scatter", "scatter"]);
    expectJsonSafe(f);
  });
});

describe("outcomeVsRelevanceFigure", () => {
  it("outcome against relevance, coloured by inclusion at the best calibration", () => {
    const f = outcomeVsRelevanceFigure(quickstartMaxfit(), quickstartContext());
    expect(traceTypes(f)).toEqual(["scatter", "scatter"]);
    expect(f.data.map((d) => d.name)).toEqual(["included (2)", "excluded (5)"]);
    expect(f.data[0].text).toEqual(["Ben", "Dan"]);
    expect(f.data[0].y).toEqual([2.3, 6.7]);
    expect((f.layout.yaxis as { title: { text: string } }).title.text).toBe("Points");
    expect(figureTitle(f)).toBe("Points against relevance (relevance t=0.8)");
    expectJsonSafe(f);
  });

  it("PSR: the threshold with the largest adjusted fit unless one is chosen", () => {
    expect(figureTitle(outcomeVsRelevanceFigure(quickstartPsr(), quickstartContext()))).toBe("Points against relevance (t=0.8)");
    const f = outcomeVsRelevanceFigure(quickstartPsr(), quickstartContext(), { calibration: 0 });
    expect(f.data.map((d) => d.name)).toEqual(["included (7)", "excluded (0)"]);
  });

  it("Grid (no inclusion): one series coloured by weight", () => {
    const f = outcomeVsRelevanceFigure(quickstartGrid(), quickstartContext());
    expect(f.data).toHaveLength(1);
    expect((f.data[0].marker as { color: number[] }).color).toHaveLength(7);
  });

  it("WebGL above the threshold", () => {
    expect(traceTypes(outcomeVsRelevanceFigure(big.result, big.context))).toEqual(["scattergl", "scattergl"]);
  });

  it("needs the outcomes", () => {
    expect(() => outcomeVsRelevanceFigure(quickstartGrid(), { outcome: "Points", attributes: QUICKSTART_ATTRIBUTES })).toThrow(
      /needs the 7 outcomes sent \(context.y\)/,
    );
  });
});

describe("impactFigure", () => {
  it("Impact on Fit and Impact on Prediction by attribute name", () => {
    const result = quickstartGrid();
    const f = impactFigure(result, quickstartContext());
    expect(traceTypes(f)).toEqual(["bar", "bar"]);
    expect(f.data.map((d) => d.name)).toEqual(["Impact on Fit", "Impact on Prediction"]);
    // Top to bottom in the attributes' order (plotly draws category axes bottom-up).
    expect(f.data[0].y).toEqual([...QUICKSTART_ATTRIBUTES].reverse());
    expect(f.data[0].x).toEqual([...result.grid_insights!.impact_on_fit].reverse());
    expect(f.data[1].x).toEqual([...result.grid_insights!.impact_on_prediction].reverse());
    expect((f.layout.xaxis2 as { title: { text: string } }).title.text).toBe("Impact on Prediction (Points)");
    expectJsonSafe(f);
  });

  it("is for a Grid, with one name per attribute", () => {
    expect(() => impactFigure(quickstartPsr(), quickstartContext())).toThrow(/no Grid insights/);
    expect(() => impactFigure(quickstartGrid(), quickstartContext({ attributes: ["a", "b"] }))).toThrow(/5 attribute values but the context names 2/);
  });
});

describe("thresholdFigure", () => {
  it("yhat and fit across the thresholds, fit on the right axis", () => {
    const result = quickstartPsr();
    const f = thresholdFigure(result, quickstartContext());
    expect(f.data.map((d) => [d.name, d.yaxis])).toEqual([
      ["yhat", "y"],
      ["fit", "y2"],
    ]);
    expect(f.data[0].x).toEqual([0, 0.2, 0.5, 0.8]);
    expect(f.data[0].y).toEqual(result.yhat);
    expect(f.data[1].y).toEqual(result.fit);
    expect((f.layout.yaxis2 as { overlaying: string }).overlaying).toBe("y");
    expectJsonSafe(f);
  });

  it("a v2 result without thresholds counts calibrations; a Grid is refused", () => {
    expect(thresholdFigure(quickstartPsrV2(), quickstartContext()).data[0].x).toEqual([1, 2, 3, 4]);
    expect(thresholdFigure(quickstartPsrV2(), quickstartContext({ thresholds: [0, 0.2, 0.5, 0.8] })).data[0].x).toEqual([0, 0.2, 0.5, 0.8]);
    expect(() => thresholdFigure(quickstartGrid(), quickstartContext())).toThrow(/a Grid gives one composite prediction/);
  });
});

describe("experimentFigure", () => {
  it("yhat and fit per theta row, labelled", () => {
    const results = quickstartExperiment();
    const f = experimentFigure(results, quickstartContext({ thetaLabels: ["base", "Gus", "mid"] }));
    expect(traceTypes(f)).toEqual(["bar", "scatter"]);
    expect(f.data[0].x).toEqual(["base", "Gus", "mid"]);
    expect(f.data[0].y).toEqual(results.map((r) => r.yhat[0]));
    expect(f.data[1].y).toEqual(results.map((r) => r.fit[0]));
    expect(figureTitle(f)).toBe("MaxFit: yhat and fit per theta row");
    expect(experimentFigure(results, quickstartContext()).data[0].x).toEqual(["theta 1", "theta 2", "theta 3"]);
    expectJsonSafe(f);
  });

  it("many theta rows: unrelated rows never joined by a line; dated rows as a line, WebGL past the threshold", () => {
    const results = Array.from({ length: 30 }, () => quickstartExperiment()).flat();
    const unrelated = experimentFigure(results, quickstartContext(), { webglThreshold: 50 });
    expect(traceTypes(unrelated)).toEqual(["bar", "scattergl"]);
    expect(unrelated.data[1].mode).toBe("markers");
    const dates = results.map((_, j) => new Date(Date.UTC(2015, 0, 1 + j)).toISOString().slice(0, 10));
    const dated = experimentFigure(results, quickstartContext({ thetaLabels: dates }), { webglThreshold: 50 });
    expect(dated.data[1].mode).toBe("lines");
    expect((dated.layout.xaxis as { type: string }).type).toBe("date");
    expect(() => experimentFigure([], quickstartContext())).toThrow(/no results/);
  });
});

describe("resultFigures", () => {
  it("the charts that suit each analysis", () => {
    expect(resultFigures(quickstartGrid(), quickstartContext()).map(figureTitle)).toEqual([
      "Grid: Impact on Fit and Impact on Prediction by attribute",
      "Grid: weight of each observation",
      "Points against relevance",
    ]);
    expect(resultFigures(quickstartPsr(), quickstartContext()).map(figureTitle)).toEqual([
      "PSR: yhat and fit across thresholds",
      "PSR: weight of each observation, one panel per threshold",
      "Points against relevance (t=0.8)",
    ]);
    expect(resultFigures(quickstartMaxfit(), { outcome: "Points", attributes: QUICKSTART_ATTRIBUTES }).map(figureTitle)).toEqual([
      "MaxFit: weight of each observation",
    ]);
  });
});
