/**
 * Chromium (Debian's, driven by playwright-core) opens a saved report and notebook-style pages made
 * of the display layer's text/html outputs, and checks that every plotly chart drew: SVG
 * (`.main-svg`) or, for WebGL traces, canvas nodes; no console errors, no page errors, and no
 * request leaving the page (the outputs are self-contained). Screenshots go to
 * test-output/screenshots/.
 *
 * Skipped, with the reason printed, when /usr/bin/chromium is absent (install it with
 * scripts/install-browser.sh). Run alone with `npm run test:browser`.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  figureBundle,
  impactFigure,
  observationTable,
  outcomeVsRelevanceFigure,
  resetPlotlySession,
  saveReport,
  summaryTable,
  tableBundle,
  weightsFigure,
  type MimeBundle,
} from "../../src/display/index.js";
import { quickstartContext, quickstartGrid, quickstartPsr, syntheticPsr } from "../display/fixtures.js";
import { CHROMIUM, openBrowser, type Browser } from "../../scripts/chromium.js";
import { IN_CI } from "../ci.js";

const available = existsSync(CHROMIUM);
if (!available && !IN_CI) {
  console.warn(
    `[test/browser] SKIPPED: no Chromium at ${CHROMIUM}. Install it with scripts/install-browser.sh (apt-get install chromium), then run npm run test:browser.`,
  );
}

const OUT = resolve("test-output");
const SHOTS = join(OUT, "screenshots");

interface FigureState {
  title: string;
  drawn: boolean;
  svg: number;
  canvas: number;
  types: string[];
  text: string;
}

interface Visit {
  page: Page;
  errors: string[];
  requests: string[];
  figures: FigureState[];
}

let browser: Browser;
let context: BrowserContext;
/** Requests that would leave the page (anything but file: and data:). */
const outside: string[] = [];

async function visit(path: string, figureCount: number): Promise<Visit> {
  const page = await context.newPage();
  const errors: string[] = [];
  // The first error ends the wait at once (instead of waiting for charts that will never draw).
  let fail: (e: Error) => void = () => {};
  const failed = new Promise<never>((_, reject) => (fail = reject));
  failed.catch(() => {});
  const record = (e: string) => {
    errors.push(e);
    fail(new Error(`error in the page: ${e}`));
  };
  page.on("console", (m) => {
    if (m.type() === "error") record(`console: ${m.text()}`);
  });
  page.on("pageerror", (e) => record(`page: ${e.message}`));
  const before = outside.length;
  await page.goto(pathToFileURL(path).href, { waitUntil: "load" });
  // Browser-side code as strings: the project compiles without the DOM library.
  const drawn = page.waitForFunction(
    `(() => {
      const figs = Array.from(document.querySelectorAll(".rbp-figure"));
      return figs.length === ${figureCount} && figs.every((f) => f.getAttribute("data-rbp-drawn") === "1" || (f.textContent || "").startsWith("The chart could not"));
    })()`,
    undefined,
    { timeout: 60_000, polling: 200 },
  );
  drawn.catch(() => {}); // handled by the race; a late rejection (page closed) is not an error
  await Promise.race([drawn, failed]);
  const figures = (await page.evaluate(`Array.from(document.querySelectorAll(".rbp-figure")).map((el) => ({
    title: el.getAttribute("data-rbp-figure") || "",
    drawn: el.getAttribute("data-rbp-drawn") === "1",
    svg: el.querySelectorAll(".main-svg").length,
    canvas: el.querySelectorAll("canvas").length,
    types: (el._fullData || []).map((t) => t.type),
    text: (el.textContent || "").slice(0, 200),
  }))`)) as FigureState[];
  return { page, errors, requests: outside.slice(before), figures };
}

function expectAllDrawn(v: Visit, count: number): void {
  expect(v.errors).toEqual([]);
  expect(v.requests).toEqual([]);
  expect(v.figures).toHaveLength(count);
  for (const f of v.figures) {
    expect(f.drawn, `${f.title} drew`).toBe(true);
    expect(f.svg + f.canvas, `${f.title} has SVG or canvas nodes`).toBeGreaterThan(0);
    expect(f.text).not.toMatch(/WebGL is not supported/);
    if (f.types.includes("scattergl")) expect(f.canvas, `${f.title} (WebGL) has canvas nodes`).toBeGreaterThan(0);
  }
}

async function screenshots(v: Visit, name: string): Promise<void> {
  await v.page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  const figs = await v.page.$$(".rbp-figure");
  for (let i = 0; i < figs.length; i++) await figs[i].screenshot({ path: join(SHOTS, `${name}-figure-${i + 1}.png`) });
}

/** A notebook output area as JupyterLab and nbconvert lay it out. */
function outputArea(bundle: MimeBundle): string {
  return `<div class="jp-OutputArea-child"><div class="jp-OutputArea-output jp-RenderedHTMLCommon" data-mime-type="text/html">${bundle["text/html"]}</div></div>`;
}

/**
 * The classic Notebook and nbconvert's templates load require.js; a UMD bundle that sees an AMD
 * `define` registers an anonymous module, which require.js rejects, instead of setting
 * window.Plotly. The pages define such loader globals first, so the test proves the inlined
 * plotly.js sets window.Plotly whatever the page has.
 */
const LOADER_GLOBALS = `<script>
window.define = function () { throw new Error("Mismatched anonymous define() module (simulated require.js)"); };
window.define.amd = { jQuery: true };
window.requirejs = window.require = function () {};
</script>`;

function notebookPage(title: string, body: string): string {
  return `<!DOCTYPE html><html><head><meta charset="utf-8"><title>${title}</title>${LOADER_GLOBALS}
<style>body{font-family:sans-serif;margin:0 auto;max-width:1100px;padding:1em}.jp-Cell{border-left:3px solid #ddd;margin:1em 0;padding-left:1em}.jp-InputPrompt{color:#307fc1;font:12px monospace}</style>
</head><body>${body}</body></html>`;
}

function cell(n: number, code: string, outputs: MimeBundle[]): string {
  return `<div class="jp-Cell"><div class="jp-InputPrompt">[${n}]: ${code}</div>${outputs.map(outputArea).join("")}</div>`;
}

describe.skipIf(!available && !IN_CI)("in Chromium", () => {
  beforeAll(async () => {
    if (!available) throw new Error(`CI is set, so the browser suite must run: no Chromium at ${CHROMIUM} (scripts/install-browser.sh)`);
    mkdirSync(SHOTS, { recursive: true });
    browser = await openBrowser();
    context = browser.context;
    await context.route("**/*", (route) => {
      const url = route.request().url();
      if (url.startsWith("file:") || url.startsWith("data:") || url.startsWith("blob:")) return route.continue();
      outside.push(url);
      return route.abort();
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
  });

  it("a saved report (Grid on the 7x5 quickstart data, PSR on 5,000 rows) draws every chart", async () => {
    const big = syntheticPsr(5000, 4);
    const path = await saveReport(
      [
        {
          title: "Grid on the quickstart 7x5 data",
          result: quickstartGrid(),
          context: quickstartContext({ analysis: "grid" }),
          options: { threshold: [0, 0.2, 0.5, 0.8], censor_type: "both" },
        },
        {
          title: "PSR on 5,000 synthetic rows",
          result: big.result,
          context: big.context,
          options: { threshold: [0, 0.2, 0.5, 0.8], censor_type: "relevance" },
        },
      ],
      join(OUT, "report.html"),
      { title: "rbp-notebook browser test" },
    );
    const v = await visit(path, 7);
    expectAllDrawn(v, 7);
    expect(v.figures.map((f) => f.title)).toEqual([
      "Grid: Impact on Fit and Impact on Prediction by attribute",
      "Grid: weight of each observation",
      "Points against relevance",
      "PSR: yhat and fit across thresholds",
      "PSR: weight of each observation, one panel per threshold",
      "Return against relevance (t=0.8)",
      expect.stringMatching(/^PSR at t=0\.8: n = 1,000 kept of 5,000/),
    ]);
    expect(v.figures[4].types).toEqual(["scattergl", "scattergl", "scattergl", "scattergl"]);
    expect(v.figures[5].types).toContain("scattergl");
    expect(v.figures[0].svg).toBeGreaterThan(0);
    await screenshots(v, "report");
    await v.page.close();
  }, 180_000);

  /** The outputs of a short notebook session, in order; the first figure output carries plotly.js. */
  function sessionOutputs(): MimeBundle[][] {
    resetPlotlySession();
    const ctx = quickstartContext({ analysis: "grid" });
    const gridResult = quickstartGrid();
    const psr = quickstartPsr();
    const big = syntheticPsr(5000, 4);
    return [
      [tableBundle(summaryTable(gridResult, ctx))],
      [figureBundle(impactFigure(gridResult, ctx))],
      [figureBundle(weightsFigure(psr, quickstartContext())), figureBundle(outcomeVsRelevanceFigure(psr, quickstartContext()))],
      [tableBundle(observationTable(psr, quickstartContext()))],
      [figureBundle(weightsFigure(big.result, big.context)), figureBundle(outcomeVsRelevanceFigure(big.result, big.context, { calibration: 1 }))],
    ];
  }

  it("a static export of a notebook (outputs' text/html in order, as nbconvert writes them) draws every chart", async () => {
    const outputs = sessionOutputs();
    const carriers = outputs.flat().filter((b) => (b["text/html"] ?? "").includes("data-rbp-plotly"));
    expect(carriers).toHaveLength(1);
    const codes = ["grid.summary()", "grid.impact()", "psr.weights(); psr.relevance()", "psr.observations()", "big.weights(); big.relevance()"];
    const body = outputs.map((o, i) => cell(i + 1, codes[i], o)).join("\n");
    const path = join(OUT, "notebook-export.html");
    writeFileSync(path, notebookPage("notebook export", body));
    const v = await visit(path, 5);
    expectAllDrawn(v, 5);
    expect(v.figures[3].types).toEqual(["scattergl", "scattergl", "scattergl", "scattergl"]);
    await screenshots(v, "notebook-export");
    await v.page.close();
  }, 180_000);

  it("a live notebook (JupyterLab inserts each output's HTML and re-runs its scripts), outputs rendered out of order", async () => {
    const outputs = sessionOutputs().flat();
    // JupyterLab's RenderedHTML: innerHTML, then each <script> replaced by a fresh copy so it runs.
    // The outputs are rendered last to first, so charts render before the output carrying plotly.js
    // (as in a windowed notebook scrolled to the end) and wait for it.
    const renderer = `<script>
(function () {
  var outputs = JSON.parse(document.getElementById("outputs").textContent);
  var area = document.getElementById("notebook");
  var nodes = outputs.map(function (html, i) {
    var cell = document.createElement("div"); cell.className = "jp-Cell";
    cell.innerHTML = '<div class="jp-InputPrompt">[' + (i + 1) + ']:</div>';
    var out = document.createElement("div"); out.className = "jp-OutputArea-output"; cell.appendChild(out);
    area.appendChild(cell);
    return out;
  });
  var i = nodes.length - 1;
  (function next() {
    if (i < 0) return;
    var host = nodes[i]; host.innerHTML = outputs[i];
    Array.prototype.slice.call(host.getElementsByTagName("script")).forEach(function (script) {
      if (!script.parentNode) return;
      var clone = document.createElement("script");
      for (var a = 0; a < script.attributes.length; a++) clone.setAttribute(script.attributes[a].name, script.attributes[a].value);
      clone.textContent = script.textContent;
      script.parentNode.replaceChild(clone, script);
    });
    i--; setTimeout(next, 30);
  })();
})();
</script>`;
    const json = JSON.stringify(outputs.map((b) => b["text/html"])).replace(/</g, "\\u003c");
    const body = `<div id="notebook"></div><script type="application/json" id="outputs">${json}</script>${renderer}`;
    const path = join(OUT, "notebook-live.html");
    writeFileSync(path, notebookPage("live notebook", body));
    const v = await visit(path, 5);
    expectAllDrawn(v, 5);
    // No chart kept a note (no-JavaScript or "waits for plotly.js"): each drew and removed its own.
    const notes = await v.page.evaluate(`document.querySelectorAll(".rbp-figure-note").length`);
    expect(notes).toBe(0);
    await screenshots(v, "notebook-live");
    await v.page.close();
  }, 180_000);
});
