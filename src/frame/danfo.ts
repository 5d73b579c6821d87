/**
 * Which danfo `toFrame()` builds DataFrames with. danfo is never imported by this package; its
 * `DataFrame` class is found structurally, in this order: one given with `useDataFrames(dfd)`; the
 * class of the last danfo DataFrame read as input (readTable); a danfojs-node or danfojs module
 * already in Node's require cache (what tslab's CommonJS cells load); `globalThis.dfd` (the browser
 * build).
 *
 * What is given and seen belongs to the kernel session, which is this process: `DANFO` is the one
 * `DataFrameSession` of the process, written by `useDataFrames` and readTable (./table.ts), read by
 * outputFrame (./out.ts).
 */
import { createRequire } from "node:module";
import { join } from "node:path";

/** The part of a danfo module this package uses: the DataFrame class. */
export interface DanfoModule {
  DataFrame: DataFrameClass;
}

/** danfo's DataFrame class (danfojs or danfojs-node): `new DataFrame({ col: [...] }, { index, columns })`. */
export type DataFrameClass = new (data: Record<string, unknown[]>, options?: { index?: Array<string | number>; columns?: string[] }) => object;

/** The danfo of a session: the class given (`null`: never danfo), and the class of the last DataFrame read as input. */
export class DataFrameSession {
  #given: DataFrameClass | null | undefined;
  #seen: DataFrameClass | undefined;

  /** See `useDataFrames`. */
  use(danfo: DanfoModule | null | "auto"): void {
    if (danfo === null || danfo === "auto") {
      this.#given = danfo === null ? null : undefined;
      return;
    }
    if (typeof danfo?.DataFrame !== "function") throw new TypeError("useDataFrames: expected a danfo module (an object with a DataFrame class), or null");
    this.#given = danfo.DataFrame;
  }

  /** A DataFrame read as input: its class is danfo's, loaded in the session. */
  remember(frame: object): void {
    const ctor = (frame as { constructor?: unknown }).constructor;
    if (typeof ctor === "function" && ctor !== Object && ctor.name === "DataFrame") this.#seen = ctor as DataFrameClass;
  }

  /** The danfo DataFrame class loaded in this session, if any (never loads danfo itself). */
  dataFrameClass(): DataFrameClass | undefined {
    if (this.#given === null) return undefined;
    if (this.#given !== undefined) return this.#given;
    if (this.#seen !== undefined) return this.#seen;
    const fromCache = fromRequireCache();
    if (fromCache !== undefined) return fromCache;
    const global = (globalThis as { dfd?: { DataFrame?: unknown } }).dfd;
    return typeof global?.DataFrame === "function" ? (global.DataFrame as DataFrameClass) : undefined;
  }
}

/** The session of this process (the kernel's). */
export const DANFO = new DataFrameSession();

/**
 * Tells `toFrame()` which danfo to build DataFrames with; `null`: plain column objects always;
 * `"auto"` (the default): danfo as found in the session.
 *
 * @example
 * import * as dfd from "danfojs-node";
 * rbp.useDataFrames(dfd);
 * const df = p.toFrame(); // a dfd.DataFrame indexed by the input's labels
 */
export function useDataFrames(danfo: DanfoModule | null | "auto"): void {
  DANFO.use(danfo);
}

/** The danfo DataFrame class loaded in this session, if any (never loads danfo itself). */
export function sessionDataFrame(): DataFrameClass | undefined {
  return DANFO.dataFrameClass();
}

/** danfojs-node or danfojs, when a CommonJS require (a tslab cell) has already loaded it from the working folder. */
function fromRequireCache(): DataFrameClass | undefined {
  let require: NodeJS.Require;
  try {
    require = createRequire(join(process.cwd(), "noop.js"));
  } catch {
    return undefined;
  }
  for (const name of ["danfojs-node", "danfojs"]) {
    let path: string;
    try {
      path = require.resolve(name);
    } catch {
      continue;
    }
    const loaded = require.cache[path]?.exports as { DataFrame?: unknown } | undefined;
    if (typeof loaded?.DataFrame === "function") return loaded.DataFrame as DataFrameClass;
  }
  return undefined;
}
