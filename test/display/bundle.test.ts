import { gunzipSync } from "node:zlib";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  NO_PLOTLY_NOTE,
  NO_SCRIPT_NOTE,
  plotlyMinifiedSource,
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
    // The kernel's display symbol and the package's own synchronous bundle; neither is enumerable.
    expect(Object.getOwnPropertySymbols(b)).toHaveLength(2);
    expect(Object.keys(b)).toEqual(Object.keys(JSON.parse(JSON.stringify(b))));
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

  it("shows one static note when its script never runs, and names the remedy (rbp.resetPlotlySession) when plotly.js never arrives", () => {
    const html = figureHtml(figure(), { id: "fig-2", plotly: false });
    // Visible without JavaScript (an untrusted notebook): once, inside the chart's container, with how to trust.
    expect(html.split(NO_SCRIPT_NOTE.slice(0, 40)).length - 1).toBe(1);
    expect(html).toMatch(/<div class="rbp-figure" id="fig-2"[^>]*><div class="rbp-figure-note"[^>]*>This chart is drawn by JavaScript/);
    expect(NO_SCRIPT_NOTE).toContain("File > Trust Notebook");
    expect(html).not.toContain("display:none");
    // The script's own message when plotly.js never comes: the rbp. prefix, said once.
    expect(NO_PLOTLY_NOTE).toContain("rbp.resetPlotlySession()");
    expect(html.split("rbp.resetPlotlySession()").length - 1).toBe(1);
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
    // The minified plotly.js, gzipped and base64-encoded: about 2 MB (the unminified build was 11 MB).
    expect(first.length).toBeGreaterThan(1_500_000);
    expect(first.length).toBeLessThan(2_500_000);
    expect(second.length).toBeLessThan(20_000);
    resetPlotlySession();
    expect(figureBundle(figure())["text/html"]!).toMatch(INLINE);
  });

  it("carries the minified plotly.js, gzipped and base64-encoded, byte for byte", () => {
    const script = plotlyInlineScript();
    const packed = /var z="([A-Za-z0-9+/=]+)";/.exec(script);
    expect(packed).not.toBeNull();
    expect(gunzipSync(Buffer.from(packed![1], "base64")).toString("utf8")).toBe(plotlyMinifiedSource());
    expect(plotlyMinifiedSource().length).toBeLessThan(5_500_000);
    expect(script).toContain('new DecompressionStream("gzip")');
  });

  it("is guarded and hidden from module loaders (require.js define, CommonJS module)", () => {
    const script = plotlyInlineScript();
    expect(script).toContain(`data-rbp-plotly="${plotlyVersion()}"`);
    expect(script).toContain(
      'if(!(window.Plotly&&window.Plotly.newPlot)){(new Function("module","exports","define",code)).call(window,undefined,undefined,undefined)}',
    );
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
