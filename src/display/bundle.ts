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
 * How plotly.js reaches the page (no CDN: notebooks and reports must work offline and an HTML export
 * must be self-contained). plotly.js is inlined from the `plotly.js-dist` package into the
 * `text/html` of the first figure output of the process (the kernel session), as plotly's own
 * offline notebook mode does; later outputs reuse `window.Plotly`. The inlined source is wrapped in
 * a function whose `module`, `exports` and `define` parameters are undefined, so its UMD header
 * always sets `window.Plotly`, whatever module loader the page has (require.js in the classic
 * Notebook and in nbconvert's templates would otherwise capture it). The inline copy is guarded
 * (`if (!window.Plotly)`), so a page that already has plotly runs it once. Each figure's script
 * draws at once when `window.Plotly` exists, and otherwise queues itself on
 * `window.__rbpPlotlyQueue`, which the loader drains: outputs rendered out of order (a virtualised
 * JupyterLab notebook, a reopened notebook) still draw when the carrying output renders, and say
 * so in the cell when none does. The cost is the size of one plotly.js (about 11 MB, unminified in
 * plotly.js-dist) in the first output; `setPlotlySource({ url })` loads it from a URL instead, and
 * `"every"` inlines it in every output (heavy, but each output then stands alone).
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { randomUUID } from "node:crypto";
import { escapeHtml, scriptJson } from "./format.js";
import { figureTitle, traceTypes, type Figure } from "./figures.js";
import type { HtmlTable } from "./tables.js";

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

/** A value Deno's kernel displays as a mime bundle (and tslab via `display`). */
export interface Displayable {
  [JUPYTER_DISPLAY](): MimeBundle;
}

/** A mime bundle that also displays itself in Deno (the symbol is not enumerable: JSON and Object.keys see the mime types only). */
export type DisplayBundle = MimeBundle & Displayable;

/** Marks a bundle as displayable in Deno's kernel; returns it. */
export function displayable<B extends MimeBundle>(bundle: B): B & Displayable {
  Object.defineProperty(bundle, JUPYTER_DISPLAY, {
    value: function (this: B): MimeBundle {
      return { ...this };
    },
    enumerable: false,
  });
  return bundle as B & Displayable;
}

export function isDisplayable(v: unknown): v is Displayable {
  return typeof v === "object" && v !== null && typeof (v as Record<symbol, unknown>)[JUPYTER_DISPLAY] === "function";
}

// ---------------------------------------------------------------------------------------------
// plotly.js loading

/** Where figure outputs get plotly.js: inlined in the first output (default), in every output, or from a URL. */
export type PlotlySource = "once" | "every" | { url: string };

let source: PlotlySource = "once";
let sentThisSession = false;
let cachedLoader: string | undefined;

/** Chooses where figure outputs get plotly.js (see the module comment). */
export function setPlotlySource(s: PlotlySource): void {
  source = s;
  sentThisSession = false;
}

/** Forgets that plotly.js was sent, so the next figure output carries it again (after clearing the output that held it). */
export function resetPlotlySession(): void {
  sentThisSession = false;
}

/** Whether a figure output of this process has carried plotly.js. */
export function plotlySent(): boolean {
  return sentThisSession;
}

/** The version of the plotly.js that is inlined. */
export function plotlyVersion(): string {
  const req = createRequire(import.meta.url);
  return (JSON.parse(readFileSync(req.resolve("plotly.js-dist/package.json"), "utf8")) as { version: string }).version;
}

/** Drains the queue of figures waiting for plotly.js (script text). */
const DRAIN = `(function(){var q=window.__rbpPlotlyQueue;window.__rbpPlotlyQueue=[];if(q&&window.Plotly){for(var i=0;i<q.length;i++){try{q[i](window.Plotly)}catch(e){console.error(e)}}}})();`;

/**
 * A `<script>` defining `window.Plotly` from the inlined plotly.js-dist (once per page, whatever
 * module loader the page has) and drawing the figures that wait for it.
 */
export function plotlyInlineScript(): string {
  if (cachedLoader === undefined) {
    const req = createRequire(import.meta.url);
    const code = readFileSync(req.resolve("plotly.js-dist"), "utf8")
      // Cannot occur in plotly.js 3.7 (checked), but would end the script element early.
      .replace(/<\/script/gi, "<\\/script")
      .replace(/<!--/g, "<\\!--");
    cachedLoader =
      `<script type="text/javascript" data-rbp-plotly="${escapeHtml(plotlyVersion())}">/* plotly.js ${plotlyVersion()} (MIT, Plotly, Inc.), inlined by rbp-notebook so this page works offline */\n` +
      `if(!(window.Plotly&&window.Plotly.newPlot)){(function(module,exports,define){\n${code}\n}).call(window,undefined,undefined,undefined);}\n` +
      `${DRAIN}</script>`;
  }
  return cachedLoader;
}

/** A `<script>` loading plotly.js from a URL (not self-contained), then drawing the waiting figures. */
export function plotlyUrlScript(url: string): string {
  return `<script type="text/javascript">(function(){if(window.Plotly&&window.Plotly.newPlot)return;if(window.__rbpPlotlyLoading)return;window.__rbpPlotlyLoading=1;var s=document.createElement("script");s.src=${scriptJson(url)};s.onload=function(){${DRAIN}};s.onerror=function(){console.error("rbp-notebook: could not load plotly.js from "+s.src)};document.head.appendChild(s);})();</script>`;
}

/** The loader for the current setting, and whether it is one (undefined when this output should not carry plotly). */
function loaderForOutput(include: "auto" | boolean): string | undefined {
  if (include === false) return undefined;
  if (typeof source === "object") return plotlyUrlScript(source.url);
  if (include === true || source === "every" || !sentThisSession) {
    sentThisSession = true;
    return plotlyInlineScript();
  }
  return undefined;
}

export interface FigureHtmlOptions {
  /** The element id (default: a random one). */
  id?: string;
  /** Carry plotly.js: "auto" (by the session setting; the default), true (always) or false (never: the page has it). */
  plotly?: "auto" | boolean;
}

/** The figure as HTML: a container and the script that draws it (and, by the options, plotly.js before them). */
export function figureHtml(figure: Figure, options: FigureHtmlOptions = {}): string {
  const id = options.id ?? `rbp-fig-${randomUUID()}`;
  const height = typeof figure.layout.height === "number" ? figure.layout.height : 420;
  const loader = loaderForOutput(options.plotly ?? "auto") ?? "";
  const spec = scriptJson({ data: figure.data, layout: figure.layout, config: figure.config ?? {} });
  const idJson = scriptJson(id);
  const draw =
    `(function(){var id=${idJson};var fig=${spec};` +
    `function draw(P){var el=document.getElementById(id);if(!el)return;var w=document.getElementById(id+"-wait");if(w)w.parentNode.removeChild(w);` +
    `P.newPlot(el,fig.data,fig.layout,fig.config).then(function(){el.setAttribute("data-rbp-drawn","1")},function(e){console.error(e);el.textContent="The chart could not be drawn: "+e})}` +
    `if(window.Plotly&&window.Plotly.newPlot){draw(window.Plotly)}else{(window.__rbpPlotlyQueue=window.__rbpPlotlyQueue||[]).push(draw);` +
    `setTimeout(function(){var w=document.getElementById(id+"-wait");if(w&&!(window.Plotly&&window.Plotly.newPlot))w.style.display="block"},5000)}})();`;
  return (
    `${loader}<div class="rbp-figure" id="${escapeHtml(id)}" data-rbp-figure="${escapeHtml(figureTitle(figure))}" style="width:100%;min-height:${height}px"></div>` +
    `<div id="${escapeHtml(id)}-wait" style="display:none;color:#a33;font:13px sans-serif">This chart waits for plotly.js, which the first chart output of the session carries. ` +
    `If that output was cleared, call resetPlotlySession() and display the chart again.</div>` +
    `<script type="text/javascript">${draw}</script>`
  );
}

/** A figure as a mime bundle (plotly JSON, HTML with its script, plain text); displayable in Deno. */
export function figureBundle(figure: Figure, options: FigureHtmlOptions = {}): DisplayBundle {
  const plotly: PlotlyJson = JSON.parse(JSON.stringify({ data: figure.data, layout: figure.layout, config: figure.config ?? {} }, (_k, v: unknown) =>
    typeof v === "number" && !Number.isFinite(v) ? null : v,
  )) as PlotlyJson;
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
  if (isDisplayable(value)) return value[JUPYTER_DISPLAY]();
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
