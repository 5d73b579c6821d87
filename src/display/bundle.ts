/**
 * Jupyter outputs: mime bundles for figures and tables, drawn the same in JupyterLab, the classic
 * Notebook, VS Code, a static HTML export of the notebook and Deno's kernel.
 *
 * A figure's bundle carries:
 * - `application/vnd.plotly.v1+json` `{ data, layout, config }`: what VS Code (and JupyterLab with
 *   the plotly extension) render natively;
 * - `text/html`: a `<div>` and a `<script>` calling `Plotly.newPlot`, for every front end that
 *   renders HTML with its scripts (JupyterLab, classic Notebook, nbconvert's HTML export);
 * - `text/plain`: a one-line description.
 *
 * How plotly.js reaches the page (no CDN by default: notebooks and reports must work offline and an
 * HTML export must be self-contained). The minified build (`plotly.js-dist-min`, 4.9 MB) is
 * gzipped and base64-encoded (about 2.0 MB) and inlined into the `text/html` of the first figure
 * output of the process (the kernel session), as plotly's own offline notebook mode does; later
 * outputs reuse `window.Plotly`. The page unpacks it with the browser's `DecompressionStream`
 * (Chrome 80, Firefox 113, Safari 16.4) and runs it as a function whose `module`, `exports` and
 * `define` parameters are undefined, so its UMD header always sets `window.Plotly`, whatever module
 * loader the page has (require.js in the classic Notebook and in nbconvert's templates would
 * otherwise capture it). The inline copy is guarded, so a page that already has plotly runs it
 * once. Each figure's script draws at once when `window.Plotly` exists, and otherwise queues itself
 * on `window.__rbpPlotlyQueue`, which the loader drains: outputs rendered out of order (a
 * virtualised JupyterLab notebook, a reopened notebook) still draw when the carrying output renders.
 * `setPlotlySource({ url })` loads plotly.js from a URL instead (outputs of a few KB, not
 * self-contained), and `"every"` inlines it in every output (heavy, but each output then stands
 * alone).
 *
 * What a chart says when it cannot draw (once, in the chart's place, with the remedy):
 * - JavaScript did not run (an untrusted notebook, a viewer without scripts): the chart's static
 *   text says so and how to trust the notebook; the chart's script removes it as soon as it runs;
 * - plotly.js never arrived (the output carrying it was cleared): after a few seconds the chart
 *   says so and names `rbp.resetPlotlySession()`. A page reload needs no remedy in tslab and the
 *   rbp kernel: a reconnecting front end sends `kernel_info_request`, which resets the session
 *   (`watchFrontEnds` in ./jupyter.ts), so the next chart carries plotly.js again;
 * - the browser cannot unpack the inlined copy: the chart says which browsers can.
 */
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { createRequire } from "node:module";
import { randomUUID } from "node:crypto";
import { escapeHtml, scriptJson } from "./format.js";
import { figureTitle, traceTypes, type Figure } from "./figures.js";
import type { HtmlTable } from "./tables.js";
import { denoDisplay, jupyterKernel, plain } from "./kernels.js";

export const PLOTLY_MIME = "application/vnd.plotly.v1+json";
/** The symbol Deno's Jupyter kernel calls to display a value (Deno.jupyter.$display). */
export const JUPYTER_DISPLAY: unique symbol = Symbol.for("Jupyter.display");

/** The plotly mime type's content. */
export interface PlotlyJson {
  data: Figure["data"];
  layout: Figure["layout"];
  config?: Figure["config"];
}

/** A Jupyter mime bundle: mime type to content. */
export interface MimeBundle {
  "text/plain": string;
  "text/html"?: string;
  "application/vnd.plotly.v1+json"?: PlotlyJson;
  [mime: string]: unknown;
}

/**
 * The mime bundle of one of this package's values, always synchronous (what `display`, `show()` and
 * `toBundle` read). `Symbol.for("Jupyter.display")` is what a kernel calls to show a cell's value.
 */
export const RBP_BUNDLE: unique symbol = Symbol.for("rbp-notebook.bundle");

/** A value Deno's kernel displays as a mime bundle (and tslab via `display`). */
export interface Displayable {
  [JUPYTER_DISPLAY](): MimeBundle | Promise<MimeBundle>;
}

/** One of this package's displayable values: its bundle at once, and the kernel's display method. */
export interface OwnDisplayable extends Displayable {
  [RBP_BUNDLE](): MimeBundle;
}

/** A mime bundle that also displays itself in Deno (the symbols are not enumerable: JSON and Object.keys see the mime types only). */
export type DisplayBundle = MimeBundle & OwnDisplayable;

/**
 * A bundle as a kernel should get it for a cell's value: in Deno the bundle is sent as display data
 * (awaited) and the cell's own result is empty, because Deno 2.9 can send a cell's result after the
 * cell went idle, where a front end no longer takes it (docs/kernels.md); elsewhere the bundle itself.
 */
export function cellValue(bundle: MimeBundle): MimeBundle | Promise<MimeBundle> {
  if (jupyterKernel() !== "deno") return bundle;
  return denoDisplay(plain(toBundle(bundle))).then(() => ({}) as MimeBundle);
}

/** Gives `target` its bundle (`RBP_BUNDLE`) and the kernel's display method, both hidden from JSON and Object.keys. */
export function defineDisplay<T extends object>(target: T, bundle: () => MimeBundle): T & OwnDisplayable {
  Object.defineProperty(target, RBP_BUNDLE, { value: bundle, enumerable: false, configurable: true });
  Object.defineProperty(target, JUPYTER_DISPLAY, { value: () => cellValue(bundle()), enumerable: false, configurable: true });
  return target as T & OwnDisplayable;
}

/** Marks a bundle as displayable in Deno's kernel; returns it. */
export function displayable<B extends MimeBundle>(bundle: B): B & OwnDisplayable {
  return defineDisplay(bundle, () => ({ ...bundle }));
}

export function isDisplayable(v: unknown): v is Displayable {
  return typeof v === "object" && v !== null && typeof (v as Record<symbol, unknown>)[JUPYTER_DISPLAY] === "function";
}

function isOwnDisplayable(v: unknown): v is OwnDisplayable {
  return typeof v === "object" && v !== null && typeof (v as Record<symbol, unknown>)[RBP_BUNDLE] === "function";
}

// ---------------------------------------------------------------------------------------------
// plotly.js loading

/** Where figure outputs get plotly.js: inlined in the first output (default), in every output, or from a URL. */
export type PlotlySource = "once" | "every" | { url: string };

/**
 * Where the figure outputs of a kernel session get plotly.js, and whether one has carried it: what
 * `setPlotlySource`, `resetPlotlySession` and every figure output read and write.
 */
class PlotlySession {
  source: PlotlySource = "once";
  sent = false;

  /** The loader a figure output carries (undefined: none), and the session then knows plotly.js was sent. */
  loaderFor(include: "auto" | boolean): string | undefined {
    if (include === false) return undefined;
    if (typeof this.source === "object") return plotlyUrlScript(this.source.url);
    if (include === true || this.source === "every" || !this.sent) {
      this.sent = true;
      return plotlyInlineScript();
    }
    return undefined;
  }
}

/** The kernel session is this process: its figure outputs share one PlotlySession. */
const PLOTLY = new PlotlySession();

/** The packed plotly.js and the loader script carrying it: the same for every caller, computed once per process. */
let cachedPacked: string | undefined;
let cachedLoader: string | undefined;

/** Chooses where figure outputs get plotly.js (see the module comment). */
export function setPlotlySource(s: PlotlySource): void {
  PLOTLY.source = s;
  PLOTLY.sent = false;
}

/** Forgets that plotly.js was sent, so the next figure output carries it again (after clearing the output that held it). */
export function resetPlotlySession(): void {
  PLOTLY.sent = false;
}

/** Whether a figure output of this process has carried plotly.js. */
export function plotlySent(): boolean {
  return PLOTLY.sent;
}

const PLOTLY_PACKAGE = "plotly.js-dist-min";

/** The version of the plotly.js that is inlined. */
export function plotlyVersion(): string {
  const req = createRequire(import.meta.url);
  return (JSON.parse(readFileSync(req.resolve(`${PLOTLY_PACKAGE}/package.json`), "utf8")) as { version: string }).version;
}

/** The minified plotly.js source (`plotly.js-dist-min`), as a report's "file" option writes it beside the report. */
export function plotlyMinifiedSource(): string {
  return readFileSync(createRequire(import.meta.url).resolve(PLOTLY_PACKAGE), "utf8");
}

/** The file name a report's "file" option gives plotly.js: `plotly-<version>.min.js`. */
export function plotlyFileName(): string {
  return `plotly-${plotlyVersion()}.min.js`;
}

/** The minified source, gzipped and base64-encoded (what is inlined; computed once per process). */
function packedPlotly(): string {
  cachedPacked ??= gzipSync(plotlyMinifiedSource(), { level: 9 }).toString("base64");
  return cachedPacked;
}

/** Script text: whether the page has plotly.js. */
const READY = `(window.Plotly&&window.Plotly.newPlot)`;

/** Drains the queue of figures waiting for plotly.js (script text). */
const DRAIN = `(function(){var q=window.__rbpPlotlyQueue;window.__rbpPlotlyQueue=[];if(q&&${READY}){for(var i=0;i<q.length;i++){try{q[i](window.Plotly)}catch(e){console.error(e)}}}})();`;

/** Records why plotly.js cannot load and shows it in every waiting chart (script text; `m` is the reason). */
const FAIL = `function fail(m){window.__rbpPlotlyError=m;var n=document.querySelectorAll(".rbp-figure-note[data-rbp-waiting]");for(var i=0;i<n.length;i++){n[i].textContent="This chart cannot be drawn: "+m;n[i].style.display="block"}}`;

const UNPACK_MISSING =
  "this browser cannot unpack the plotly.js inlined in this page (it needs DecompressionStream: Chrome 80, Firefox 113, Safari 16.4 or later)";

/**
 * A `<script>` defining `window.Plotly` from the inlined, gzipped plotly.js (once per page,
 * whatever module loader the page has) and drawing the figures that wait for it.
 */
export function plotlyInlineScript(): string {
  if (cachedLoader === undefined) {
    const version = plotlyVersion();
    cachedLoader =
      `<script type="text/javascript" data-rbp-plotly="${escapeHtml(version)}">/* plotly.js ${version} (MIT, Plotly, Inc.), minified, gzipped and base64-encoded by rbp-notebook so this page works offline */\n` +
      `(function(){${FAIL}if(${READY}){${DRAIN}return}if(window.__rbpPlotlyUnpacking)return;` +
      `if(typeof DecompressionStream!=="function"||typeof Response!=="function"||typeof Blob!=="function"){fail(${scriptJson(UNPACK_MISSING)});return}` +
      `window.__rbpPlotlyUnpacking=1;var z="${packedPlotly()}";` +
      `var s=atob(z),b=new Uint8Array(s.length);for(var i=0;i<s.length;i++)b[i]=s.charCodeAt(i);` +
      `new Response(new Blob([b]).stream().pipeThrough(new DecompressionStream("gzip"))).text().then(function(code){` +
      `window.__rbpPlotlyUnpacking=0;if(!${READY}){(new Function("module","exports","define",code)).call(window,undefined,undefined,undefined)}${DRAIN}},` +
      `function(e){window.__rbpPlotlyUnpacking=0;fail("the plotly.js inlined in this page could not be unpacked ("+e+")")})})();</script>`;
  }
  return cachedLoader;
}

/** A `<script>` loading plotly.js from a URL (not self-contained), then drawing the waiting figures. */
export function plotlyUrlScript(url: string): string {
  return `<script type="text/javascript" data-rbp-plotly-url="${escapeHtml(url)}">(function(){${FAIL}if(${READY})return;if(window.__rbpPlotlyLoading)return;window.__rbpPlotlyLoading=1;var s=document.createElement("script");s.src=${scriptJson(url)};s.onload=function(){window.__rbpPlotlyLoading=0;${DRAIN}};s.onerror=function(){window.__rbpPlotlyLoading=0;fail("plotly.js could not be loaded from "+s.src)};document.head.appendChild(s);})();</script>`;
}

export interface FigureHtmlOptions {
  /** The element id (default: a random one). */
  id?: string;
  /** Carry plotly.js: "auto" (by the session setting; the default), true (always) or false (never: the page has it). */
  plotly?: "auto" | boolean;
}

/** What a chart shows when its script never ran (static text, removed by the script as it starts). */
export const NO_SCRIPT_NOTE =
  "This chart is drawn by JavaScript, which has not run here. In Jupyter this means the notebook is not trusted: " +
  "trust it (classic Notebook: File > Trust Notebook; JupyterLab: \u201cTrust Notebook\u201d in the command palette), then reload the page.";

/** What a chart shows when plotly.js has not arrived a few seconds after its script ran (no output on the page carries it). */
export const NO_PLOTLY_NOTE =
  "This chart waits for plotly.js, which the first chart output of the kernel session carries, and that output is not on this page " +
  "(it was cleared). Run rbp.resetPlotlySession() and display the chart again.";

/** The same while an output on the page is still unpacking or loading plotly.js. */
const LOADING_NOTE = "This chart waits for plotly.js, which is still loading.";

/** The figure as HTML: a container and the script that draws it (and, by the options, plotly.js before them). */
export function figureHtml(figure: Figure, options: FigureHtmlOptions = {}): string {
  const id = options.id ?? `rbp-fig-${randomUUID()}`;
  const height = typeof figure.layout.height === "number" ? figure.layout.height : 420;
  const loader = PLOTLY.loaderFor(options.plotly ?? "auto") ?? "";
  const spec = scriptJson({ data: figure.data, layout: figure.layout, config: figure.config ?? {} });
  const idJson = scriptJson(id);
  const draw =
    `(function(){var id=${idJson};var fig=${spec};var el=document.getElementById(id);if(!el)return;` +
    `var note=el.querySelector(".rbp-figure-note");function say(t){if(note){note.textContent=t;note.style.display=t?"block":"none"}}say("");` +
    `function draw(P){if(note){note.removeAttribute("data-rbp-waiting");if(note.parentNode)note.parentNode.removeChild(note);note=null}` +
    `P.newPlot(el,fig.data,fig.layout,fig.config).then(function(){el.setAttribute("data-rbp-drawn","1")},function(e){console.error(e);el.textContent="The chart could not be drawn: "+e})}` +
    `if(${READY}){draw(window.Plotly);return}(window.__rbpPlotlyQueue=window.__rbpPlotlyQueue||[]).push(draw);if(note)note.setAttribute("data-rbp-waiting","1");` +
    `var tries=0;(function check(){if(!note||${READY})return;` +
    `if(window.__rbpPlotlyError){say("This chart cannot be drawn: "+window.__rbpPlotlyError);return}` +
    `var loading=window.__rbpPlotlyUnpacking||window.__rbpPlotlyLoading;if(tries++<10&&(loading||tries<4)){setTimeout(check,1000);return}` +
    `say(loading?${scriptJson(LOADING_NOTE)}:${scriptJson(NO_PLOTLY_NOTE)});if(loading)setTimeout(check,2000)})()})();`;
  return (
    `${loader}<div class="rbp-figure" id="${escapeHtml(id)}" data-rbp-figure="${escapeHtml(figureTitle(figure))}" style="width:100%;min-height:${height}px">` +
    `<div class="rbp-figure-note" style="color:#a33;font:13px/1.4 sans-serif;padding:.4em 0">${escapeHtml(NO_SCRIPT_NOTE)}</div></div>` +
    `<script type="text/javascript">${draw}</script>`
  );
}

/** A figure as a mime bundle (plotly JSON, HTML with its script, plain text); displayable in Deno. */
export function figureBundle(figure: Figure, options: FigureHtmlOptions = {}): DisplayBundle {
  const plotly: PlotlyJson = JSON.parse(
    JSON.stringify({ data: figure.data, layout: figure.layout, config: figure.config ?? {} }, (_k, v: unknown) =>
      typeof v === "number" && !Number.isFinite(v) ? null : v,
    ),
  ) as PlotlyJson;
  const types = [...new Set(traceTypes(figure))].join(", ");
  const bundle: MimeBundle = {
    [PLOTLY_MIME]: plotly,
    "text/html": figureHtml(figure, options),
    "text/plain": `<Figure: ${figureTitle(figure)} (${types})>`,
  };
  return displayable(bundle);
}

/** HTML and its plain-text form as a mime bundle; displayable in Deno. */
export function htmlBundle(html: string, text: string): DisplayBundle {
  const bundle: MimeBundle = { "text/html": html, "text/plain": text };
  return displayable(bundle);
}

/** A table (summaryTable, observationTable, ...) as a mime bundle. */
export function tableBundle(table: HtmlTable): DisplayBundle {
  return htmlBundle(table.html, table.text);
}

/** The mime bundle of anything the display layer returns: a bundle, a Deno displayable, a figure or a table. */
export function toBundle(value: MimeBundle | Displayable | Figure | HtmlTable): MimeBundle {
  if (isOwnDisplayable(value)) return value[RBP_BUNDLE]();
  if (isDisplayable(value)) {
    const b = value[JUPYTER_DISPLAY]();
    if (typeof (b as Promise<MimeBundle>).then === "function")
      throw new Error("display: this value's Jupyter.display method returns a promise; await it and display the bundle");
    return b as MimeBundle;
  }
  if (isFigure(value)) return figureBundle(value);
  if (isHtmlTable(value)) return tableBundle(value);
  if (typeof value === "object" && value !== null && typeof (value as MimeBundle)["text/plain"] === "string") return value as MimeBundle;
  throw new Error("display: expected a mime bundle, a figure or a table");
}

export function isFigure(v: unknown): v is Figure {
  return typeof v === "object" && v !== null && Array.isArray((v as Figure).data) && typeof (v as Figure).layout === "object" && !("text/plain" in v);
}

function isHtmlTable(v: unknown): v is HtmlTable {
  return typeof v === "object" && v !== null && typeof (v as HtmlTable).html === "string" && typeof (v as HtmlTable).text === "string";
}
