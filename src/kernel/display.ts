/**
 * What a cell shows, on the kernel's side:
 *
 * - `resultBundle(value)`: a cell's last value as the data of its `execute_result`: the value's own
 *   mime bundle when it implements `Symbol.for("Jupyter.display")` (Deno's protocol: a method
 *   returning a bundle, or a promise of one), else `util.inspect` text without colours; nothing for
 *   `undefined`. text/plain is always there (the bundle's, else the value inspected).
 * - `DisplayHook`: the hook the kernel installs on `globalThis[Symbol.for("rbp.kernel")]`
 *   (`RbpKernelHook`, src/display/jupyter.ts), through which `rbp.display(...)`, `p.show()` and the
 *   progress line reach the running cell (between cells, the last one: where a late display of a
 *   timer or a promise belongs, as ipykernel does), and through which the helper hears of front ends
 *   that connect (`onKernelInfo`: the plotly session is reset, `watchFrontEnds`).
 */
import { inspect } from "node:util";
import type { RbpKernelHook } from "../display/index.js";
import type { CellOutput, MimeData } from "./contract.js";

const DISPLAY = Symbol.for("Jupyter.display");
/** Where the hook lives (RBP_KERNEL_HOOK of src/display, named here so the kernel loads no display code). */
export const HOOK_KEY = Symbol.for("rbp.kernel");

/** How a value is inspected for text/plain: as console.log shows it, without ANSI colours (front ends show them raw). */
export const INSPECT_OPTIONS = { colors: false } as const;

function hasDisplay(value: unknown): value is { [DISPLAY](): unknown } {
  return (typeof value === "object" || typeof value === "function") && value !== null && typeof (value as Record<symbol, unknown>)[DISPLAY] === "function";
}

/** A mime type as the protocol's schema takes it (msgspec_v5 mime_data). */
const MIME_TYPE = /^[\w\-+.]+\/[\w\-+.]+$/;

/** The defined mime entries of a bundle (keys that are mime types), text/plain added when missing. */
export function mimeData(bundle: unknown, value: unknown): MimeData {
  const data: MimeData = {};
  if (typeof bundle === "object" && bundle !== null) {
    for (const [k, v] of Object.entries(bundle)) if (v !== undefined && MIME_TYPE.test(k)) data[k] = v;
  }
  if (typeof data["text/plain"] !== "string") data["text/plain"] = inspect(value, INSPECT_OPTIONS);
  return data;
}

/**
 * The execute_result data of a cell's last value; undefined shows nothing. A display method that
 * throws or rejects is the cell's error (the caller reports it).
 *
 * @example
 * await resultBundle(1 + 2); // { "text/plain": "3" }
 */
export async function resultBundle(value: unknown): Promise<MimeData | undefined> {
  if (value === undefined) return undefined;
  if (!hasDisplay(value)) return { "text/plain": inspect(value, INSPECT_OPTIONS) };
  const bundle: unknown = await value[DISPLAY]();
  // An empty bundle ({}) is "shown already" (Deno's convention, and the helper's promise of outputs sent).
  if (typeof bundle === "object" && bundle !== null && Object.keys(bundle).length === 0) return undefined;
  return mimeData(bundle, value);
}

/** The kernel's display hook (one per kernel process). */
export class DisplayHook implements RbpKernelHook {
  #output: CellOutput | undefined;
  readonly #listeners: Array<() => void> = [];

  /** The cell outputs now go to (kept after the cell ends, for late displays). */
  bind(output: CellOutput): void {
    this.#output = output;
  }

  display(bundle: Record<string, unknown>, options: { displayId?: string; update?: boolean } = {}): void {
    const output = this.#output;
    if (output === undefined) return;
    const data = mimeData(bundle, bundle);
    output.display(data, {
      ...(options.displayId !== undefined ? { displayId: options.displayId } : {}),
      ...(options.update === true ? { update: true } : {}),
    });
  }

  clearOutput(wait = false): void {
    this.#output?.clearOutput(wait);
  }

  onKernelInfo(listener: () => void): void {
    this.#listeners.push(listener);
  }

  /** Tells the listeners a front end asked for kernel_info. A listener that throws is skipped. */
  kernelInfo(): void {
    for (const l of this.#listeners) {
      try {
        l();
      } catch {
        // a listener's failure is not the front end's
      }
    }
  }

  /** Installs the hook on globalThis (the helper finds it there). */
  install(target: object = globalThis): void {
    Object.defineProperty(target, HOOK_KEY, { value: this, configurable: true, enumerable: false, writable: false });
  }
}
