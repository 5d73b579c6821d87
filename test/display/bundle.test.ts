import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  JUPYTER_DISPLAY,
  PLOTLY_MIME,
  figureBundle,
  figureHtml,
  isDisplayable,
  plotlyInlineScript,
  plotlySent,
  plotlyVersion,
  resetPlotlySession,
  setPlotlySource,
  summaryTable,
  tableBundle,
  toBundle,
  weightsFigure,
  type Figure,
} from "../../src/display/index.js";
import { quickstartContext, quickstartGrid } from "./fixtures.js";

const INLINE = /data-rbp-plotly="/g;

function figure(): Figure {
  return weightsFigure(quickstartGrid(), quickstartContext());
}

beforeEach(() => setPlotlySource("once"));
afterEach(() => setPlotlySource("once"));

describe("figureBundle", () => {
  it("carries the plotly JSON, HTML with its script, and plain text", () => {
    const b = figureBundle(figure());
    expect(Object.keys(b).sort()).toEqual([PLOTLY_MIME, "text/html", "text/plain"].sort());
    expect(b["text/plain"]).toBe("<Figure: Grid: weight of each observation (bar)>");
    const plotly = b[PLOTLY_MIME]!;
    expect(Object.keys(plotly)).toEqual(["data", "layout", "config"]);
    expect(plotly.data[0].x).toEqual(["Ann", "Ben", "Cat", "Dan", "Eve", "Fay", "Gus"]);
    expect(JSON.parse(JSON.stringify(plotly))).toStrictEqual(plotly);
  });

  it("the whole bundle is JSON (as a Jupyter message carries it)", () => {
    const b = figureBundle(figure());
    const round = JSON.parse(JSON.stringify(b)) as Record<string, unknown>;
    expect(Object.keys(round).sort()).toEqual(Object.keys(b).sort());
    expect(round[PLOTLY_MIME]).toStrictEqual(b[PLOTLY_MIME]);
  });

  it("displays itself in Deno: Symbol.for('Jupyter.display') returns the mime bundle, not enumerable", () => {
    const b = figureBundle(figure());
    expect(JUPYTER_DISPLAY).toBe(Symbol.for("Jupyter.display"));
    expect(isDisplayable(b)).toBe(true);
    const shown = (b as unknown as Record<symbol, () => Record<string, unknown>>)[Symbol.for("Jupyter.display")]();
    expect(Object.keys(shown).sort()).toEqual(Object.keys(b).sort());
    expect(shown["text/html"]).toBe(b["text/html"]);
    expect(Object.getOwnPropertySymbols(b)).toHaveLength(1);
    expect(Object.keys(b)).not.toContain(String(JUPYTER_DISPLAY));
  });

  it("the HTML holds a container and a script that draws into it (or queues until plotly.js arrives)", () => {
    const html = figureHtml(figure(), { id: "fig-1", plotly: false });
    expect(html).toContain('<div class="rbp-figure" id="fig-1"');
    expect(html).toContain("P.newPlot(el,fig.data,fig.layout,fig.config)");
    expect(html).toContain("window.__rbpPlotlyQueue");
    expect(html).not.toMatch(INLINE);
    expect(html).not.toMatch(/<script[^>]*\ssrc=/);
  });

  it("names cannot close the script: <, > and & are escaped in the embedded JSON", () => {
    const f = weightsFigure(quickstartGrid(), quickstartContext({ rowLabels: ["</script><script>alert(1)</script>", "b", "c", "d", "e", "f", "g"] }));
    const html = figureHtml(f, { id: "x", plotly: false });
    expect(html.match(/<script/g)).toHaveLength(1);
    expect(html.match(/<\/script>/g)).toHaveLength(1);
    expect(html).toContain("\\u003c/script\\u003e\\u003cscript\\u003ealert(1)");
  });
});

describe("plotly.js loading", () => {
  it("is inlined in the first figure output of the session only", () => {
    resetPlotlySession();
    expect(plotlySent()).toBe(false);
    const first = figureBundle(figure())["text/html"]!;
    const second = figureBundle(figure())["text/html"]!;
    expect(first.match(INLINE)).toHaveLength(1);
    expect(second).not.toMatch(INLINE);
    expect(plotlySent()).toBe(true);
    expect(first.length).toBeGreaterThan(3_000_000);
    expect(second.length).toBeLessThan(20_000);
    resetPlotlySession();
    expect(figureBundle(figure())["text/html"]!).toMatch(INLINE);
  });

  it("is guarded and hidden from module loaders (require.js define, CommonJS module)", () => {
    const script = plotlyInlineScript();
    expect(script).toContain(`data-rbp-plotly="${plotlyVersion()}"`);
    expect(script).toContain("if(!(window.Plotly&&window.Plotly.newPlot)){(function(module,exports,define){");
    expect(script).toContain("}).call(window,undefined,undefined,undefined);}");
    // One <script> element: the inlined source never closes it.
    expect(script.match(/<\/script/gi)).toHaveLength(1);
    expect(script).toContain("window.__rbpPlotlyQueue=[]");
  });

  it('"every" inlines it in each output; a URL loads it instead of inlining', () => {
    setPlotlySource("every");
    expect(figureBundle(figure())["text/html"]!).toMatch(INLINE);
    expect(figureBundle(figure())["text/html"]!).toMatch(INLINE);
    setPlotlySource({ url: "https://example.invalid/plotly.min.js" });
    const html = figureBundle(figure())["text/html"]!;
    expect(html).not.toMatch(INLINE);
    expect(html).toContain('s.src="https://example.invalid/plotly.min.js"');
  });

  it("plotly: false and true override the session", () => {
    resetPlotlySession();
    expect(figureHtml(figure(), { plotly: false })).not.toMatch(INLINE);
    expect(plotlySent()).toBe(false);
    expect(figureHtml(figure(), { plotly: true })).toMatch(INLINE);
    expect(figureHtml(figure(), { plotly: true })).toMatch(INLINE);
  });
});

describe("tables and other values as bundles", () => {
  it("a table is HTML and text", () => {
    const b = tableBundle(summaryTable(quickstartGrid(), quickstartContext()));
    expect(Object.keys(b).sort()).toEqual(["text/html", "text/plain"]);
    expect(isDisplayable(b)).toBe(true);
    expect(b["text/plain"]).toContain("Grid prediction of Points");
  });

  it("toBundle accepts bundles, displayables, figures and tables", () => {
    const t = summaryTable(quickstartGrid(), quickstartContext());
    expect(toBundle(t)["text/html"]).toBe(t.html);
    expect(toBundle(figure())[PLOTLY_MIME]).toBeDefined();
    expect(toBundle({ "text/plain": "x" })).toEqual({ "text/plain": "x" });
    expect(toBundle({ [JUPYTER_DISPLAY]: () => ({ "text/plain": "y" }) })).toEqual({ "text/plain": "y" });
    expect(() => toBundle({} as never)).toThrow(/expected a mime bundle, a figure or a table/);
  });
});
