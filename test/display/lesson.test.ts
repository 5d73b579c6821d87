/**
 * What the teaching notebooks show beside predictions: valuesTable, textBlock and checkAnswer
 * (src/display/lesson.ts), and the explore figure's steps (src/display/figures.ts exploreFigure).
 */
import { describe, expect, it } from "vitest";
import { checkAnswer, exploreFigure, outcomeVsRelevanceFigure, textBlock, valuesTable, weightsFigure } from "../../src/display/index.js";
import { quickstartContext, quickstartGrid, quickstartPsr, syntheticPsr } from "./fixtures.js";

describe("valuesTable and textBlock", () => {
  it("format numbers, booleans and missing values, and escape text", () => {
    const t = valuesTable(
      "Forecasts <b>",
      ["forecaster", "yhat", "ok"],
      [
        ["Grid", 27.123456789, true],
        ["<mean>", null, false],
      ],
      { digits: 4, note: "a note" },
    );
    expect(t.text).toBe("Forecasts <b>\nforecaster   yhat   ok\n----------  -----  ---\nGrid        27.12  yes\n<mean>          —   no\na note");
    expect(t.html).toContain("<caption>Forecasts &lt;b&gt;</caption>");
    expect(t.html).toContain("<td>&lt;mean&gt;</td>");
    expect(t.html).not.toContain("<mean>");
  });

  it("format like console.log, escaped", () => {
    const b = textBlock("3 cars; the first:", { name: "<x>" });
    expect(b.text).toBe("3 cars; the first: { name: '<x>' }");
    expect(b.html).toBe(`<pre class="rbp-text" style="margin:.3em 0;white-space:pre-wrap">3 cars; the first: { name: &#39;&lt;x&gt;&#39; }</pre>`);
  });
});

describe("checkAnswer", () => {
  const hint = { hint: "add them up" };

  it("says right within the tolerance, with the explanation", () => {
    const v = checkAnswer("Exercise 1", 1.0000004, 1, { ...hint, explain: "Well done." });
    expect(v.right).toBe(true);
    expect(v.text).toBe("✓ Exercise 1: right. Well done.");
    expect(v.html).toContain('data-rbp-check="right"');
    expect(checkAnswer("E", [1, "a", true], [1, "a", true], hint).right).toBe(true);
  });

  it("says not yet, why and the hint, for every kind of wrong answer, and never throws", () => {
    const cases: Array<[unknown, unknown, RegExp]> = [
      [undefined, 1, /There is no answer yet\. Hint: add them up$/],
      [null, 1, /There is no answer yet/],
      ["1", 1, /Expected a number, got string/],
      [NaN, 1, /The answer is NaN/],
      [1.1, 1, /1\.1 is not the expected value/],
      [[1, 2], [1, 3], /2 at position 1 is not the expected value/],
      [[1], [1, 2], /Expected 2 values, got 1/],
      [3, [3], /Expected a list, got number/],
      ["similarity", "relevance", /"similarity" is not the expected answer/],
      [1, { a: 1 }, /Cannot compare the answer with object/],
    ];
    for (const [answer, expected, why] of cases) {
      const v = checkAnswer("E", answer, expected, hint);
      expect(v.right, JSON.stringify(answer)).toBe(false);
      expect(v.text).toMatch(why);
      expect(v.html).toContain('data-rbp-check="not-yet"');
    }
    const hostile = new Proxy([1], {
      get: (t, k) =>
        k === "0"
          ? (() => {
              throw new Error("boom");
            })()
          : Reflect.get(t, k),
    });
    expect(checkAnswer("E", hostile, [1], hint).text).toMatch(/could not be read \(boom\)/);
  });

  it("compares with a relative tolerance for large numbers", () => {
    expect(checkAnswer("E", 1_000_000.5, 1_000_000, hint).right).toBe(true);
    expect(checkAnswer("E", 1_000_002, 1_000_000, hint).right).toBe(false);
    expect(checkAnswer("E", 20.3791, 20.37914, { ...hint, tolerance: 1e-9 }).right).toBe(false);
  });
});

describe("the relevance cut and date axes", () => {
  it("draws the cut on a relevance chart of a censored calibration, not at threshold 0 or for a Grid", () => {
    const psr = quickstartPsr();
    const f = outcomeVsRelevanceFigure(psr, quickstartContext(), { calibration: 2 });
    expect(f.layout.shapes).toContainEqual(expect.objectContaining({ type: "line", x0: psr.r_star![2], x1: psr.r_star![2], yref: "paper" }));
    const none = outcomeVsRelevanceFigure(psr, quickstartContext(), { calibration: 0 });
    expect((none.layout.shapes as Array<{ x0?: number }>).some((s) => s.x0 === psr.r_star![0])).toBe(false);
    const grid = outcomeVsRelevanceFigure(quickstartGrid(), quickstartContext());
    expect((grid.layout.shapes as Array<{ yref: string }>).every((s) => s.yref !== "paper")).toBe(true);
  });

  it("puts dates on a date axis", () => {
    const labels = ["2015-01-01", "2015-01-02", "2015-01-03", "2015-01-04", "2015-01-05", "2015-01-06", "2015-01-07"];
    const f = weightsFigure(quickstartPsr(), quickstartContext({ rowLabels: labels }), { calibration: 1 });
    expect(f.layout.xaxis).toMatchObject({ type: "date", title: { text: "date" } });
    expect(f.data[0].x).toEqual(labels);
  });
});

describe("exploreFigure", () => {
  const { result, context } = syntheticPsr(200);

  it("opens at the largest adjusted fit, with one slider step per threshold carrying that threshold's traces", () => {
    const f = exploreFigure(result, context);
    const slider = (f.layout.sliders as Array<{ active: number; steps: Array<{ label: string; method: string; args: unknown[] }> }>)[0];
    expect(slider.steps.map((s) => s.label)).toEqual(["0", "0.2", "0.5", "0.8"]);
    expect(slider.active).toBe(3);
    expect(f.data.map((d) => d.uid)).toEqual(["kept", "dropped", "weights", "yhat", "fit", "chosen"]);
    slider.steps.forEach((step, t) => {
      expect(step.method).toBe("update");
      const [data, layout, traces] = step.args as [{ x: unknown[][]; y: unknown[][] }, { "title.text": string; shapes: Array<{ x0: number }> }, number[]];
      expect(traces).toEqual([0, 1, 2, 5]);
      // Kept and dropped partition the observations as the result's include does.
      expect(data.x[0]).toHaveLength(result.n![t]);
      expect(data.x[0].length + data.x[1].length).toBe(200);
      expect(data.y[2]).toEqual(result.weights.map((row) => row[t]));
      expect(data.y[3]).toEqual([result.yhat[t]]);
      expect(layout["title.text"]).toMatch(new RegExp(`^PSR at t=${[0, 0.2, 0.5, 0.8][t]}: n = ${result.n![t]} kept of 200`));
      // The cut line at r_star, except at threshold 0, where nothing is cut.
      expect(layout.shapes.map((s) => s.x0)).toEqual(t === 0 ? [] : [result.r_star![t]]);
    });
    expect(JSON.parse(JSON.stringify(f))).toEqual(f);
  });

  it("refuses what it cannot explore", () => {
    expect(() => exploreFigure(quickstartGrid(), quickstartContext({ analysis: "grid" }))).toThrow(/a Grid has one composite/);
    expect(() => exploreFigure(result, { ...context, y: undefined })).toThrow(/needs the 200 outcomes/);
  });
});
