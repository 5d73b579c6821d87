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
 * `jupyterKernel`); the promise ends after the send and a quiet time: until everything
 * rbp-notebook has queued in the kernel, this bundle included, is estimated published, and
 * `DENO_QUIET_MS` more.
 */
export function denoDisplay(bundle: Bundle, options: { displayId?: string; update?: boolean } = {}): Promise<void> {
  const j = denoJupyter()!;
  const opts = { raw: true, ...(options.displayId !== undefined ? { display_id: options.displayId } : {}), ...(options.update ? { update: true } : {}) };
  denoQueueEnd = Math.max(performance.now(), denoQueueEnd) + denoPublishMs(bundle);
  const quietAt = denoQueueEnd + DENO_QUIET_MS;
  const sent = j.display!(bundle, opts).catch((e: unknown) => console.error("rbp-notebook: display failed:", e));
  return sent.then(() => new Promise<void>((r) => setTimeout(r, Math.max(0, quietAt - performance.now()))));
}

/**
 * When (performance.now()) every message rbp-notebook has queued in Deno's kernel is estimated
 * published: each `denoDisplay` adds its own time (`denoPublishMs`), counted from now or from the
 * end of the queue ahead of it, whichever is later.
 */
let denoQueueEnd = 0;

/** A message's time in Deno's queue (`denoPublishMs`): this, plus `DENO_MS_PER_10K_CHARS` per 10,000 characters of its text. */
const DENO_MESSAGE_MS = 1;
const DENO_MS_PER_10K_CHARS = 1;
/**
 * The quiet time after the queue's estimated end, for what the estimate cannot see: a cell's own
 * console.log lines, and the kernel thread's scheduling on a loaded machine (20 ms lost outputs in
 * a CI run at load above 5; docs/kernels.md).
 */
const DENO_QUIET_MS = 100;

/**
 * How long one bundle is given in Deno's queue. Deno 2.9.6 resolves `Deno.jupyter.display` when
 * the message is queued, not when it is sent. Its kernel thread then publishes the queue one message
 * at a time, and it can publish the cell's `status: idle` before the queue is drained. Front ends
 * stop listening to a cell at its idle status, so a message still queued then is lost.
 *
 * Measured on Deno 2.9.6 (docs/kernels.md):
 * - a small message with nothing queued ahead of it was never lost, even with no wait at all, on a
 *   quiet machine and with four CPU-bound processes on two cores;
 * - three 3 MB messages queued ahead of a small one lost it in 12 of 15 cells with no wait, and in 8
 *   of 15 with 20 ms; with 100 ms, never;
 * - 200 `console.log` lines queued ahead lost it in 2 of 30 cells with 25 ms, never with 40 ms:
 *   about 0.2 ms a small message.
 *
 * So each message counts 1 ms, five times a small one's, and 1 ms per 10,000 characters, nine
 * times or more what the three 3 MB messages took; and a small one alone waits only the quiet time.
 * That stays 100 ms: with 20 ms, a clean-clone CI run (the suites in parallel, load above 5) lost
 * small outputs at the end of two walkthrough cells under Deno, which 100 ms has never done.
 */
function denoPublishMs(bundle: Bundle): number {
  let chars = 0;
  for (const v of Object.values(bundle)) if (typeof v === "string") chars += v.length;
  return DENO_MESSAGE_MS + Math.min(2000, Math.round((chars / 10_000) * DENO_MS_PER_10K_CHARS));
}
