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
/** The CommonJS module cache (one object for the process). */
const moduleCache = createRequire(import.meta.url).cache;

/** The exports of tslab's `dist/jupyter.js` as the kernel loaded them (CommonJS module cache), each in turn. */
function* tslabJupyterModules(): Generator<Record<string, unknown>> {
  for (const [, exports] of tslabJupyterEntries()) yield exports;
}

function* tslabJupyterEntries(): Generator<[string, Record<string, unknown>]> {
  for (const [file, mod] of Object.entries(moduleCache)) {
    if (TSLAB_JUPYTER.test(file) && typeof mod?.exports === "object" && mod.exports !== null) yield [file, mod.exports as Record<string, unknown>];
  }
}

/** Where `tslabWriter` found its sender last: looked up first (a scan of the module cache is 0.02-0.1 ms a line in a tslab kernel). */
let writerModule: { file: string; exports: Record<string, unknown> } | undefined;

/**
 * tslab's display sender for the running cell, from the CommonJS module cache (see the module
 * comment). tslab sets it for each cell on the same exports: the module it was found in last is
 * read first, while it is still in the cache.
 */
export function tslabWriter(): WriteDisplayData | undefined {
  if (writerModule !== undefined) {
    const { file, exports } = writerModule;
    const write = exports.lastWriteDisplayData;
    if (moduleCache[file]?.exports === exports && typeof write === "function") return write as WriteDisplayData;
    writerModule = undefined;
  }
  for (const [file, exports] of tslabJupyterEntries()) {
    if (typeof exports.lastWriteDisplayData === "function") {
      writerModule = { file, exports };
      return exports.lastWriteDisplayData as WriteDisplayData;
    }
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
