/**
 * Sending outputs to the notebook cell that runs the code.
 *
 * `display(value)` takes a mime bundle, a figure, a table or anything with the Deno display symbol,
 * and:
 * - inside tslab, sends the whole mime bundle to the current cell and returns undefined;
 * - inside Deno's Jupyter kernel, sends it with `Deno.jupyter.display(bundle, { raw: true })` and
 *   returns undefined;
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
import { tslabGlobal, tslabPublic, tslabWriter } from "../internal/tslab.js";
import { displayable, toBundle, type Displayable, type DisplayBundle, type MimeBundle } from "./bundle.js";
import type { Figure } from "./figures.js";
import type { HtmlTable } from "./tables.js";

export type Kernel = "tslab" | "deno" | "none";

interface DenoJupyter {
  display?: (obj: unknown, options?: { raw?: boolean; update?: boolean; display_id?: string }) => Promise<void>;
}

function denoJupyter(): DenoJupyter | undefined {
  const deno = (globalThis as Record<string, unknown>).Deno as { jupyter?: DenoJupyter } | undefined;
  if (deno === undefined || deno === null) return undefined;
  try {
    // Deno.jupyter throws outside a Jupyter kernel.
    const j = deno.jupyter;
    return typeof j?.display === "function" ? j : undefined;
  } catch {
    return undefined;
  }
}

/** The kernel this code runs in, as far as display is concerned. */
export function jupyterKernel(): Kernel {
  if (tslabGlobal() !== undefined) return "tslab";
  if (denoJupyter() !== undefined) return "deno";
  return "none";
}

export { tslabWriter };

export interface DisplayOptions {
  /** A display id, to replace this output later with `update: true` (tslab and Deno). */
  displayId?: string;
  /** Replace the output with this display id instead of adding one. */
  update?: boolean;
}

/** The mime types of a bundle as a plain object (no symbol, no undefined entries). */
function plain(bundle: MimeBundle): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(bundle)) if (v !== undefined) out[k] = v;
  return out;
}

/**
 * Shows a bundle, figure or table in the current cell (tslab, Deno); returns undefined when sent,
 * else the bundle (displayable by Deno's symbol) for the caller to show or return.
 */
export function display(value: MimeBundle | Displayable | Figure | HtmlTable, options: DisplayOptions = {}): DisplayBundle | undefined {
  const bundle = plain(toBundle(value)) as MimeBundle;
  const kernel = jupyterKernel();
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
    const j = denoJupyter()!;
    const opts = { raw: true, ...(options.displayId !== undefined ? { display_id: options.displayId } : {}), ...(options.update ? { update: true } : {}) };
    j.display!(bundle, opts).catch((e: unknown) => console.error("rbp-notebook: display failed:", e));
    return undefined;
  }
  return displayable(bundle);
}
