/**
 * display(): the rbp kernel (its real display hook, src/kernel/display.ts), tslab and Deno
 * detection, with tslab and Deno simulated the way they present themselves.
 */
import { createRequire } from "node:module";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  JUPYTER_DISPLAY,
  PLOTLY_MIME,
  allShown,
  display,
  figureBundle,
  isDisplayable,
  jupyterKernel,
  summaryTable,
  tslabWriter,
  weightsFigure,
} from "../../src/display/index.js";
import { quickstartContext, quickstartGrid } from "./fixtures.js";
import { DisplayHook } from "../../src/kernel/display.js";
import { RBP_KERNEL_HOOK, plotlySent, watchFrontEnds } from "../../src/display/index.js";
import type { CellOutput } from "../../src/kernel/contract.js";

const g = globalThis as Record<string, unknown>;
const cache = createRequire(import.meta.url).cache;
const FAKE_JUPYTER = "/opt/fake/lib/node_modules/tslab/dist/jupyter.js";

afterEach(() => {
  delete (g as Record<symbol, unknown>)[RBP_KERNEL_HOOK];
  delete g.__tslab__;
  delete g.Deno;
  delete cache[FAKE_JUPYTER];
});

function figure() {
  return weightsFigure(quickstartGrid(), quickstartContext());
}

describe("outside a kernel", () => {
  it("returns the bundle, displayable by Deno's symbol", () => {
    expect(jupyterKernel()).toBe("none");
    const b = display(figure());
    expect(b).toBeDefined();
    expect(isDisplayable(b)).toBe(true);
    expect(Object.keys(b!).sort()).toEqual([PLOTLY_MIME, "text/html", "text/plain"].sort());
  });
});

describe("inside the rbp kernel", () => {
  it("sends the full bundle to the running cell through the kernel's hook, before tslab or Deno", () => {
    const sent: Array<[string, unknown, unknown]> = [];
    const output: CellOutput = {
      stream: () => undefined,
      display: (data, options) => sent.push(["display", data, options]),
      clearOutput: (wait) => sent.push(["clear", wait, undefined]),
      input: () => Promise.resolve(""),
    };
    const hook = new DisplayHook();
    hook.install();
    hook.bind(output);
    g.__tslab__ = { exports: {}, require: () => ({}) };
    expect(jupyterKernel()).toBe("rbp");
    expect(display(figure(), { displayId: "fig", update: true })).toBeUndefined();
    expect(sent).toHaveLength(1);
    const [, data, options] = sent[0];
    expect(Object.keys(data as object).sort()).toEqual([PLOTLY_MIME, "text/html", "text/plain"].sort());
    expect(options).toEqual({ displayId: "fig", update: true });
    // A front end that connects (kernel_info) resets the plotly session: the next chart carries plotly.js again.
    expect(watchFrontEnds()).toBe(true);
    expect(display(figure())).toBeUndefined();
    expect(plotlySent()).toBe(true);
    hook.kernelInfo();
    expect(plotlySent()).toBe(false);
  });
});

describe("inside tslab", () => {
  it("sends the full mime bundle to the running cell through tslab's display writer", () => {
    const write = vi.fn();
    g.__tslab__ = { exports: {}, require: () => ({}) };
    cache[FAKE_JUPYTER] = { exports: { lastWriteDisplayData: write } } as never;
    expect(jupyterKernel()).toBe("tslab");
    expect(tslabWriter()).toBe(write);
    expect(display(figure())).toBeUndefined();
    expect(write).toHaveBeenCalledTimes(1);
    const [message, update] = write.mock.calls[0] as [{ data: Record<string, unknown>; metadata: unknown; transient: unknown }, boolean];
    expect(Object.keys(message.data).sort()).toEqual([PLOTLY_MIME, "text/html", "text/plain"].sort());
    expect(message.metadata).toEqual({});
    expect(message.transient).toEqual({});
    expect(update).toBe(false);
    void display(summaryTable(quickstartGrid(), quickstartContext()), { displayId: "summary", update: true });
    expect(write.mock.calls[1][0].transient).toEqual({ display_id: "summary" });
    expect(write.mock.calls[1][1]).toBe(true);
  });

  it("reads the writer tslab sets for each cell on the module it found last, and forgets a module no longer loaded", () => {
    const [first, second, third] = [vi.fn(), vi.fn(), vi.fn()];
    const exports: Record<string, unknown> = { lastWriteDisplayData: first };
    cache[FAKE_JUPYTER] = { exports } as never;
    expect(tslabWriter()).toBe(first);
    exports.lastWriteDisplayData = second;
    expect(tslabWriter()).toBe(second);
    delete cache[FAKE_JUPYTER];
    expect(tslabWriter()).toBeUndefined();
    cache[FAKE_JUPYTER] = { exports: { lastWriteDisplayData: third } } as never;
    expect(tslabWriter()).toBe(third);
  });

  it("falls back to tslab's public display.html when the writer is not found", () => {
    const html = vi.fn();
    g.__tslab__ = { exports: {}, require: (id: string) => (id === "tslab" ? { display: { html, text: vi.fn() } } : undefined) };
    expect(tslabWriter()).toBeUndefined();
    const t = summaryTable(quickstartGrid(), quickstartContext());
    expect(display(t)).toBeUndefined();
    expect(html).toHaveBeenCalledWith(t.html);
  });
});

describe("inside Deno's Jupyter kernel", () => {
  it("sends the bundle with Deno.jupyter.display(bundle, { raw: true }) and returns the promise of the send", async () => {
    let sent!: () => void;
    const show = vi.fn(() => new Promise<void>((r) => (sent = r)));
    g.Deno = { jupyter: { display: show } };
    expect(jupyterKernel()).toBe("deno");
    const out = display(figure());
    expect(out).toBeInstanceOf(Promise);
    let done = false;
    void (out as Promise<void>).then(() => (done = true));
    await new Promise((r) => setTimeout(r, 10));
    expect(done).toBe(false); // not before Deno's send resolves
    sent();
    await out;
    expect(done).toBe(true);
    expect(show).toHaveBeenCalledTimes(1);
    const [bundle, options] = show.mock.calls[0] as unknown as [Record<string, unknown>, unknown];
    expect(Object.keys(bundle).sort()).toEqual([PLOTLY_MIME, "text/html", "text/plain"].sort());
    expect(options).toEqual({ raw: true });
  });

  it("a value left as a cell's result is sent as display data, awaited, and the cell's own result is empty", async () => {
    const show = vi.fn(() => Promise.resolve());
    g.Deno = { jupyter: { display: show } };
    const value = figureBundle(figure());
    const shown = value[JUPYTER_DISPLAY]();
    expect(shown).toBeInstanceOf(Promise);
    expect(await shown).toEqual({});
    expect(show).toHaveBeenCalledTimes(1);
    expect(Object.keys((show.mock.calls[0] as unknown as [Record<string, unknown>])[0])).toContain(PLOTLY_MIME);
  });

  it("show()'s promise, left as a cell's last value without await, is one Deno waits for (its display symbol)", async () => {
    const show = vi.fn(() => Promise.resolve());
    g.Deno = { jupyter: { display: show } };
    const all = allShown([display(figure()), display(summaryTable(quickstartGrid(), quickstartContext()))]);
    expect(all).toBeInstanceOf(Promise);
    const bundle = (all as unknown as Record<symbol, () => Promise<unknown>>)[Symbol.for("Jupyter.display")]();
    expect(await bundle).toEqual({});
    expect(show).toHaveBeenCalledTimes(2);
    expect(allShown([undefined, undefined])).toBeUndefined(); // tslab: nothing to wait for
  });

  it("Deno outside a kernel (Deno.jupyter throws) is not a kernel", () => {
    g.Deno = Object.defineProperty({}, "jupyter", {
      get() {
        throw new Error("Deno.jupyter is only available in `deno jupyter`");
      },
    });
    expect(jupyterKernel()).toBe("none");
    expect(display(figure())).toBeDefined();
  });
});
