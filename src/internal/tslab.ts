/**
 * The one adapter for tslab's internals (private: see internal/README.md). The display helper
 * (display/jupyter.ts) reaches tslab only through here, to send whole mime bundles to the running
 * cell of plain tslab (pinned: package.json names exactly 1.0.22, whose internal module this
 * reads). The rbp kernel (src/kernel) no longer uses tslab.
 *
 * What is used:
 * - `tslab/dist/jupyter.js` `lastWriteDisplayData`: the display sender of the running cell.
 *   `display()` finds it with `tslabWriter()` in the CommonJS module cache (where tslab's kernel
 *   loaded it), not by loading tslab itself: code that merely displays must not start a second tslab.
 * - `ZmqServer.prototype.handleKernelInfo` of that module, which `watchFrontEnds` wraps.
 * - `globalThis.__tslab__`: set by tslab's executor while a cell runs (it passes the cell's
 *   `require` that way); `tslabGlobal()` reads it, and `tslabPublic()` is the public
 *   `require("tslab")` seen from the cell.
 */
import { createRequire } from "node:module";

export interface DisplayMessage {
  data: Record<string, unknown>;
  metadata: Record<string, unknown>;
  transient: Record<string, unknown>;
}

export type WriteDisplayData = (message: DisplayMessage, update: boolean) => void;

/** tslab's `__tslab__` global, set while a tslab cell runs; undefined elsewhere. */
export function tslabGlobal(): { require?: (id: string) => unknown } | undefined {
  const g = (globalThis as Record<string, unknown>).__tslab__;
  return typeof g === "object" && g !== null ? (g as { require?: (id: string) => unknown }) : undefined;
}

const TSLAB_JUPYTER = /[\\/]tslab[\\/]dist[\\/]jupyter\.js$/;

/** The exports of tslab's `dist/jupyter.js` as the kernel loaded them (CommonJS module cache), each in turn. */
function* tslabJupyterModules(): Generator<Record<string, unknown>> {
  const cache = createRequire(import.meta.url).cache;
  for (const [file, mod] of Object.entries(cache)) {
    if (TSLAB_JUPYTER.test(file) && typeof mod?.exports === "object" && mod.exports !== null) yield mod.exports as Record<string, unknown>;
  }
}

/** tslab's display sender for the running cell, from the CommonJS module cache (see the module comment). */
export function tslabWriter(): WriteDisplayData | undefined {
  for (const exports of tslabJupyterModules()) {
    if (typeof exports.lastWriteDisplayData === "function") return exports.lastWriteDisplayData as WriteDisplayData;
  }
  return undefined;
}

/** The prototype of the running kernel's `ZmqServer` (its `handleKernelInfo` answers a front end that connects). */
export function tslabServerPrototype(): Record<string | symbol, unknown> | undefined {
  for (const exports of tslabJupyterModules()) {
    const proto = (exports.ZmqServer as { prototype?: Record<string | symbol, unknown> } | undefined)?.prototype;
    if (proto !== undefined && typeof proto.handleKernelInfo === "function") return proto;
  }
  return undefined;
}

/** tslab's public API as the running cell sees it (`require("tslab")`), when there is one. */
export interface TslabPublic {
  display?: { html?: (s: string) => void; text?: (s: string) => void };
}

export function tslabPublic(): TslabPublic | undefined {
  try {
    return tslabGlobal()?.require?.("tslab") as TslabPublic | undefined;
  } catch {
    return undefined;
  }
}
