/**
 * Which Jupyter kernel this code runs in, as far as display is concerned, and Deno's sender. Read by
 * ./jupyter.ts (`display`) and ./bundle.ts (a cell's value in Deno), so that neither has to tell the
 * other through a hook.
 *
 * - the rbp kernel (src/kernel) installs `globalThis[Symbol.for("rbp.kernel")]` (`RbpKernelHook`:
 *   no import of the kernel, which sits above this folder);
 * - tslab is recognised through the one tslab adapter, internal/tslab.ts;
 * - Deno's Jupyter kernel has `Deno.jupyter.display`.
 */
import { tslabGlobal } from "../internal/tslab.js";

/** A mime bundle as this file sees it (./bundle.ts has its type; not imported, so that bundle.ts can import this file). */
type Bundle = Record<string, unknown>;

export type Kernel = "rbp" | "tslab" | "deno" | "none";

/** Where the rbp kernel installs its hook (the key is shared by every copy of this module). */
export const RBP_KERNEL_HOOK: unique symbol = Symbol.for("rbp.kernel");

/**
 * What the rbp kernel installs on `globalThis[RBP_KERNEL_HOOK]` while it runs: the display of the
 * running cell (or, between cells, of the last one), and a way to hear of front ends that
 * (re)connect.
 */
export interface RbpKernelHook {
  /** A display_data of the cell (update_display_data with `update` and a display id). */
  display(bundle: Record<string, unknown>, options?: { displayId?: string; update?: boolean }): void;
  /** A clear_output of the cell (with `wait`, when the next output comes). */
  clearOutput(wait?: boolean): void;
  /** Calls `listener` on every kernel_info_request (a front end that connects or reloads). */
  onKernelInfo(listener: () => void): void;
}

export function rbpKernel(): RbpKernelHook | undefined {
  const hook = (globalThis as Record<symbol, unknown>)[RBP_KERNEL_HOOK] as RbpKernelHook | undefined;
  return typeof hook === "object" && hook !== null && typeof hook.display === "function" ? hook : undefined;
}

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
  if (rbpKernel() !== undefined) return "rbp";
  if (tslabGlobal() !== undefined) return "tslab";
  if (denoJupyter() !== undefined) return "deno";
  return "none";
}

/** The mime types of a bundle as a plain object (no symbol, no undefined entries). */
export function plain(bundle: Bundle): Bundle {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(bundle)) if (v !== undefined) out[k] = v;
  return out;
}

/**
 * Sends a plain bundle with `Deno.jupyter.display(bundle, { raw: true })` (in Deno's kernel: see
 * `jupyterKernel`); the promise ends after the send and a short quiet time (`denoSettleMs`).
 */
export function denoDisplay(bundle: Bundle, options: { displayId?: string; update?: boolean } = {}): Promise<void> {
  const j = denoJupyter()!;
  const opts = { raw: true, ...(options.displayId !== undefined ? { display_id: options.displayId } : {}), ...(options.update ? { update: true } : {}) };
  const sent = j.display!(bundle, opts).catch((e: unknown) => console.error("rbp-notebook: display failed:", e));
  return sent.then(() => new Promise<void>((r) => setTimeout(r, denoSettleMs(bundle))));
}

/**
 * How long a Deno display waits after `Deno.jupyter.display` resolves. Deno 2.9.6 resolves it when
 * the message is queued, not when it is sent, and can publish the cell's idle status before the
 * queue is drained (measured with the walkthroughs under nbconvert: displays of a cell that ends
 * right after them arrived after idle, and were dropped). A short quiet time, longer for a large
 * bundle, lets the queue drain before the cell ends (docs/kernels.md).
 */
function denoSettleMs(bundle: Bundle): number {
  const html = typeof bundle["text/html"] === "string" ? bundle["text/html"].length : 0;
  return 100 + Math.min(2000, Math.round(html / 10_000));
}
