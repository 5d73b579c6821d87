/**
 * Sending outputs to the notebook cell that runs the code.
 *
 * `display(value)` takes a mime bundle, a figure, a table or anything with the Deno display symbol,
 * and:
 * - inside the rbp kernel (src/kernel), sends it to the current cell through the hook the kernel
 *   installs on `globalThis[Symbol.for("rbp.kernel")]` (`RbpKernelHook`: no import of the kernel,
 *   which sits above this folder) and returns undefined;
 * - inside tslab, sends the whole mime bundle to the current cell and returns undefined;
 * - inside Deno's Jupyter kernel, sends it with `Deno.jupyter.display(bundle, { raw: true })` and
 *   returns the promise of that send: `await rbp.display(x)` (and `await p.show()`) in a Deno cell,
 *   so the output is sent before the cell ends. Deno 2.9 reports a cell idle without waiting for
 *   messages still queued, and a front end drops what comes after idle (docs/kernels.md);
 * - elsewhere (a script, a test, a kernel it does not know), returns the bundle, which Deno and any
 *   caller can display themselves (it carries `Symbol.for("Jupyter.display")`).
 *
 * How tslab is recognised: through the one tslab adapter, internal/tslab.ts. tslab runs cell code
 * with `globalThis.__tslab__` set and keeps the sender of the running cell in its module
 * `tslab/dist/jupyter.js` (`lastWriteDisplayData`), which its public `display.html/raw` use. The
 * public API sends one mime type per output, so a figure could not carry both its plotly JSON (for
 * VS Code) and its HTML (for JupyterLab and exports). `display` therefore sends the full bundle
 * through that sender, found in the CommonJS module cache where the kernel loaded it (tslab is a
 * dependency of this package, but displaying must not load a second copy of it). If it is not there
 * (another tslab layout), it falls back to the public `require("tslab").display.html(...)`.
 */
import { tslabGlobal, tslabPublic, tslabServerPrototype, tslabWriter } from "../internal/tslab.js";
import { displayable, resetPlotlySession, toBundle, type Displayable, type DisplayBundle, type MimeBundle } from "./bundle.js";
import { denoDisplay, jupyterKernel, plain, rbpKernel, type RbpKernelHook } from "./kernels.js";
import type { Figure } from "./figures.js";
import type { HtmlTable } from "./tables.js";

export { tslabWriter };
export { jupyterKernel, RBP_KERNEL_HOOK, type Kernel, type RbpKernelHook } from "./kernels.js";

export interface DisplayOptions {
  /** A display id, to replace this output later with `update: true` (rbp, tslab and Deno). */
  displayId?: string;
  /** Replace the output with this display id instead of adding one. */
  update?: boolean;
}

/**
 * Shows a bundle, figure or table in the current cell: in the rbp kernel and tslab at once (returns undefined), in
 * Deno returns the promise of the send (await it), elsewhere returns the bundle (displayable by
 * Deno's symbol) for the caller to show or return.
 *
 * @example
 * await rbp.display(p.impactChart());   // tslab and Deno alike (await is needed in Deno)
 */
export function display(value: MimeBundle | Displayable | Figure | HtmlTable, options: DisplayOptions = {}): DisplayBundle | Promise<void> | undefined {
  const bundle = plain(toBundle(value)) as MimeBundle;
  const kernel = jupyterKernel();
  if (kernel === "rbp") {
    rbpKernel()!.display(bundle, options);
    return undefined;
  }
  if (kernel === "tslab") {
    const write = tslabWriter();
    if (write !== undefined) {
      write({ data: bundle, metadata: {}, transient: options.displayId !== undefined ? { display_id: options.displayId } : {} }, options.update === true);
      return undefined;
    }
    const pub = tslabPublic()?.display;
    if (typeof bundle["text/html"] === "string" && typeof pub?.html === "function") {
      pub.html(bundle["text/html"]);
      return undefined;
    }
    if (typeof pub?.text === "function") {
      pub.text(bundle["text/plain"]);
      return undefined;
    }
  } else if (kernel === "deno") {
    return denoDisplay(bundle, options);
  }
  return displayable(bundle);
}

/**
 * Waits for every promise `display` returned (Deno), as one promise; undefined when there is none
 * (the rbp kernel, tslab, outside a kernel). What `show()` returns.
 */
export function allShown(results: ReadonlyArray<unknown>): Promise<void> | undefined {
  const pending = results.filter((r): r is Promise<void> => typeof (r as Promise<void> | undefined)?.then === "function");
  return pending.length > 0 ? shownPromise(Promise.all(pending).then(() => undefined)) : undefined;
}

/**
 * A promise of outputs sent that Deno, given it as a cell's last value (`p.show()` without
 * await), waits for and shows as nothing, instead of printing "Promise { <pending> }" and ending
 * the cell before the outputs are sent.
 */
function shownPromise(p: Promise<void>): Promise<void> {
  // defineProperty returns p itself, which the caller gets below
  void Object.defineProperty(p, Symbol.for("Jupyter.display"), { value: () => p.then(() => ({})), enumerable: false });
  return p;
}

/**
 * A page reload needs no remedy in tslab and the rbp kernel: a front end that connects, or
 * reconnects after a reload, asks the kernel for its `kernel_info`; from then on the page may not
 * hold the output that carried plotly.js, so the session forgets it was sent and the next chart
 * carries it again. Installed once, through the rbp kernel's hook (`onKernelInfo`) or on tslab's
 * `ZmqServer` (found by the tslab adapter, internal/tslab.ts); returns whether it is installed.
 */
export function watchFrontEnds(): boolean {
  const rbp = rbpKernel();
  if (rbp !== undefined) {
    const marked = rbp as RbpKernelHook & { [WATCHING]?: boolean };
    if (marked[WATCHING] !== true) {
      rbp.onKernelInfo(resetPlotlySession);
      Object.defineProperty(marked, WATCHING, { value: true, enumerable: false });
    }
    return true;
  }
  if (tslabGlobal() === undefined) return false;
  const proto = tslabServerPrototype();
  if (proto === undefined) return false;
  if (proto[WATCHING] === true) return true;
  const original = proto.handleKernelInfo as (...args: unknown[]) => unknown;
  proto.handleKernelInfo = function (this: unknown, ...args: unknown[]): unknown {
    resetPlotlySession();
    return original.apply(this, args);
  };
  proto[WATCHING] = true;
  return true;
}

const WATCHING = Symbol.for("rbp-notebook.watchFrontEnds");

watchFrontEnds();
